"""The ``community`` retrieval path over a tiny indexed corpus with three planted themes: an overview
question pulls in the evidence its community's summary cites; other questions do not."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from medgraph.community.build import detect, plan, summary_inputs
from medgraph.community.index import CommunitySearch, index_summaries, summary_store
from medgraph.community.summarise import ExtractiveSummariser
from medgraph.retrieve.query import QueryAnalyzer
from medgraph.retrieve.retriever import Retriever
from tests.community_fixtures import THEMES, theme_records, vocab_tsv
from tests.helpers import index_tiny_corpus


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any, Any]]:
    tmp = tmp_path_factory.mktemp("community_retrieval")
    idx, cfg = index_tiny_corpus(tmp, theme_records(), vocab_tsv(tmp / "terms.tsv"))
    cc = cfg.communities
    detection = detect(idx.graph, cc)
    work = plan(idx.graph, detection, cc)
    items = summary_inputs(idx.graph, work.todo, detection.graph, work.evidence, cc.summary_entities)
    done = [ExtractiveSummariser(cc.summary_entities, cc.summary_sentences).summarise(i) for i in items]
    idx.graph.replace_communities(done, {})
    summaries = summary_store(idx.vectors, cc)
    index_summaries(summaries, idx.embedder, done, [])
    yield idx, cfg, summaries
    idx.close()


def _theme_of(idx: Any, chunk_id: str) -> str:
    return idx.chunk_doc[chunk_id].split("-")[0]


def test_communities_follow_the_planted_themes(built: tuple[Any, Any, Any]) -> None:
    idx, _, summaries = built
    top = idx.graph.communities(level=0, members=True)
    assert sorted(sorted(c.members) for c in top) == sorted(sorted(m for m, _ in t) for t in THEMES.values())
    assert summaries.count() == len(idx.graph.communities())


def test_an_overview_question_pulls_in_community_evidence(built: tuple[Any, Any, Any]) -> None:
    idx, cfg, summaries = built
    search = CommunitySearch(cfg.communities, idx.graph, summaries)
    rcfg = cfg.retrieval.model_copy(update={"paths": ("sparse", "community")})
    retriever = Retriever(rcfg, idx.graph, idx.vectors, idx.embedder, search)
    analyzer = QueryAnalyzer(idx.extractor)
    overview = analyzer.analyze("What are the main themes in the literature on metformin?", "en")
    assert "D008687" in overview.seeds
    result = retriever.retrieve(overview)
    community = result.per_path["community"]
    assert community and "community" in result.paths_used
    assert {_theme_of(idx, c.chunk_id) for c in community[:3]} == {"diabetes"}
    fused = {c.chunk_id: c for c in result.candidates}
    assert all(c.chunk_id in fused and "community" in fused[c.chunk_id].path_ranks for c in community)
    # the community's evidence reaches documents the sparse search of this question ranks lower or misses
    cited = {c.chunk_id for c in community}
    assert cited - {c.chunk_id for c in result.per_path["sparse"][:1]}
    # a specific question gets no community evidence; with ``when: always`` it does
    specific = analyzer.analyze("Does metformin lower glucose?", "en")
    assert retriever.retrieve(specific).per_path["community"] == []
    always = CommunitySearch(cfg.communities.model_copy(update={
        "search": cfg.communities.search.model_copy(update={"when": "always"})}), idx.graph, summaries)
    assert Retriever(rcfg, idx.graph, idx.vectors, idx.embedder, always).retrieve(specific).per_path["community"]


def test_membership_alone_finds_the_community_without_a_summary_index(built: tuple[Any, Any, Any]) -> None:
    idx, cfg, _ = built
    search = CommunitySearch(cfg.communities, idx.graph, None)
    analysis = QueryAnalyzer(idx.extractor).analyze("Give me an overview of pneumonia", "en")
    ranked = search.rank(analysis, None, None)
    best = idx.graph.communities(ids=[ranked[0][0]], members=True)[0]
    assert "D011014" in best.members
    chunks = search.candidates(analysis, None, None, 10)
    assert chunks and {_theme_of(idx, c.chunk_id) for c in chunks} == {"infection"}


def test_the_retrieval_evaluation_runs_the_community_path_as_the_service_does(built: tuple[Any, Any, Any]) -> None:
    """``medgraph.eval.retrieval.query_parts`` builds its retriever with ``medgraph.assemble``, as the
    retriever deployment does: an overview question finds the community evidence there too."""
    from medgraph.eval.retrieval import query_parts

    idx, cfg, _ = built
    assert "community" in cfg.retrieval.paths
    parts = query_parts(idx, cfg)
    result = parts.retriever.retrieve(parts.analyzer.analyze("What are the main themes in the literature on metformin?", "en"))
    assert result.per_path["community"] and "community" in result.paths_used
