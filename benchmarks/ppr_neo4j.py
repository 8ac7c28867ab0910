"""PPR on the Neo4j configuration: the in-process index fed from the store vs GDS PageRank.

Input: ``--mentions`` (default 100,000 and 1,000,000) sizes the synthetic bipartite graph of
``benchmarks/ppr.py`` (seeded: ~3.3 entity mentions per chunk, 6 chunks per entity, Zipf entity
popularity). Graphs up to ``--neo4j-max`` mentions (default 1,000,000) are bulk-loaded into the
Neo4j at ``--uri`` (the store's schema: ``(:Entity {mesh_id})-[:MENTIONED_IN]->(:Chunk
{chunk_id})-[:FROM_DOC]->(:Document)``, one relationship per mention, 8 chunks a document) under an
ID prefix unique to the run, and only those nodes are deleted afterwards; larger graphs are measured
in process only (incidence from memory). ``--queries`` (default 200) queries of 1–3 seeds drawn in
proportion to mention counts, linking-score weights in [0.5, 1], damping 0.5, top 10.

Output: JSON on stdout with the date, CPU count and ``uptime`` load at start and end. Per graph:
the Neo4j load time; ``graph_signature()`` latency (what the served index polls);
``Neo4jGraphStore.incidence()`` time (the paged read) and ``PPRIndex`` build time, the index's
memory (its arrays and ID tables) and the process RSS growth over read + build; p50/p95 latency of
``ProcessPPR.query`` (the retriever's ``ppr_engine: process``; also while a rebuild runs in the
background) and of the store's GDS ``ppr``
(``ppr_engine: store``; its projection time apart, paid once per write generation) over the same
queries (``--gds-queries``, default 100), their ratio, and the top-10 overlap of each with the
exact PPR (chunks tied with the exact 10th score count as hits); with no Neo4j load, the in-process
figures from the incidence in memory.

    python benchmarks/ppr_neo4j.py [--mentions 100000 1000000] [--neo4j-max 1000000] [--queries 200]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ppr import random_queries, synthetic_graph  # noqa: E402 - benchmarks/ppr.py, the same graphs

from medgraph.config.models import Neo4jGraphStoreConfig  # noqa: E402
from medgraph.eval.metrics import overlap_at  # noqa: E402
from medgraph.graph.ppr import PPRIndex  # noqa: E402
from medgraph.llm.base import resident_memory_bytes  # noqa: E402
from medgraph.retrieve.ppr import ProcessPPR  # noqa: E402

DAMPING, TOP = 0.5, 10
Query = dict[str, float]
_BATCH = 1000  # chunks per load transaction (bounded transaction memory)
_DOCUMENTS = """
UNWIND $rows AS row
CREATE (:Document {doc_id: row.doc_id, title: row.doc_id, language: 'en', content_hash: 'h', status: 'complete',
                   n_chunks: row.n, source_id: row.doc_id, source_path: '', updated_at: $at})
"""
_ENTITIES = "UNWIND $ids AS id CREATE (:Entity:Disease {mesh_id: id, name: id, category: 'Disease'})"
_CHUNKS = """
UNWIND $rows AS row
MATCH (d:Document {doc_id: row.doc_id})
CREATE (c:Chunk {chunk_id: row.chunk_id, doc_id: row.doc_id, doc_hash: 'h', idx: row.idx, text: '',
                 language: 'en', title: row.doc_id})-[:FROM_DOC]->(d)
WITH c, row
UNWIND row.mentions AS m
MATCH (e:Entity {mesh_id: m.mesh_id})
CREATE (e)-[:MENTIONED_IN {start: m.start, `end`: m.start + 3, surface: 'x', method: 'exact', score: 1.0}]->(c)
"""
_DELETE: tuple[tuple[str, str], ...] = (
    ("Chunk", "MATCH (n:Chunk) WHERE n.chunk_id STARTS WITH $prefix "
              "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 1000 ROWS"),
    ("Entity", "MATCH (n:Entity) WHERE n.mesh_id STARTS WITH $prefix "
               "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 1000 ROWS"),
    ("Document", "MATCH (n:Document) WHERE n.doc_id STARTS WITH $prefix "
                 "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 1000 ROWS"),
)


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def rss_mb() -> float:
    return resident_memory_bytes() / 2**20


def index_mb(index: PPRIndex) -> float:
    """The index's numpy arrays plus its ID lists and entity lookup table."""
    arrays = 0
    for value in vars(index).values():
        parts = [value] if isinstance(value, np.ndarray) else []
        if hasattr(value, "indptr"):
            parts = [value.indptr, value.indices, value.values]
        if isinstance(value, tuple):
            parts = [p for v in value for p in ([v.indptr, v.indices, v.values] if hasattr(v, "indptr") else [v])]
        arrays += sum(p.nbytes for p in parts if isinstance(p, np.ndarray))
    ids = sum(sys.getsizeof(s) for s in index.entity_ids) + sum(sys.getsizeof(s) for s in index.chunk_ids)
    ids += sys.getsizeof(index.entity_ids) + sys.getsizeof(index.chunk_ids) + sys.getsizeof(index._entity_index)
    return round((arrays + ids) / 2**20, 1)


