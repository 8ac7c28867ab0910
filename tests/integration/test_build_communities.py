"""The community-build job on a local Ray cluster, after a (tiny) corpus build.

First build: one community per planted theme, summaries with citations that resolve to stored
chunks, one vector per summary in ``chunks_communities``, the run recorded. Then the incremental
behaviour: an unchanged graph is a no-op; new documents about a new theme summarise only the new
community; ``--full`` summarises all of them again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobs.build_communities import build_communities, main
from medgraph.config import load_config
from medgraph.eval.retrieval import build_index
from medgraph.stores import make_graph_store, make_vector_store
from tests.community_fixtures import THEMES, theme_records, vocab_tsv
from tests.helpers import REPO, index_tiny_corpus

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], object, tuple[object, object, object]]:
    """A corpus of two themes indexed with the hashing embedder; the job's overrides for it."""
    tmp = tmp_path_factory.mktemp("build_communities")
    sources = vocab_tsv(tmp / "terms.tsv")
    idx, _ = index_tiny_corpus(tmp, theme_records(["cardio", "diabetes"]), sources)
    models = (idx.vocab, idx.extractor, idx.embedder)
    idx.close()
    sets = ["embedding.dense=hashing", "ray.num_cpus=2", f"vocabulary.path={tmp / 'vocab'}",
            f"vocabulary.sources={json.dumps(sources)}", f"stores.graph.path={idx.path / 'graph.sqlite'}",
            f"stores.vector.path={idx.path / 'qdrant'}", "stores.vector.collection=chunks"]
    return sets, idx.path, models


def test_build_then_incremental_then_full(built, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sets, path, models = built
    cfg = load_config(REPO / "configs" / "local.yaml", sets)

    first = build_communities(cfg)
    assert first["status"] == "succeeded" and first["backend"] == "graspologic"
    assert first["communities"] == 2 and first["summarised"] == 2 and first["failures"] == []
    graph, vectors = make_graph_store(cfg.stores.graph), make_vector_store(cfg.stores.vector)
    try:
        top = graph.communities(level=0, members=True)
        assert sorted(sorted(c.members) for c in top) == sorted(
            sorted(m for m, _ in THEMES[t]) for t in ("cardio", "diabetes"))
        cited = [c for community in top for c in community.citations]
        assert cited and all(f"[{c.number}]" in community.summary for community in top for c in community.citations)
        chunks = {c.chunk_id: c for c in graph.get_chunks([c.chunk_id for c in cited])}
        for c in cited:  # each citation resolves to a stored chunk that says the cited sentence
            assert c.sentence.removesuffix(" …") in " ".join(chunks[c.chunk_id].text.split())
            assert c.doc_id == chunks[c.chunk_id].doc_id
        assert vectors.sibling("chunks_communities").count() == 2
        assert graph.last_run()["info"]["job"] == "build_communities"
    finally:
        graph.close()
        vectors.close()

    # unchanged graph and settings: nothing recomputed (through the command line)
    assert main(["--config", str(REPO / "configs" / "local.yaml"), "--json", *sum((["--set", s] for s in sets), [])]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "up_to_date"

    # new documents about a third theme: only the new community is summarised
    corpus = tmp_path / "more.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in theme_records(["infection"], prefix="new-")))
    build_index(corpus, cfg, path, models)
    more = build_communities(cfg)
    assert more["status"] == "succeeded" and more["communities"] == 3
    assert more["summarised"] == 1 and more["reused"] == 2 and more["removed"] == 0

    full = build_communities(cfg, full=True)
    assert full["summarised"] == 3 and full["reused"] == 0
    graph, vectors = make_graph_store(cfg.stores.graph), make_vector_store(cfg.stores.vector)
    try:
        assert vectors.sibling("chunks_communities").count() == 3
        pneumonia = graph.entity_communities(["D011014"])["D011014"]
        assert len(pneumonia) == 1 and "pneumonia" in graph.communities(ids=pneumonia)[0].summary.lower()
    finally:
        graph.close()
        vectors.close()

    # what the API serves: GET /graph/communities and the communities of GET /graph/entity
    from serve.routes_graph import entity_body
    from serve.services import RetrieverService

    service = RetrieverService(cfg)
    try:
        listing = service.communities(level=0, limit=2)
        assert listing["total"] == 3 and len(listing["communities"]) == 2
        assert listing["meta"]["backend"] == "graspologic"
        first = listing["communities"][0]
        assert first["size"] == 4 and first["level"] == 0 and first["summary"] and first["citations"]
        body = entity_body(service.entity("D011014"), None)
        assert [c["community_id"] for c in body["communities"]] == pneumonia
        assert body["communities"][0]["size"] == 4
    finally:
        service.graph.close()
        service.vectors.close()
