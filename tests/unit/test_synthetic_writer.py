"""The synthetic QA factory's model tier (``medgraph.synthetic.writer``): a DSPy program writes the
question; a reply that is not one question in the asked language naming the entities, or that copies
its answer, is not used, and the factory keeps the template's question."""

from __future__ import annotations

import pytest
from dspy.utils import DummyLM

from medgraph.schemas import Chunk, Entity, Mention
from medgraph.synthetic.factory import SynthSettings, chunk_items
from medgraph.synthetic.writer import ModelQuestions, checked_question

SENTENCE = "Lactic acidosis was more frequent in patients with kidney disease in this cohort."


@pytest.mark.parametrize(("reply", "language", "ok"), [
    ("Is lactic acidosis more frequent in kidney disease?", "en", True),
    ("Tritt eine Laktatazidose bei Nierenkrankheiten häufiger auf?", "de", True),
    ("肾疾病患者更容易发生乳酸性酸中毒吗？", "zh", True),
    ("Is lactic acidosis more frequent in kidney disease?", "de", False),  # not the asked language
    ("What was studied in this cohort?", "en", False),  # names no entity
    ("Lactic acidosis was more frequent in patients with kidney disease in this cohort?", "en", False),  # the answer
    ("Lactic acidosis. Is it more frequent in kidney disease? And why?", "en", False),  # two questions
    ("Lactic acidosis is more frequent in kidney disease.", "en", False),  # no question
])
def test_a_reply_is_used_only_when_it_is_one_question_of_the_kind_asked(reply: str, language: str, ok: bool) -> None:
    names = {"en": ["Lactic Acidosis", "Kidney Diseases"], "de": ["Laktatazidose", "Nierenkrankheiten"],
             "zh": ["乳酸性酸中毒", "肾疾病"]}[language]
    assert (checked_question(reply, names, SENTENCE, language) is not None) is ok


def test_the_program_writes_the_question_and_a_bad_reply_is_counted() -> None:
    lm = DummyLM([{"question": "Is lactic acidosis more frequent in kidney disease?"}, {"question": "No idea."}])
    writer = ModelQuestions(lm)
    names = ["Lactic Acidosis", "Kidney Diseases"]
    assert writer("relation", names, SENTENCE, SENTENCE, "en") == "Is lactic acidosis more frequent in kidney disease?"
    assert writer("relation", names, SENTENCE, SENTENCE, "en") is None
    assert (writer.written, writer.rejected) == (1, 1)
    prompt = lm.history[0]["messages"][-1]["content"]
    assert "Kidney Diseases" in prompt and "English" in prompt and SENTENCE in prompt


def test_the_factory_keeps_the_template_where_the_model_wrote_nothing_usable() -> None:
    lactic = Entity("D000140", "Acidosis, Lactic", "Disease", names={"de": ["Laktatazidose"], "zh": ["乳酸性酸中毒"]})
    kidney = Entity("D007674", "Kidney Diseases", "Disease", names={"de": ["Nierenkrankheiten"], "zh": ["肾疾病"]})
    lower = SENTENCE.lower()
    mentions = [Mention(lower.index(s), lower.index(s) + len(s), s, i)
                for s, i in (("lactic acidosis", lactic.mesh_id), ("kidney disease", kidney.mesh_id))]
    chunk = Chunk("c1", "PMID:1", 0, SENTENCE, ["Results"], "p", SENTENCE, 20, "en")

    def writer(kind: str, names: object, sentence: str, passage: str, language: str) -> str | None:
        return "Tritt eine Laktatazidose bei Nierenkrankheiten häufiger auf?" if language == "de" else None

    items, _ = chunk_items(chunk, mentions, {lactic.mesh_id: lactic, kidney.mesh_id: kidney},
                           {lactic.mesh_id: 1, kidney.mesh_id: 1}, 10, SynthSettings(min_chunks=1), writer)
    by_language = {i.language: i for i in items}
    assert by_language["de"].method == "model" and by_language["de"].text.startswith("Tritt eine Laktatazidose")
    assert by_language["en"].method == by_language["zh"].method == "template"
    assert "Lactic Acidosis" in by_language["en"].text
