"""End to end on Neo4j: the Ray corpus-build job writes the graph into Neo4j, the query path answers.

10 PubMedQA abstracts (``data/demo/pubmedqa_demo.json``) are built twice with the same config
(hashing dense embedder, Qdrant local mode in a tmp dir): once into Neo4j, once into the embedded
store; the counts must match. Then the Serve services (built directly, no HTTP) and the extractive
composer answer a question
from the Neo4j-backed corpus with citations (the whole app, agent and replicas included, runs on the
server stores in test_replicated_serving.py). Uses the local dev server (``make neo4j-start``) and
skips when nothing answers on Bolt, unless ``MEDGRAPH_REQUIRE_NEO4J=1``, in which case it fails.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from medgraph.config import load_config
from medgraph.config.models import Neo4jGraphStoreConfig
from medgraph.stores import make_graph_store
from medgraph.stores.errors import StoreUnavailable
from tests.helpers import require_disposable_neo4j, store_counts, unavailable

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
URI = f"bolt://{os.environ.get('NEO4J_DEV_HOST', '127.0.0.1')}:{os.environ.get('NEO4J_DEV_PORT', '7687')}"
GRAPH = f'stores.graph={{kind: neo4j, uri: "{URI}", password_env: NEO4J_DEV_PASSWORD}}'
N_ABSTRACTS = 10
_WIPE = "MATCH (n) WHERE n:Entity OR n:Chunk OR n:Document OR n:Run OR n:Failure DETACH DELETE n"


def _wipe() -> None:
    store = make_graph_store(Neo4jGraphStoreConfig(kind="neo4j", uri=URI, password_env="NEO4J_DEV_PASSWORD"))
    try:
        with store._driver.session() as session:
            session.run(_WIPE).consume()
    finally:
        store.close()


@pytest.fixture(scope="module")
def neo4j() -> None:
    require_disposable_neo4j(URI)
    try:
        _wipe()
    except StoreUnavailable as exc:
        reason = f"no Neo4j answering at {URI} ({exc}); start it with make neo4j-start"
        unavailable(reason, "MEDGRAPH_REQUIRE_NEO4J")
    yield
    _wipe()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, dict]:
    data = json.loads((REPO / "data" / "demo" / "pubmedqa_demo.json").read_text())
    picked = {k: data[k] for k in sorted(data)[:N_ABSTRACTS]}
    root = tmp_path_factory.mktemp("neo4j-corpus")
    (root / "abstracts.json").write_text(json.dumps(picked))
    return root, picked


def _config(home: Path, graph: list[str]):
    os.environ.setdefault("MEDGRAPH_HOME", str(REPO / ".medgraph"))
    sets = [f"stores.vector.path={home}/qdrant", "embedding.dense=hashing", "ray.num_cpus=2", *graph]
    return load_config(REPO / "configs" / "local.yaml", sets)


@pytest.fixture(scope="module")
def built(neo4j, corpus, tmp_path_factory):
    from jobs.build_corpus import build_corpus

    root, _ = corpus
    neo_cfg = _config(tmp_path_factory.mktemp("neo"), [GRAPH])
    home = tmp_path_factory.mktemp("embedded")
    emb_cfg = _config(home, [f"stores.graph.path={home}/graph.sqlite"])
    neo_summary = build_corpus(neo_cfg, [str(root)])
    emb_summary = build_corpus(emb_cfg, [str(root)])
    return neo_cfg, neo_summary, emb_cfg, emb_summary


def test_build_into_neo4j_matches_the_embedded_store(built):
    neo_cfg, neo_summary, emb_cfg, emb_summary = built
    assert neo_summary["status"] == emb_summary["status"] == "succeeded"
    assert neo_summary["documents_written"] == N_ABSTRACTS and not neo_summary["failures"]
    neo, emb = store_counts(neo_cfg), store_counts(emb_cfg)
    assert neo == emb
    assert neo["documents"] == N_ABSTRACTS and neo["documents_partial"] == 0
    assert neo["vectors"] == neo["chunks"] > 0 and neo["mentions"] > neo["chunks"] > 0
    graph = make_graph_store(neo_cfg.stores.graph)
    try:
        run = graph.last_run()
        assert run["run_id"] == neo_summary["run_id"] and run["status"] == "succeeded"
        assert run["summary"]["store"] == neo  # graph counts and the vector count
    finally:
        graph.close()


def test_rerun_into_neo4j_is_idempotent(built, corpus):
    from jobs.build_corpus import build_corpus

    neo_cfg, first, _, _ = built
    before = store_counts(neo_cfg)
    again = build_corpus(neo_cfg, [str(corpus[0])])
    assert again["documents_skipped"] == first["documents_written"] and again["chunks_written"] == 0
    assert store_counts(neo_cfg) == before


def test_serve_services_answer_from_neo4j_with_citations(built, corpus):
    from medgraph.generate import make_generator
    from serve.services import AnalyzerService, RerankerService, RetrieverService

    neo_cfg, _, emb_cfg, _ = built
    _, picked = corpus
    pmid = sorted(picked)[3]
    question = picked[pmid]["QUESTION"]
    analyzer, retriever = AnalyzerService(neo_cfg), RetrieverService(neo_cfg)
    reranker, generator = RerankerService(neo_cfg), make_generator(neo_cfg.answer)
    try:
        analysis = analyzer.analyze(question)
        result = retriever.retrieve(analysis)
        ranked = reranker.rerank(question, result.candidates)
        answer = generator.generate(question, analysis, ranked[: neo_cfg.retrieval.top_k])
        assert not answer.refused and answer.citations, answer
        assert f"PMID:{pmid}" in {c.source_id for c in answer.citations}
        assert all(f"[{c.number}]" in answer.content for c in answer.citations)
        assert retriever.ready()["documents"] == N_ABSTRACTS
        # the graph path is served by Neo4j: GDS PPR agrees with the embedded store on the same corpus
        assert analysis.seeds and "ppr" in result.paths_used
        embedded = make_graph_store(emb_cfg.stores.graph)
        try:
            want = [h.chunk_id for h in embedded.ppr(analysis.seeds, 0.5, 5)]
        finally:
            embedded.close()
        got = [h.chunk_id for h in retriever.graph.ppr(analysis.seeds, 0.5, 5)]
        assert len(set(got) & set(want)) >= 4, (got, want)
        seed = next(iter(analysis.seeds))
        entity = retriever.entity(seed, hops=1, limit=5)
        assert entity is not None and entity["entity"].mesh_id == seed
    finally:
        retriever.graph.close()
        retriever.vectors.close()
