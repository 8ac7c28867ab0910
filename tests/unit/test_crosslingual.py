"""Cross-lingual retrieval through MeSH: German and Chinese questions reach English-only evidence.

The fact ("dual antiplatelet therapy after myocardial infarction") exists only in an English
document. The dense embedder here is the hashing one (not multilingual), so the only bridge
between the languages is the shared MeSH ID (D009203): the ``translate`` path (ontology term
substitution) and the ``ppr`` path (graph seeds). Without them the German and Chinese questions
do not reach the document.
"""

from __future__ import annotations

import pytest

from medgraph.eval.retrieval import EvalIndex
from medgraph.generate.extractive import ExtractiveComposer
from medgraph.retrieve.query import QueryAnalyzer
from medgraph.retrieve.rerank import FeatureReranker
from medgraph.retrieve.retriever import Retriever
from medgraph.retrieve.translate import OntologyTranslator
from tests.helpers import FIXTURES

CORPUS = [
    {"doc_id": "mi", "title": "", "language": "en",
     "text": "After myocardial infarction, patients receive dual antiplatelet therapy for twelve months."},
    {"doc_id": "lead", "title": "", "language": "en",
     "text": "Blood lead levels in workers of a battery plant exceeded the limits for occupational exposure."},
    {"doc_id": "fever", "title": "", "language": "en",
     "text": "Fever after vaccination resolved within two days in most children."},
    {"doc_id": "schule", "title": "", "language": "de",
     "text": "Die Behandlung von Kopfschmerzen bei Kindern in der Schule wurde untersucht."},
]
QUESTIONS = {"de": "Welche Behandlung bekommen Patienten nach einem Herzinfarkt?", "zh": "心肌梗死后患者接受什么治疗？"}


SOURCES = [{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")},
           {"kind": "multilingual_terms", "path": "pkg:seed_terms.tsv"}]


@pytest.fixture(scope="module")
def index(tiny_index: tuple[EvalIndex, object]) -> tuple[EvalIndex, object]:
    return tiny_index


def _docs(idx: EvalIndex, cands: list) -> list[str]:
    return list(dict.fromkeys(idx.chunk_doc[c.chunk_id] for c in cands))


def _retriever(idx: EvalIndex, cfg: object, paths: tuple[str, ...]) -> Retriever:
    return Retriever(cfg.retrieval.model_copy(update={"paths": paths}), idx.graph, idx.vectors, idx.embedder)


@pytest.mark.parametrize("language", ["de", "zh"])
def test_question_reaches_english_evidence_only_through_mesh(index: tuple[EvalIndex, object], language: str) -> None:
    idx, cfg = index
    analysis = QueryAnalyzer(idx.extractor, 0).analyze(QUESTIONS[language])
    assert analysis.language == language
    assert "D009203" in analysis.seeds  # Herzinfarkt / 心肌梗死 -> Myocardial Infarction
    assert "Myocardial Infarction" in dict(analysis.translations)["en"]

    without = _retriever(idx, cfg, ("dense", "sparse", "feedback")).retrieve(analysis)
    assert "mi" not in _docs(idx, without.candidates)[:1]

    translated = _retriever(idx, cfg, ("dense", "sparse", "translate")).retrieve(analysis)
    assert translated.translations["en"].count("Myocardial Infarction") == 1
    assert any(alt == "Myocardial Infarction" for group in analysis.glosses_in("en") for alt, _ in group)
    assert "translate:en" in translated.paths_used
    assert _docs(idx, translated.per_path["translate:en"]) == ["mi"]
    assert _docs(idx, translated.candidates)[0] == "mi"
    top = translated.candidates[0]
    assert top.features["lexical"] > 0  # the translation's terms count as overlap for the reranker

    graph = _retriever(idx, cfg, ("ppr",)).retrieve(analysis)
    assert _docs(idx, graph.candidates) == ["mi"] and graph.candidates[0].entity_path == ["D009203"]

    # the extractive answer quotes the English evidence (translation terms select its sentence);
    # the hashing embedder gives no dense similarity, so the refusal threshold is lowered here
    ranked = FeatureReranker().rerank(analysis.text, translated.candidates)
    composer = ExtractiveComposer(cfg.answer.model_copy(update={"min_relevance": 0.03}))
    answer = composer.generate(analysis.text, analysis, ranked[: cfg.retrieval.top_k])
    assert not answer.refused and answer.language == language
    assert "dual antiplatelet therapy" in answer.content and answer.citations[0].snippet


def test_translation_substitutes_entity_names(index: tuple[EvalIndex, object]) -> None:
    idx, _ = index
    analysis = QueryAnalyzer(idx.extractor, 0).analyze(QUESTIONS["de"])
    translator = OntologyTranslator(idx.vocab.get, names_per_entity=2)
    assert translator.translate(analysis, "de") is None  # its own language
    en = translator.translate(analysis, "en")
    assert en is not None and "Herzinfarkt" not in en.text and en.text.startswith("Behandlung ")  # "Welche" dropped
    assert "Myocardial Infarction" in en.text
    zh = translator.translate(analysis, "zh")
    assert zh is not None and "心肌梗死" in zh.text
    zh_question = QueryAnalyzer(idx.extractor, 0).analyze(QUESTIONS["zh"])
    zh_en = translator.translate(zh_question, "en")
    assert zh_en is not None and zh_en.text.startswith("Myocardial Infarction")
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in zh_en.text)  # no glossary here: Chinese words dropped
    off = QueryAnalyzer(idx.extractor, 0).analyze("谁赢得了1998年的足球世界杯？")
    assert translator.translate(off, "en") is None  # nothing linked: no translation
    off_de = QueryAnalyzer(idx.extractor, 0).analyze("Wer hat 1998 die Fussball-WM gewonnen?")
    assert not off_de.entity_ids
    # a German question is also searched in its words' English spellings (see test_translate.py)
    assert OntologyTranslator(idx.vocab.get, respell=False).translate(off_de, "en") is None
