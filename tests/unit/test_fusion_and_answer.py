from __future__ import annotations

import re

from medgraph.config.models import AnswerConfig
from medgraph.generate.extractive import ExtractiveComposer
from medgraph.retrieve.fusion import language_weights, rrf
from medgraph.retrieve.rerank import FeatureReranker
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.schemas import Chunk, Mention


def test_rrf_sums_reciprocal_ranks_with_weights_and_dedups():
    a = [Candidate("x", 0.9), Candidate("y", 0.8), Candidate("x", 0.1)]
    b = [Candidate("y", 5.0, entity_path=["D1"]), Candidate("z", 4.0)]
    fused = rrf({"vector": a, "ppr": b}, k=60, weights={"vector": 1.0, "ppr": 0.5})
    scores = {c.chunk_id: c.score for c in fused}
    assert [c.chunk_id for c in fused] == ["y", "x", "z"]
    assert abs(scores["y"] - (1 / 62 + 0.5 / 61)) < 1e-12
    assert abs(scores["x"] - 1 / 61) < 1e-12  # its duplicate lower down does not count again
    y = fused[0]
    assert y.path_ranks == {"vector": 2, "ppr": 1} and y.entity_path == ["D1"]


def test_language_weights_scale_only_the_question_languages_paths():
    base = {"dense": 1.0, "sparse": 1.0, "feedback": 1.0, "translate": 1.0, "translate:zh": 0.8}
    factors = {"de": {"sparse": 0.5, "feedback": 0.25, "translate": 0.5}}
    de = language_weights(base, factors, "de")
    assert de == {"dense": 1.0, "sparse": 0.5, "feedback": 0.25, "translate": 0.5, "translate:zh": 0.4}
    assert language_weights(base, factors, "en") == base  # a language without factors keeps the weights
    assert language_weights({}, {"zh": {"ppr": 0.5}}, "zh") == {"ppr": 0.5}  # unset weights count as 1
    assert base["sparse"] == 1.0  # the configured weights are not modified


def test_down_weighted_noisy_path_lets_the_cross_lingual_path_decide():
    """A German question over English text: its untranslated sparse hit is noise, dense is right."""
    lists = {"dense": [Candidate("right", 0.8), Candidate("noise", 0.5)], "translate:en": [Candidate("right", 2.0)],
             "sparse": [Candidate("noise", 3.0)], "feedback": [Candidate("noise", 2.0)]}
    weights = {"dense": 1.0, "sparse": 1.0, "feedback": 1.0, "translate": 1.0}
    assert rrf(lists, 10, weights)[0].chunk_id == "noise"
    scaled = language_weights(weights, {"de": {"sparse": 0.5, "feedback": 0.5}}, "de")
    assert rrf(lists, 10, scaled)[0].chunk_id == "right"


def test_feature_reranker_is_monotone_and_calibrated():
    r = FeatureReranker()
    weak = r.relevance({"dense": 0.1, "lexical": 0.0, "entity": 0.0, "ppr": 0.0, "rrf": 0.2})
    strong = r.relevance({"dense": 0.8, "lexical": 0.9, "entity": 1.0, "ppr": 1.0, "rrf": 1.0})
    assert 0.0 < weak < 0.1 < 0.9 < strong < 1.0
    for f in ("dense", "lexical", "entity", "ppr", "rrf"):
        base = {"dense": 0.4, "lexical": 0.4, "entity": 0.5, "ppr": 0.5, "rrf": 0.5}
        assert r.relevance({**base, f: base[f] + 0.2}) > r.relevance(base)


def _cand(cid: str, text: str, relevance: float) -> Candidate:
    chunk = Chunk(cid, f"doc-{cid}", 0, text, ["Results"], "p", text, 40, "en", title=f"Title {cid}",
                  page=3, source_id=f"PMID:{cid}")
    return Candidate(cid, 1.0, chunk=chunk, relevance=relevance)


def test_reranker_order_fused_keeps_the_ranking_and_still_calibrates():
    import pytest

    from medgraph.config.models import RerankConfig
    from medgraph.retrieve.rerank import make_reranker

    # the fused list says a before b; the features (refusal calibration) prefer b
    a = Candidate("a", score=0.5, features={"dense": 0.2, "lexical": 0.2, "rrf": 1.0})
    b = Candidate("b", score=0.3, features={"dense": 0.9, "lexical": 0.9, "rrf": 0.6})
    by_relevance = make_reranker(RerankConfig(order="relevance")).rerank("q", [a, b])
    assert [c.chunk_id for c in by_relevance] == ["b", "a"]
    fused = make_reranker(RerankConfig(order="fused")).rerank("q", [b, a])
    assert [c.chunk_id for c in fused] == ["a", "b"]
    assert fused[1].relevance > fused[0].relevance > 0  # relevance still set for the refusal decision
    with pytest.raises(ValueError, match="order"):
        FeatureReranker(order="random")