def percentiles(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(float(np.percentile(values, 50)), 3), "p95_ms": round(float(np.percentile(values, 95)), 3)}


def latency(fn: Callable[[Query], list[str]], queries: list[Query], exact: list[dict[str, float]]) -> dict[str, Any]:
    fn(queries[0])  # warm-up
    wall, hits, found_all = [], [], []
    for q, ex in zip(queries, exact, strict=False):
        start = time.perf_counter()
        found = fn(q)
        wall.append((time.perf_counter() - start) * 1000)
        hits.append(overlap_at(found, ex, TOP))
        found_all.append(found[:TOP])
    return {"n": len(wall), **percentiles(wall), "top10_overlap_ties": round(float(np.mean(hits)), 4),
            "_found": found_all}


def exact_scores(index: PPRIndex, queries: list[Query]) -> list[dict[str, float]]:
    out = []
    for q in queries:
        x = index.exact(q, DAMPING, tol=1e-12)
        top = np.argsort(-x)[: 4 * TOP]  # enough to judge ties at the 10th
        out.append({index.chunk_ids[j]: float(x[j]) for j in top if x[j] > 0})
    return out


# --- Neo4j ---------------------------------------------------------------------------------


def load(store: Any, b: sp.csr_matrix, entity_ids: list[str], chunk_ids: list[str]) -> float:
    """Write the graph (one MENTIONED_IN per mention) in batches; seconds."""
    start = time.perf_counter()
    bt = b.T.tocsr()  # chunk → entity counts
    with store._driver.session(database=store.cfg.database) as session:
        for i in range(0, len(entity_ids), 20_000):
            session.execute_write(lambda tx, ids: tx.run(_ENTITIES, ids=ids).consume(), entity_ids[i:i + 20_000])
        docs = [{"doc_id": f"{chunk_ids[j]}-doc", "n": min(8, len(chunk_ids) - j)} for j in range(0, len(chunk_ids), 8)]
        for i in range(0, len(docs), 20_000):
            session.execute_write(lambda tx, rows: tx.run(_DOCUMENTS, rows=rows, at=time.time()).consume(),
                                  docs[i:i + 20_000])
        for i in range(0, len(chunk_ids), _BATCH):
            rows = []
            for j in range(i, min(i + _BATCH, len(chunk_ids))):
                lo, hi = bt.indptr[j], bt.indptr[j + 1]
                mentions = [{"mesh_id": entity_ids[e], "start": 4 * k}
                            for e, n in zip(bt.indices[lo:hi].tolist(), bt.data[lo:hi].tolist(), strict=True)
                            for k in range(int(n))]
                rows.append({"chunk_id": chunk_ids[j], "doc_id": f"{chunk_ids[j - j % 8]}-doc", "idx": j % 8,
                             "mentions": mentions})
            session.execute_write(lambda tx, rows: tx.run(_CHUNKS, rows=rows).consume(), rows)
    return time.perf_counter() - start


def delete(store: Any, prefix: str) -> None:
    with store._driver.session(database=store.cfg.database) as session:
        for _, statement in _DELETE:
            session.run(statement, prefix=prefix).consume()


