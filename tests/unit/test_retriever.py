"""The retriever over a tiny indexed corpus: each path, pseudo-relevance feedback, and weighted fusion."""

from __future__ import annotations

import pytest

from medgraph.eval.retrieval import EvalIndex
from medgraph.retrieve.retriever import Retriever
from medgraph.retrieve.types import QueryAnalysis
from tests.helpers import FIXTURES

# "warfarin" appears in one document only; its neighbours share "anticoagulant bleeding" with it,
# so feedback from the warfarin document reaches them although they never say "warfarin".
CORPUS = [
    {"doc_id": "warf", "title": "", "language": "en",
     "text": "Warfarin is an anticoagulant; major bleeding and intracranial haemorrhage are its risks."},
    {"doc_id": "doac", "title": "", "language": "en",
     "text": "Direct oral anticoagulant therapy had fewer bleeding events and less intracranial haemorrhage."},
    {"doc_id": "lead", "title": "", "language": "en",
     "text": "Blood lead levels in workers of a battery plant exceeded the limits for occupational exposure."},
    {"doc_id": "fever", "title": "", "language": "en",
     "text": "Fever after vaccination resolved within two days in most children."},
]


SOURCES = [{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")},
           {"kind": "mesh_tree", "path": "pkg:mesh_tree_numbers.tsv.gz"}]
INDEX_SETTINGS = ["retrieval.feedback.docs=1", "retrieval.feedback.terms=3", "retrieval.feedback.weight=0.5"]


@pytest.fixture(scope="module")
def index(tiny_index: tuple[EvalIndex, object]) -> tuple[EvalIndex, object]:
    return tiny_index


def _docs(idx: EvalIndex, cands: list) -> list[str]:
    return [idx.chunk_doc[c.chunk_id] for c in cands]


def test_feedback_expansion_reaches_documents_without_the_query_term(index: tuple[EvalIndex, object]) -> None:
    idx, cfg = index
    retriever = Retriever(cfg.retrieval, idx.graph, idx.vectors, idx.embedder)
    analysis = QueryAnalysis("warfarin", "en")
    qv = retriever.query_vectors(analysis)
    sparse = retriever.search_path("sparse", analysis, 10, qv)
    assert _docs(idx, sparse) == ["warf"]  # only one document has the word
    expanded = retriever.expand_sparse(qv.sparse, [c.chunk_id for c in sparse])
    added = expanded.as_dict().keys() - qv.sparse.as_dict().keys()
    assert len(added) == 3  # feedback.terms
    assert max(v for t, v in expanded.as_dict().items() if t in added) == pytest.approx(0.5)  # feedback.weight
    assert all(expanded.as_dict()[t] == pytest.approx(v) for t, v in qv.sparse.as_dict().items())
    feedback = retriever.search_path("feedback", analysis, 10, qv, {"sparse": sparse})
    docs = _docs(idx, feedback)
    assert docs[0] == "warf" and "doac" in docs and "lead" not in docs and "fever" not in docs


def test_retrieve_fuses_the_configured_paths_with_their_weights(index: tuple[EvalIndex, object]) -> None:
    idx, cfg = index
    rcfg = cfg.retrieval.model_copy(update={
        "paths": ("dense", "sparse", "feedback"), "weights": {"dense": 0.0, "sparse": 1.0, "feedback": 1.0},
    })
    result = Retriever(rcfg, idx.graph, idx.vectors, idx.embedder).retrieve(QueryAnalysis("warfarin bleeding", "en"))
    assert set(result.per_path) == {"dense", "sparse", "feedback"}
    assert set(result.paths_used) == {"dense", "sparse", "feedback"}
    top = result.candidates[0]
    assert idx.chunk_doc[top.chunk_id] == "warf" and top.chunk is not None
    assert set(top.path_ranks) >= {"sparse", "feedback"} and set(top.features) >= {"dense", "lexical", "rrf"}
    # dense has weight 0: a chunk only the dense path found scores nothing
    dense_only = {c.chunk_id for c in result.per_path["dense"]} - {
        c.chunk_id for p in ("sparse", "feedback") for c in result.per_path[p]}
    for cand in result.candidates:
        if cand.chunk_id in dense_only:
            assert cand.score == 0.0


def test_unknown_path_is_an_error(index: tuple[EvalIndex, object]) -> None:
    idx, cfg = index
    with pytest.raises(ValueError, match="unknown retrieval path"):
        Retriever(cfg.retrieval, idx.graph, idx.vectors, idx.embedder).search_path("bogus", QueryAnalysis("x", "en"), 5)
    configured = cfg.retrieval.model_copy(update={"paths": ("dense", "bogus")})
    with pytest.raises(ValueError, match=r"unknown retrieval paths \['bogus'\]; known: .*dense"):
        Retriever(configured, idx.graph, idx.vectors, idx.embedder)


def test_a_new_retrieval_path_is_one_registered_class(index: tuple[EvalIndex, object], monkeypatch) -> None:
    """A path is a class with ``search`` and one ``register_path`` call: named in
    ``retrieval.paths`` it runs, is timed, and its list is fused with its weight."""
    from medgraph.retrieve import paths
    from medgraph.retrieve.types import Candidate

    idx, cfg = index

    class Newest:
        name, after = "newest", False

        def search(self, s):  # the last chunks written, as a stand-in for a real signal
            ids = sorted(idx.chunk_doc)[-2:]
            return {self.name: [Candidate(i, 1.0 / n, {self.name: 1.0}) for n, i in enumerate(ids, 1)]}

    monkeypatch.setattr(paths, "PATHS", dict(paths.PATHS))
    monkeypatch.setattr("medgraph.retrieve.retriever.PATHS", paths.PATHS)
    paths.register_path(Newest())
    rcfg = cfg.retrieval.model_copy(update={"paths": ("sparse", "newest"), "weights": {"sparse": 1.0, "newest": 5.0}})
    result = Retriever(rcfg, idx.graph, idx.vectors, idx.embedder).retrieve(QueryAnalysis("metformin", "en"))
    assert [c.chunk_id for c in result.per_path["newest"]] == sorted(idx.chunk_doc)[-2:]
    assert "newest" in result.timings_ms and "newest" in result.paths_used
    assert result.candidates[0].chunk_id == sorted(idx.chunk_doc)[-2]  # weight 5: its first is first
    with pytest.raises(ValueError, match="no ':'"):
        paths.register_path(type("Bad", (), {"name": "a:b", "after": False, "search": Newest.search})())


def test_ppr_path_needs_the_configured_number_of_question_entities() -> None:
    from medgraph.config.models import RetrievalConfig
    from medgraph.retrieve.retriever import Retriever
    from medgraph.retrieve.types import QueryAnalysis
    from medgraph.schemas import Mention

    class Graph:
        calls: list[dict[str, float]] = []

        def ppr(self, seeds: dict[str, float], damping: float, top_k: int) -> list:  # type: ignore[type-arg]
            self.calls.append(seeds)
            return []

    def analysis(*ids: str) -> QueryAnalysis:
        return QueryAnalysis("q", "en", tuple(Mention(0, 1, i, mesh_id=i, score=1.0) for i in ids))

    graph = Graph()
    rcfg = RetrievalConfig(paths=("ppr",), ppr_min_entities=2, ppr_engine="store")  # the store's PPR: calls seen
    retriever = Retriever(rcfg, graph, None, None)  # type: ignore[arg-type]
    assert retriever.search_path("ppr", analysis("D1"), 5) == [] and graph.calls == []
    retriever.search_path("ppr", analysis("D1", "D2"), 5)
    assert graph.calls == [{"D1": 1.0, "D2": 1.0}]


def test_the_entity_feature_counts_what_the_english_translation_links(index: tuple[EvalIndex, object]) -> None:
    """A German or Chinese question whose own words link nothing still has entities: those its
    English translation names (``QueryAnalysis.bridged``); a passage naming them scores on them."""
    from medgraph.retrieve.types import Candidate

    idx, cfg = index
    retriever = Retriever(cfg.retrieval, idx.graph, idx.vectors, idx.embedder)
    fever = next(c for c, d in idx.chunk_doc.items() if d == "fever")
    named = sorted(idx.graph.chunk_entities([fever])[fever])
    assert named, "the fixture's fever passage names MeSH entities"

    def entity(analysis: QueryAnalysis) -> float:
        cands = [Candidate(fever, 1.0)]
        retriever.featurise(analysis, cands)
        return cands[0].features["entity"]

    question = "Temperaturanstieg nach der Impfung"
    assert entity(QueryAnalysis(question, "de")) == 0.0
    assert entity(QueryAnalysis(question, "de", bridged=(named[0],))) == 1.0
    # a noisy gloss adds an entity the passage lacks: the share, never more than the own words' share
    assert entity(QueryAnalysis(question, "de", bridged=(named[0], "D999999"))) == 0.5


def test_what_a_question_names_includes_its_english_translations_entities() -> None:
    """A multi-hop sub-answer is never something the question names (``named_ids``): its own linked
    entities first, then those only its English translation links."""
    from medgraph.schemas import Mention

    own = (Mention(0, 2, "氯喹", "D002738"), Mention(3, 5, "抑郁", "D003863"), Mention(6, 8, "某药"))
    analysis = QueryAnalysis("氯喹加氯胍…抑郁", "zh", mentions=own, bridged=("D002727", "D002738"))
    assert analysis.entity_ids == ["D002738", "D003863"]
    assert analysis.named_ids == ["D002738", "D003863", "D002727"]
    assert QueryAnalysis("x", "en", mentions=own[:1]).named_ids == ["D002738"]
