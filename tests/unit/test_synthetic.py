"""The synthetic QA factory's offline tier (``medgraph.synthetic.factory``): which sentence a chunk
is asked about, in every language; the adversarial items; de-duplication, cap and split; and that
its files are what the answer benchmark reads and its aspect questions what the answer stage gates."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from medgraph.eval.answers import read_answer_queries
from medgraph.generate.aspects import asked_aspects
from medgraph.graph.cooccurrence import Connections
from medgraph.schemas import Chunk, Entity, Mention
from medgraph.synthetic.factory import (
    ChunkFacts,
    SynthItem,
    SynthSettings,
    adversarial_items,
    chunk_items,
    entity_name,
    finalise,
    summary,
)

METFORMIN = Entity("D008687", "Metformin", "Drug", names={"en": ["Metformin"], "zh": ["二甲双胍"]})  # no German name
LACTIC = Entity("D000140", "Acidosis, Lactic", "Disease", names={"de": ["Laktatazidose"], "zh": ["乳酸性酸中毒"]})
NEPHRO = Entity("D007674", "Kidney Diseases", "Disease", names={"de": ["Nierenkrankheiten"], "zh": ["肾疾病"]})
HUMANS = Entity("D006801", "Humans", "LivingBeing", names={"de": ["Menschen"], "zh": ["人类"]})
ARM = Entity("D001132", "Arm", "Anatomy", names={"de": ["Arm"], "zh": ["臂"]})
GHOST = Entity("D000001", "Ghostamine", "Drug", names={"de": ["Ghostamin"], "zh": ["幽灵胺"]})
NO_ZH = Entity("D000002", "Nozhamine", "Drug", names={"de": ["Nozhamin"]})
ENTITIES = {e.mesh_id: e for e in (METFORMIN, LACTIC, NEPHRO, HUMANS, ARM)}
SETTINGS = SynthSettings(min_chunks=1, max_chunk_share=0.5, finding_max_chunks=3)


def _chunk(chunk_id: str, text: str, section: str = "Results", doc_id: str = "PMID:1", page: int | None = 3) -> Chunk:
    return Chunk(chunk_id, doc_id, 0, text, [section], "p", text, 50, "en", page=page)


def _mentions(text: str, *pairs: tuple[str, str]) -> list[Mention]:
    lower = text.lower()
    return [Mention(lower.index(surface.lower()), lower.index(surface.lower()) + len(surface), surface, mesh_id)
            for surface, mesh_id in pairs]


def test_a_finding_with_two_specific_entities_becomes_a_relation_question_in_every_language() -> None:
    text = ("To evaluate the outcome, we followed 200 humans. "
            "Lactic acidosis was more frequent in patients with kidney disease in all humans studied.")
    chunk = _chunk("c1", text)
    mentions = _mentions(text, ("lactic acidosis", LACTIC.mesh_id), ("kidney disease", NEPHRO.mesh_id),
                         ("humans", HUMANS.mesh_id))
    counts = {LACTIC.mesh_id: 2, NEPHRO.mesh_id: 3, HUMANS.mesh_id: 10}
    items, _ = chunk_items(chunk, mentions, ENTITIES, counts, n_chunks=10, settings=SETTINGS)
    assert [i.language for i in items] == ["en", "de", "zh"]
    assert {i.item_id for i in items} == {items[0].item_id} and {i.kind for i in items} == {"relation"}
    en, de, zh = items
    assert "Lactic Acidosis" in en.text and "Kidney Diseases" in en.text  # "Acidosis, Lactic" read uninverted
    assert "Laktatazidose" in de.text and "Nierenkrankheiten" in de.text
    assert "乳酸性酸中毒" in zh.text and "肾疾病" in zh.text
    assert en.answer.startswith("Lactic acidosis was more frequent")  # the finding, not the aim sentence
    assert (en.chunk_id, en.doc_id, en.page, en.section) == ("c1", "PMID:1", 3, "Results")
    assert en.entities == (LACTIC.mesh_id, NEPHRO.mesh_id)  # "Humans" is in half the corpus: not specific


def test_a_drugs_adverse_effect_is_asked_as_the_aspect_the_answer_stage_gates() -> None:
    text = "Gastrointestinal intolerance and diarrhoea were the most common adverse effects of metformin."
    mentions = _mentions(text, ("metformin", METFORMIN.mesh_id))
    items, facts = chunk_items(_chunk("c2", text), mentions, ENTITIES, {METFORMIN.mesh_id: 1}, 10, SETTINGS)
    assert {i.kind for i in items} == {"adverse_effects"}
    for item in items:
        assert asked_aspects(item.text) == ["adverse_effects"], item.text
    assert next(i for i in items if i.language == "de").text.count("Metformin") == 1  # German: the INN stands in
    assert facts.stated == {"adverse_effects": [METFORMIN.mesh_id]}


def test_references_questions_aims_and_unnamed_entities_give_no_item() -> None:
    text = "Lactic acidosis was more frequent in patients with kidney disease in this cohort."
    mentions = _mentions(text, ("lactic acidosis", LACTIC.mesh_id), ("kidney disease", NEPHRO.mesh_id))
    counts = {LACTIC.mesh_id: 1, NEPHRO.mesh_id: 1}
    assert chunk_items(_chunk("r", text, section="References"), mentions, ENTITIES, counts, 10, SETTINGS)[0] == []
    aim = "To evaluate whether lactic acidosis is more frequent in patients with kidney disease."
    assert chunk_items(_chunk("a", aim), _mentions(aim, ("lactic acidosis", LACTIC.mesh_id),
                                                     ("kidney disease", NEPHRO.mesh_id)), ENTITIES, counts, 10,
                       SETTINGS)[0] == []
    no_zh = {NO_ZH.mesh_id: NO_ZH}
    other = "Nozhamine lowered the blood pressure of every patient in the trial."
    assert chunk_items(_chunk("n", other), _mentions(other, ("Nozhamine", NO_ZH.mesh_id)), no_zh,
                       {NO_ZH.mesh_id: 1}, 10, SETTINGS)[0] == []  # no Chinese name: no twin set
    generic = "Humans were followed for ten years in the trial of this cohort."
    assert chunk_items(_chunk("g", generic), _mentions(generic, ("Humans", HUMANS.mesh_id)), ENTITIES,
                       {HUMANS.mesh_id: 5}, 10, SETTINGS)[0] == []  # one entity in five chunks: too many answers


def test_entity_names_per_language() -> None:
    assert entity_name(LACTIC, "en") == "Lactic Acidosis"
    assert entity_name(METFORMIN, "de") == "Metformin"  # a drug's INN stands in for German
    assert entity_name(METFORMIN, "zh") == "二甲双胍"
    assert entity_name(LACTIC.__class__("D1", "Foo", "Disease"), "zh") is None


def _connections(chunk_entities: dict[str, set[str]]) -> Connections:
    """The co-occurrences of a corpus given as chunk → the entities it mentions."""
    entities, chunks = sorted(set().union(*chunk_entities.values())), sorted(chunk_entities)
    rows = [entities.index(e) for c in chunks for e in chunk_entities[c]]
    cols = [chunks.index(c) for c in chunks for _ in chunk_entities[c]]
    incidence = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(entities), len(chunks)))
    return Connections(incidence, entities, chunks)


def test_adversarial_items_cannot_be_answered_from_the_corpus() -> None:
    chunk_entities = {"c1": {LACTIC.mesh_id, NEPHRO.mesh_id}, "c2": {METFORMIN.mesh_id, ARM.mesh_id}}
    connections = _connections(chunk_entities)
    facts = [ChunkFacts("c1"), ChunkFacts("c2")]  # no chunk states an adverse effect of metformin
    items = adversarial_items(connections, ENTITIES, [GHOST, METFORMIN, NO_ZH], facts, count=10, settings=SETTINGS)
    kinds = {i.kind for i in items}
    assert kinds == {"false_premise", "absent_entity", "unstated_aspect"}
    assert not any(i.answerable for i in items) and all(not i.doc_id for i in items)
    for item in items:
        if item.kind == "false_premise":  # a cause and an effect no chunk names together
            a, b = (ENTITIES[i] for i in item.entities)
            assert not any({a.mesh_id, b.mesh_id} <= ids for ids in chunk_entities.values())
            assert b.category in ("Disease", "Symptom") and a.category != "Anatomy"
        if item.kind == "absent_entity":
            assert item.entities == (GHOST.mesh_id,)  # in the vocabulary, not in the corpus; NO_ZH has no Chinese name
        if item.kind == "unstated_aspect":
            assert item.entities == (METFORMIN.mesh_id,) and asked_aspects(item.text) == ["adverse_effects"]
    stated = [ChunkFacts("c2", {"adverse_effects": [METFORMIN.mesh_id]})]
    again = adversarial_items(connections, ENTITIES, [], stated, count=10, settings=SETTINGS)
    assert "unstated_aspect" not in {i.kind for i in again}


def _item(item_id: str, doc: str, text: str, answerable: bool = True) -> list[SynthItem]:
    return [SynthItem(item_id, code, f"{text} ({code})", "relation" if answerable else "false_premise", answerable,
                      ("D1",), doc, f"{item_id}-c" if doc else "", 1 if doc else None) for code in ("en", "de", "zh")]


def test_finalise_dedupes_caps_and_splits_by_document(tmp_path: Path) -> None:
    answerable = [q for n in range(40) for q in _item(f"a{n}", f"doc{n % 10}", f"question {n}")]
    answerable += _item("dup", "doc3", "question 7")  # the same question as a7 (its English twin): dropped
    adversarial = [q for n in range(30) for q in _item(f"x{n}", "", f"why {n}", answerable=False)]
    final = finalise(answerable, adversarial, SynthSettings(adversarial_share=0.2, test_share=0.5))
    assert "dup" not in {i.item_id for i in final}
    n_adv = len({i.item_id for i in final if not i.answerable})
    assert n_adv == 10  # 20% of the set: 10 beside 40
    split_of_doc: dict[str, set[str]] = {}
    for item in final:
        if item.doc_id:
            split_of_doc.setdefault(item.doc_id, set()).add(item.split)
    assert all(len(s) == 1 for s in split_of_doc.values())  # a document's items all in one split
    assert {s for v in split_of_doc.values() for s in v} == {"dev", "test"}
    twins: dict[str, set[str]] = {}
    for item in final:
        twins.setdefault(item.item_id, set()).add(item.split)
    assert all(len(s) == 1 for s in twins.values())
    counts = summary(final)
    assert counts["dev"]["by_language"]["en"] == counts["dev"]["by_language"]["zh"]
    assert 0.19 <= counts["adversarial_share"] <= 0.21
    path = tmp_path / "synthetic.dev.jsonl"
    path.write_text("".join(json.dumps(i.record(), ensure_ascii=False) + "\n" for i in final if i.split == "dev"))
    queries = read_answer_queries(path)
    assert len(queries) == counts["dev"]["questions"]
    first = next(q for q in queries if q.answerable)
    assert first.gold_docs and first.pages == (1,)
