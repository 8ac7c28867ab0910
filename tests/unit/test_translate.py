"""German questions searched in English by their words' loan-word spellings (``translate`` path).

The spellings are the offline bridge for German medical words the linker does not link
(``Fasziitis``, ``nekrotisierende``): without them a German question reaches an English-only
document only through the dense path. English and Chinese questions are translated as before.
"""

from __future__ import annotations

import pytest

from medgraph.eval.retrieval import EvalIndex
from medgraph.lang.de.glossary import english_spellings
from medgraph.retrieve.query import QueryAnalyzer
from medgraph.retrieve.retriever import Retriever
from medgraph.retrieve.translate import OntologyTranslator
from medgraph.retrieve.types import QueryAnalysis
from medgraph.schemas import Entity, Mention
from tests.helpers import FIXTURES

MI = Entity("D009203", "Myocardial Infarction", "disease", names={"en": ["Heart Attack", "Infarction, Myocardial"],
                                                       "de": ["Herzinfarkt"], "zh": ["心肌梗死"]})


def _translator(respell: bool = True) -> OntologyTranslator:
    return OntologyTranslator({MI.mesh_id: MI}.get, names_per_entity=2, respell=respell)


@pytest.mark.parametrize(("word", "english"), [
    ("Fasziitis", "fasciitis"),  # z before i -> c
    ("nekrotisierende", "necrotizing"),  # -isierend(e) -> -izing, k -> c
    ("hepatozellulären", "hepatocellular"),  # -är(en) -> -ar
    ("Somatisierung", "somatization"),  # -isierung -> -ization
    ("Identifizierung", "identification"),  # -fizierung -> -fication
    ("Aufnahmekapazität", "aufnahmecapacity"),  # -ität -> -ity (the compound stays whole)
    ("invasiven", "invasive"),  # -iv(en) -> -ive
    ("Diagnostik", "diagnostics"),  # -ik -> -ics
    ("Sklerose", "sclerosis"),  # the linker's loan-word rules
    ("Patienten", "patient"),  # inflection
])
def test_english_spellings_of_german_loan_words(word: str, english: str) -> None:
    spellings = english_spellings(word)
    assert english in spellings
    assert word.lower() not in spellings  # the word itself stays in the text, once


@pytest.mark.parametrize("word", ["die", "mit", "eine", "bei", "Arm", "80"])
def test_function_and_short_words_get_no_spellings(word: str) -> None:
    assert english_spellings(word) == []


def _alternatives(translation: object) -> list[str]:
    return [alt for group in translation.groups for alt, _ in group]  # type: ignore[attr-defined]


def test_german_question_without_links_is_respelled_for_english() -> None:
    question = QueryAnalysis("Nekrotisierende Fasziitis: eine Indikation für Sauerstoff?", "de")
    en = _translator().translate(question, "en")
    assert en is not None
    words = _alternatives(en)
    assert "necrotizing" in words and "fasciitis" in words and "indication" in words
    assert "Fasziitis" in words  # the German words stay (some are English words too: Pollen, Diabetes)
    assert en.text == "Nekrotisierende Fasziitis Indikation Sauerstoff"  # function words dropped
    assert _translator(respell=False).translate(question, "en") is None  # before: nothing linked, nothing
    assert _translator().translate(question, "zh") is None  # only English gets the spellings


def test_linked_mention_substituted_and_residue_respelled() -> None:
    text = "Ist die Fasziitis nach Herzinfarkt häufiger?"
    start = text.index("Herzinfarkt")
    question = QueryAnalysis(text, "de", (Mention(start, start + 11, "Herzinfarkt", MI.mesh_id),))
    en = _translator().translate(question, "en")
    assert en is not None
    assert (("Myocardial Infarction", 0.5), ("Heart Attack", 0.5)) in en.groups and "Herzinfarkt" not in en.text
    assert "fasciitis" in _alternatives(en)
    zh = _translator().translate(question, "zh")
    assert zh is not None and zh.text == "Ist die Fasziitis nach 心肌梗死 häufiger"  # no English spellings
    assert (("心肌梗死", 1.0),) in zh.groups


def test_english_and_chinese_questions_are_not_respelled() -> None:
    text = "Is sclerosis after heart attack common?"
    start = text.index("heart attack")
    question = QueryAnalysis(text, "en", (Mention(start, start + 12, "heart attack", MI.mesh_id),))
    de = _translator().translate(question, "de")
    assert de is not None and de.text == "Is sclerosis after Herzinfarkt common"
    assert all(w == 1.0 for group in de.groups for _, w in group)  # words as written, one weight each
    zh = _translator().translate(question, "zh")
    assert zh is not None and zh.text == "Is sclerosis after 心肌梗死 common"
    assert _translator().translate(QueryAnalysis("Is sclerosis common?", "en"), "de") is None
    zh = "心肌梗死后HER2阳性患者"
    zh_question = QueryAnalysis(zh, "zh", (Mention(0, 4, "心肌梗死", MI.mesh_id),))
    en = _translator().translate(zh_question, "en")  # no glossary here: the Chinese words have no gloss
    assert en is not None and en.text == "Myocardial Infarction HER2"
    assert _alternatives(en) == ["Myocardial Infarction", "Heart Attack", "HER2"]


CORPUS = [
    {"doc_id": "nf", "title": "", "language": "en",
     "text": "Necrotizing fasciitis of the perineum was treated by surgical debridement and antibiotics."},
    {"doc_id": "lead", "title": "", "language": "en",
     "text": "Blood lead levels in workers of a battery plant exceeded the limits for occupational exposure."},
    {"doc_id": "fever", "title": "", "language": "en",
     "text": "Fever after vaccination resolved within two days in most children."},
]


SOURCES = [{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")},
           {"kind": "multilingual_terms", "path": "pkg:seed_terms.tsv"}]


@pytest.fixture(scope="module")
def index(tiny_index: tuple[EvalIndex, object]) -> tuple[EvalIndex, object]:
    return tiny_index


def test_unlinked_german_question_reaches_english_evidence_by_spelling(index: tuple[EvalIndex, object]) -> None:
    idx, cfg = index
    question = "Wie wird eine nekrotisierende Fasziitis behandelt?"
    analyzer = QueryAnalyzer(idx.extractor, 0)
    analysis = analyzer.analyze(question, "de")
    assert not analysis.entity_ids  # the fixture vocabulary has no fasciitis: no MeSH bridge
    paths = ("dense", "sparse", "translate")
    retriever = Retriever(cfg.retrieval.model_copy(update={"paths": paths}), idx.graph, idx.vectors, idx.embedder)
    result = retriever.retrieve(analysis)
    hits = [idx.chunk_doc[c.chunk_id] for c in result.per_path["translate:en"]]
    assert hits[0] == "nf"
    assert [idx.chunk_doc[c.chunk_id] for c in result.candidates][0] == "nf"

    analyzer.translator.respell = False  # as before: the German words alone match no English chunk
    plain = retriever.retrieve(analyzer.analyze(question, "de"))
    assert "translate:en" not in plain.per_path and not plain.per_path["sparse"]