def test_extractive_answer_cites_chunks_that_contain_each_sentence():
    evidence = [
        _cand("1", "Metformin reduced mortality in patients with heart failure and diabetes. Other text follows here.", 0.9),
        _cand("2", "The weather was mild during the study period overall. Metformin use was associated with fewer "
                   "hospital admissions for heart failure.", 0.8),
    ]
    analysis = QueryAnalysis("Does metformin help heart failure in diabetes?", "en",
                             (Mention(5, 14, "metformin", "D008687", "Drug", "exact", 1.0),))
    answer = ExtractiveComposer(AnswerConfig()).generate(analysis.text, analysis, evidence)
    assert not answer.refused and answer.disclaimer
    markers = re.findall(r"([^\[\]]+?) \[(\d+)\]", answer.content)
    assert len(markers) == 2
    by_number = {c.number: c for c in answer.citations}
    for sentence, number in markers:
        citation = by_number[int(number)]
        chunk = next(e.chunk for e in evidence if e.chunk_id == citation.chunk_id)
        assert sentence.strip() in chunk.text  # every [N] points to a chunk that contains its sentence
        assert citation.section_path == ["Results"] and citation.source_id == f"PMID:{citation.chunk_id}"
    assert "weather" not in answer.content  # sentences without question terms are not quoted


def test_refuses_when_evidence_is_weak_or_off_topic():
    analysis = QueryAnalysis("What is the capital of France?", "en")
    off_topic = [_cand("1", "Metformin reduced mortality in heart failure patients with diabetes.", 0.9)]
    low = [_cand("2", "The capital of France is discussed in no medical study at all here.", 0.05)]
    composer = ExtractiveComposer(AnswerConfig(min_relevance=0.3))
    for evidence in (off_topic, low, []):
        answer = composer.generate(analysis.text, analysis, evidence)
        assert answer.refused and answer.citations == [] and "[" not in answer.content
    de = composer.generate("Was ist die Hauptstadt?", QueryAnalysis("Was ist die Hauptstadt?", "de"), [])
    assert de.refused and de.language == "de" and "Belege" in de.content and "medizinische" in de.disclaimer


def test_retriever_fuses_with_the_question_languages_weights(tmp_path):
    """Over a real (tiny) index: with ``de`` factors 0 on the lexical paths, a German question's
    fused list is its dense list; an English question keeps the configured weights."""
    from medgraph.retrieve.retriever import Retriever
    from tests.helpers import index_tiny_corpus

    terms = tmp_path / "terms.tsv"
    terms.write_text("mesh_id\tlang\tterm\tsource\nD008687\ten\tmetformin\ttest\nD003920\ten\tdiabetes\ttest\n",
                     encoding="utf-8")
    texts = ["Metformin lowers glucose in type 2 diabetes.", "Metformin and lactic acidosis in renal failure.",
             "Insulin pumps for type 1 diabetes in children.", "Aspirin after myocardial infarction.",
             "Hand hygiene in outpatient clinics.", "Diabetes education by nurses and dietitians."]
    records = [{"doc_id": f"d{i}", "title": f"doc {i}", "language": "en", "text": t} for i, t in enumerate(texts)]
    idx, cfg = index_tiny_corpus(tmp_path, records, [{"kind": "multilingual_terms", "path": str(terms)}])
    try:
        rcfg = cfg.retrieval.model_copy(update={
            "paths": ("dense", "sparse", "feedback"), "weights": {"dense": 1.0, "sparse": 1.0, "feedback": 1.0},
            "language_weights": {"de": {"sparse": 0.0, "feedback": 0.0}},
            "lexical_own_language": False})  # the German words search the English passages too
        retriever = Retriever(rcfg, idx.graph, idx.vectors, idx.embedder)
        question = "Metformin Laktatazidose bei Niereninsuffizienz"
        de = retriever.retrieve(QueryAnalysis(question, "de"))
        dense = [c.chunk_id for c in de.per_path["dense"]]
        assert de.per_path["sparse"] and [c.chunk_id for c in de.candidates][: len(dense)] == dense
        en = retriever.retrieve(QueryAnalysis(question, "en"))
        expected = rrf(en.per_path, rcfg.rrf_k, rcfg.weights)
        assert [c.chunk_id for c in en.candidates] == [c.chunk_id for c in expected]
        assert [c.chunk_id for c in en.candidates] != [c.chunk_id for c in de.candidates]
    finally:
        idx.close()
