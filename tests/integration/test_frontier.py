"""Frontier expansion after a corpus build, against the local E-utilities server over real PubMed
records: the least covered entities of a one-abstract corpus are searched, the records found are
built by the same job as a run of their own, and building again fetches nothing already stored."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from jobs.build_corpus import build_corpus, summary_text
from jobs.frontier import under_covered
from medgraph.config import load_config
from medgraph.testing.eutils import EUtilsServer, shared_articles

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
TEXT = ("A newborn infant of a mother treated with lithium carbonate had tricuspid regurgitation and atrial "
        "flutter; lithium toxicity was suspected.")


def test_the_least_covered_entities_come_first_and_the_order_is_stable() -> None:
    pairs = [("D2", "c1", 1), ("D1", "c1", 1), ("D3", "c1", 1), ("D3", "c2", 2), ("D4", "c1", 1), ("D4", "c2", 1),
             ("D4", "c3", 1)]
    assert under_covered(pairs, min_chunks=3, limit=3) == [("D1", 1), ("D2", 1), ("D3", 2)]
    assert under_covered(pairs, min_chunks=1, limit=3) == []


@pytest.fixture(scope="module")
def server(shared_data: Path) -> Iterator[EUtilsServer]:
    with EUtilsServer(shared_articles(shared_data, pubmedqa=False)) as s:
        yield s


def test_a_build_fetches_literature_for_its_frontier_and_builds_it(server: EUtilsServer, tmp_path: Path) -> None:
    os.environ.setdefault("MEDGRAPH_HOME", str(REPO / ".medgraph"))
    corpus = tmp_path / "one.jsonl"
    corpus.write_text(json.dumps({"doc_id": "case-1", "title": "Lithium in a newborn", "text": TEXT}) + "\n")
    source = {"kind": "pubmed", "base_url": server.base_url, "rate_per_s": 50, "timeout_s": 5, "retries": 1}
    cfg = load_config(REPO / "configs" / "local.yaml", [
        f"stores.graph.path={tmp_path}/graph.sqlite", f"stores.vector.path={tmp_path}/qdrant",
        "embedding.dense=hashing", "frontier.enabled=true", "frontier.max_entities=3", "frontier.per_entity=2",
        f"frontier.path={tmp_path}/frontier", f"gaps.sources={json.dumps([source])}"])
    summary = build_corpus(cfg, [str(corpus)], run_id="front")
    front = summary["frontier"]
    assert summary["status"] == "succeeded" and summary["documents_written"] == 1
    assert len(front["entities"]) == 3 and front["errors"] == [], front
    assert front["run_id"] == "front-frontier" and front["status"] == "succeeded"
    assert 1 <= front["documents_written"] == front["fetched"] <= 6, front
    fetched = [json.loads(line) for line in Path(front["file"]).read_text().splitlines()]
    assert {r["metadata"]["frontier_entity"] for r in fetched} <= set(front["entities"])
    assert all(r["doc_id"].startswith("pmid-") and r["source_id"].startswith("PMID:") for r in fetched)
    searches = [p["term"] for _, endpoint, p in server.requests if endpoint == "esearch.fcgi"]
    assert len(searches) == 3  # one search per frontier entity, by its MeSH names
    assert "frontier: 3 entities searched" in summary_text(summary)

    from medgraph.stores import make_graph_store

    graph = make_graph_store(cfg.stores.graph)
    try:  # the fetched records are documents of the store, built by their own run
        stored = graph.document_hashes(complete_only=True)
        assert {"case-1", *(r["doc_id"] for r in fetched)} <= set(stored)
    finally:
        graph.close()

    server.requests.clear()
    again = build_corpus(cfg, [str(corpus)], run_id="front-2")
    assert again["documents_skipped"] == 1
    # the new records now cover some entities; nothing stored is fetched or built again
    assert again["frontier"].get("documents_written", 0) == again["frontier"]["fetched"]
    assert not set(r["doc_id"] for r in fetched) & set(
        json.loads(line)["doc_id"] for line in Path(again["frontier"].get("file", os.devnull)).read_text().splitlines())