def bench_neo4j(store: Any, b: sp.csr_matrix, entity_ids: list[str], chunk_ids: list[str],
                args: argparse.Namespace) -> dict[str, Any]:
    prefix = f"bppr{uuid.uuid4().hex[:6]}-"
    ents, chunks = [prefix + e for e in entity_ids], [prefix + c for c in chunk_ids]
    out: dict[str, Any] = {"entities": len(ents), "chunks": len(chunks), "mentions": int(b.sum())}
    try:
        out["neo4j_load_s"] = round(load(store, b, ents, chunks), 1)
        sig = []
        for _ in range(20):
            start = time.perf_counter()
            store.graph_signature()
            sig.append((time.perf_counter() - start) * 1000)
        out["graph_signature"] = percentiles(sig)
        rss = rss_mb()
        engine = ProcessPPR(store, poll_s=3600)
        state = engine.ensure_built()
        out["incidence_load_s"] = round(state.load_s, 2)
        out["index_build_s"] = round(state.build_s, 2)
        out["index_method"] = state.index.method
        out["index_mb"] = index_mb(state.index)
        out["rss_growth_mb"] = round(rss_mb() - rss, 1)
        assert len([c for c in state.index.chunk_ids if c.startswith(prefix)]) == len(chunks)
        queries = [{prefix + e: w for e, w in q.items()} for q in random_queries(b, entity_ids, args.queries, "popular")]
        exact = exact_scores(state.index, queries)
        start = time.perf_counter()
        store.projection(force=True)
        out["gds_projection_s"] = round(time.perf_counter() - start, 2)
        process = latency(lambda q: [h.chunk_id for h in engine.query(q, DAMPING, TOP)], queries, exact)
        gds = latency(lambda q: [h.chunk_id for h in store.ppr(q, DAMPING, TOP)], queries[: args.gds_queries],
                      exact)
        found_p, found_g = process.pop("_found"), gds.pop("_found")
        out["ppr_process"] = process
        out["ppr_gds"] = gds
        out["gds_over_process_p50"] = round(gds["p50_ms"] / process["p50_ms"], 1)
        out["gds_over_process_p95"] = round(gds["p95_ms"] / process["p95_ms"], 1)
        out["top10_overlap_process_vs_gds"] = round(float(np.mean(
            [len(set(p) & set(g)) / max(1, len(g)) for p, g in zip(found_p, found_g, strict=False)])), 4)
        out["ppr_process_during_rebuild"] = during_rebuild(engine, queries)
    finally:
        start = time.perf_counter()
        delete(store, prefix)
        projection = store._projection
        if projection is not None:
            store.read("CALL gds.graph.drop($g, false) YIELD graphName RETURN graphName", g=projection[2])
        out["cleanup_s"] = round(time.perf_counter() - start, 1)
    return out


def during_rebuild(engine: ProcessPPR, queries: list[Query]) -> dict[str, Any]:
    """Query latency while a background rebuild (incidence read + build) runs; served from the old index."""
    generation = engine.stats()["generation"]
    engine.refresh(wait=False)
    wall: list[float] = []
    i = 0
    while engine.rebuilding:
        start = time.perf_counter()
        engine.query(queries[i % len(queries)], DAMPING, TOP)
        wall.append((time.perf_counter() - start) * 1000)
        i += 1
        time.sleep(0.01)  # questions arriving, not a busy loop
    engine.wait()
    assert engine.stats()["generation"] == generation + 1
    return {"n": len(wall), **(percentiles(wall) if wall else {})}


def bench_memory(b: sp.csr_matrix, entity_ids: list[str], chunk_ids: list[str],
                 args: argparse.Namespace) -> dict[str, Any]:
    """The in-process figures with the incidence from memory (no Neo4j)."""
    rss = rss_mb()
    start = time.perf_counter()
    index = PPRIndex(b, entity_ids, chunk_ids)
    out: dict[str, Any] = {"entities": len(entity_ids), "chunks": len(chunk_ids), "mentions": int(b.sum()),
                           "index_build_s": round(time.perf_counter() - start, 2), "index_method": index.method,
                           "index_mb": index_mb(index), "rss_growth_mb": round(rss_mb() - rss, 1)}
    queries = random_queries(b, entity_ids, args.queries, "popular")
    exact = exact_scores(index, queries)
    process = latency(lambda q: [h.chunk_id for h in index.query(q, DAMPING, TOP)], queries, exact)
    process.pop("_found")
    out["ppr_process"] = process
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--uri", default="bolt://127.0.0.1:7687")
    ap.add_argument("--password-env", default="NEO4J_DEV_PASSWORD")
    ap.add_argument("--mentions", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--neo4j-max", type=int, default=1_000_000, help="larger graphs: in process only")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--gds-queries", type=int, default=100)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    report: dict[str, Any] = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                              "cpus": os.cpu_count(), "uptime_start": uptime(), "damping": DAMPING, "top_k": TOP}
    store = None
    if any(m <= args.neo4j_max for m in args.mentions):
        from medgraph.stores.neo4j_store import Neo4jGraphStore

        store = Neo4jGraphStore(Neo4jGraphStoreConfig(kind="neo4j", uri=args.uri, password_env=args.password_env))
    try:
        for mentions in args.mentions:
            graph = synthetic_graph(mentions)
            key = f"synthetic_{mentions}"
            report[key] = {"in_memory": bench_memory(*graph, args)}
            if store is not None and mentions <= args.neo4j_max:
                report[key]["neo4j"] = bench_neo4j(store, *graph, args)
            print(json.dumps({key: report[key]}), file=sys.stderr)
    finally:
        if store is not None:
            store.close()
    report["uptime_end"] = uptime()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
