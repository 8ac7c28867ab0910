"""Evidence-gap triggers over a tiny indexed corpus: unconnected entity pairs (no shared chunk, no
bridge entity) and weak single-entity evidence; search terms from the vocabulary or the graph."""

from __future__ import annotations

import pytest

from medgraph.eval.retrieval import EvalIndex
from medgraph.literature.gaps import Gap, find_gaps, search_terms
from medgraph.retrieve.query import QueryAnalyzer
from medgraph.retrieve.types import Candidate, QueryAnalysis
from tests.helpers import FIXTURES

MI, METFORMIN, FEVER, HEART, ALL = "D009203", "D008687", "D005334", "D006321", "D054198"
# myocardial infarction + metformin share a chunk; fever and metformin are bridged by heart; myocardial
# infarction and fever share neither a chunk nor a neighbour; the leukemia is in no document
CORPUS = [
    {"doc_id": "mi", "title": "", "language": "en",
     "text": "Metformin after myocardial infarction reduced the infarct size in a small cohort."},
    {"doc_id": "fever", "title": "", "language": "en",
     "text": "Fever raised the heart rate of most children after vaccination."},
    {"doc_id": "drug", "title": "", "language": "en",
     "text": "Metformin did not change the heart muscle of the treated rats."},
]
SOURCES = [{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")}]


@pytest.fixture(scope="module")
def index(tiny_index: tuple[EvalIndex, object]) -> EvalIndex:
    return tiny_index[0]


def _analyze(idx: EvalIndex, question: str) -> QueryAnalysis:
    return QueryAnalyzer(idx.extractor, 0).analyze(question, "en")


def _ranked(relevance: float) -> list[Candidate]:
    return [Candidate("c1", relevance=relevance), Candidate("c2", relevance=relevance / 2)]


def test_corpus_links_as_the_cases_assume(index: EvalIndex) -> None:
    assert index.graph.connecting_evidence(MI, METFORMIN).chunk_ids  # a shared chunk
    fever_metformin = index.graph.connecting_evidence(FEVER, METFORMIN)
    assert fever_metformin.chunk_ids == [] and fever_metformin.bridges == [HEART]
    assert not index.graph.connecting_evidence(MI, FEVER).connected


def test_entities_with_a_shared_chunk_or_a_bridge_have_no_gap(index: EvalIndex) -> None:
    graph = index.graph
    assert find_gaps(_analyze(index, "Does metformin help after myocardial infarction?"), _ranked(0.0), graph, 0.3) == []
    analysis = _analyze(index, "Does metformin cause fever?")
    assert set(analysis.seeds) == {FEVER, METFORMIN}
    assert find_gaps(analysis, _ranked(0.0), graph, 0.3) == []


def test_unconnected_entities_are_a_gap(index: EvalIndex) -> None:
    gaps = find_gaps(_analyze(index, "Is fever a sign of myocardial infarction?"), _ranked(0.9), index.graph, 0.3)
    assert len(gaps) == 1
    gap = gaps[0]
    assert gap.kind == "unconnected" and gap.mesh_ids == (FEVER, MI)
    assert gap.names == ("Fever", "Myocardial Infarction") and "no chunk mentions both" in gap.reason


def test_an_entity_absent_from_the_graph_is_unconnected(index: EvalIndex) -> None:
    question = "Does precursor cell lymphoblastic leukemia-lymphoma occur after myocardial infarction?"
    gaps = find_gaps(_analyze(index, question), _ranked(0.9), index.graph, 0.3)
    assert [(g.kind, g.mesh_ids) for g in gaps] == [("unconnected", (ALL, MI))]
    assert gaps[0].names[0] == "precursor cell lymphoblastic leukemia-lymphoma"  # not in the graph: the surface


def test_pairs_are_bounded(index: EvalIndex) -> None:
    four = _analyze(index, "Fever, myocardial infarction, heart and metformin?")
    assert list(four.seeds) == [FEVER, MI, HEART, METFORMIN]
    gaps = find_gaps(four, [], index.graph, 0.3)  # of 6 pairs only fever / infarction is unconnected
    assert [g.mesh_ids for g in gaps] == [(FEVER, MI)]
    three = _analyze(index, "Fever, precursor cell lymphoblastic leukemia-lymphoma and myocardial infarction?")
    assert len(find_gaps(three, [], index.graph, 0.3)) == 3
    assert [g.mesh_ids for g in find_gaps(three, [], index.graph, 0.3, max_pairs=2)] == [(FEVER, ALL), (FEVER, MI)]


def test_single_entity_with_weak_evidence_is_a_gap(index: EvalIndex) -> None:
    analysis = _analyze(index, "What causes fever?")
    assert list(analysis.seeds) == [FEVER]
    (gap,) = find_gaps(analysis, _ranked(0.1), index.graph, 0.3)
    assert (gap.kind, gap.mesh_ids, gap.names) == ("weak", (FEVER,), ("Fever",))
    assert "0.10" in gap.reason and "0.30" in gap.reason
    assert find_gaps(analysis, _ranked(0.31), index.graph, 0.3) == []
    assert find_gaps(analysis, [], index.graph, 0.3)[0].kind == "weak"  # no evidence at all


def test_no_entities_no_gap_and_bad_floor(index: EvalIndex) -> None:
    assert find_gaps(_analyze(index, "What should I do?"), [], index.graph, 0.3) == []
    with pytest.raises(ValueError, match="noise_floor"):
        find_gaps(_analyze(index, "What causes fever?"), [], index.graph, 1.5)
    with pytest.raises(ValueError, match="gap kind"):
        Gap("missing", (FEVER,), ("Fever",), "")


def test_search_terms_are_english_mesh_names_and_synonyms(index: EvalIndex) -> None:
    gap = Gap("unconnected", (ALL, MI), ("precursor cell lymphoblastic leukemia-lymphoma", "Myocardial Infarction"), "")
    terms = search_terms(gap, index.vocab.get)  # the vocabulary knows entities the corpus never mentions
    assert terms[0] == "Precursor Cell Lymphoblastic Leukemia-Lymphoma"
    assert "Myocardial Infarction" in terms and "Heart Attack" in terms
    assert len([t for t in terms if "Leukemia" in t or t == "ALL"]) <= 4
    from_graph = search_terms(gap, index.graph.get_entity)  # the graph store knows only what the corpus mentions
    assert from_graph[0] == "precursor cell lymphoblastic leukemia-lymphoma" and "Myocardial Infarction" in from_graph
