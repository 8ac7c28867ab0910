"""The corpus-build job on a real local Ray cluster, over real files.

Counts are checked against the input (chunks computed Ray-free by the same chunker), then:
idempotent re-run, incremental add, delete, bad input, and kill-and-resume of the driver.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jobs.build_corpus import build_corpus
from medgraph.config import load_config
from medgraph.ingest.chunking import Chunker
from medgraph.ingest.loaders import expand_inputs, load_shard, plan_shards
from medgraph.schemas import Document
from medgraph.stores import make_graph_store, make_vector_store
from tests.helpers import store_counts

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
FAST = ["embedding.dense=hashing", "ray.num_cpus=2"]


def config(home: Path, extra: list[str] = ()):  # type: ignore[assignment]
    os.environ.setdefault("MEDGRAPH_HOME", str(REPO / ".medgraph"))
    sets = [f"stores.graph.path={home}/graph.sqlite", f"stores.vector.path={home}/qdrant", *extra]
    return load_config(REPO / "configs" / "local.yaml", sets)


def expected(paths: list[Path], cfg) -> tuple[int, int]:
    """Documents and chunks that the job must write for these inputs (no Ray involved)."""
    files, _ = expand_inputs(paths)
    docs = [d for s in plan_shards(files) for d in load_shard(s) if isinstance(d, Document)]
    chunker = Chunker(cfg.chunking)
    return len(docs), sum(len(chunker.chunk(d)) for d in docs)


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory, shared_data) -> Path:
    """40 PubMedQA abstracts as JSONL, the CDC PDF, and three bad inputs."""
    root = tmp_path_factory.mktemp("corpus")
    data = json.loads((REPO / "data" / "demo" / "pubmedqa_demo.json").read_text())
    with (root / "abstracts.jsonl").open("w") as fh:
        for pmid in sorted(data)[:40]:
            item = data[pmid]
            sections = [{"title": lab.title(), "text": ctx} for lab, ctx in zip(item["LABELS"], item["CONTEXTS"], strict=True)]
            fh.write(json.dumps({"doc_id": f"pmid-{pmid}", "title": f"PubMed {pmid}", "sections": sections}) + "\n")
        fh.write("{this line is not JSON\n")
    shutil.copy(shared_data / "pdfs" / "cdc_guide_infection_prevention_outpatient_2016.pdf", root / "cdc.pdf")
    (root / "corrupt.pdf").write_bytes(b"%PDF-1.7\n garbage")
    (root / "latin1.txt").write_bytes("Fieber, Schüttelfrost und Übelkeit".encode("latin-1"))
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory, small_corpus):
    cfg = config(tmp_path_factory.mktemp("store"), FAST)
    summary = build_corpus(cfg, [str(small_corpus)])
    return cfg, summary


def test_counts_match_the_input(built, small_corpus):
    cfg, summary = built
    n_docs, n_chunks = expected([small_corpus], cfg)
    assert n_docs == 41
    assert summary["status"] == "succeeded"
    assert summary["documents_written"] == n_docs and summary["chunks_written"] == n_chunks
    counts = store_counts(cfg)
    assert counts["documents"] == n_docs and counts["documents_partial"] == 0
    assert counts["chunks"] == n_chunks and counts["vectors"] == n_chunks
    assert counts["mentions"] > n_chunks  # medical abstracts mention several MeSH entities per chunk
    assert 0 < counts["entities"] < counts["mentions"]


def test_bad_inputs_fail_alone_with_reasons(built):
    cfg, summary = built
    reasons = {Path(f["source"].split(":")[0]).name: f["reason"] for f in summary["failures"]}
    assert set(reasons) == {"abstracts.jsonl", "corrupt.pdf", "latin1.txt"}
    assert "JSON" in reasons["abstracts.jsonl"] and "UTF-8" in reasons["latin1.txt"]
    graph = make_graph_store(cfg.stores.graph)
    try:
        run = graph.last_run()
        assert run["run_id"] == summary["run_id"] and run["status"] == "succeeded"
        assert len(graph.failures(summary["run_id"])) == 3
    finally:
        graph.close()


def test_rerun_is_idempotent(built, small_corpus):
    cfg, first = built
    before = store_counts(cfg)
    again = build_corpus(cfg, [str(small_corpus)])
    assert again["documents_skipped"] == first["documents_written"]
    assert again["chunks_written"] == 0
    assert store_counts(cfg) == before


def test_incremental_add_then_delete(tmp_path, small_corpus):
    cfg = config(tmp_path, FAST)
    pdf_only = build_corpus(cfg, [str(small_corpus / "cdc.pdf")])
    pdf_counts = store_counts(cfg)
    both = build_corpus(cfg, [str(small_corpus / "cdc.pdf"), str(small_corpus / "abstracts.jsonl")])
    assert both["documents_skipped"] == 1 and both["documents_written"] == 40
    graph = make_graph_store(cfg.stores.graph)
    vectors = make_vector_store(cfg.stores.vector)
    try:
        from medgraph.index.writer import CorpusWriter

        result = CorpusWriter(graph, vectors, lambda _id: None).delete_documents(
            [d for d in graph.document_hashes() if d.startswith("pmid-")])
        assert result.documents == 40
        assert result.entities_removed > 0
    finally:
        graph.close()
        vectors.close()
    assert store_counts(cfg) == pdf_counts  # back to exactly the PDF-only state
    assert pdf_only["documents_written"] == 1


def _count(db: Path, sql: str) -> int:
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def _chunks_in(db: Path) -> int:
    return _count(db, "SELECT count(*) FROM chunks")


def _complete_documents_in(db: Path) -> int:
    return _count(db, "SELECT count(*) FROM documents WHERE status='complete'")


def test_killed_driver_resumes_to_exact_counts(tmp_path, built, small_corpus):
    cfg_ref, _ = built
    reference = store_counts(cfg_ref)
    home = tmp_path / "store"
    # small batches all the way through make the writes trickle in, so the kill lands mid-way
    sets = [f"stores.graph.path={home}/graph.sqlite", f"stores.vector.path={home}/qdrant", *FAST,
            "pipeline.records_per_shard=4", "pipeline.extract.batch_size=4", "pipeline.embed.batch_size=4",
            "pipeline.write.batch_size=4"]
    cmd = [sys.executable, "-m", "jobs.build_corpus", "--config", "configs/local.yaml",
           "--input", str(small_corpus), *[a for s in sets for a in ("--set", s)]]
    proc = subprocess.Popen(cmd, cwd=REPO, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    # kill once a first document is complete: chunks alone can be written before any document is
    # marked complete, and then there is nothing for the resumed build to skip
    while _complete_documents_in(home / "graph.sqlite") == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and the local Ray cluster it started
    proc.wait()
    partial = _chunks_in(home / "graph.sqlite")
    assert 0 < partial < reference["chunks"], "the kill must land mid-way for this test to mean anything"
    resumed = build_corpus(config(home, FAST), [str(small_corpus)])  # same embedder as the killed run
    assert resumed["status"] == "succeeded"
    assert 0 < resumed["documents_skipped"] < 41  # documents completed before the kill are not redone
    assert store_counts(config(home, FAST)) == reference
