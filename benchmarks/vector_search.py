"""Search latency of the embedded vector store: the in-process index vs Qdrant local mode's own search.

Input: ``--points`` (default 4000, about the PubMedQA benchmark's chunk count; repeatable) sizes
a synthetic collection (seeded RNG): 384-dim dense vectors and ~60-term sparse vectors over a
Zipf-distributed 50k-term vocabulary, with Qdrant's IDF modifier (the lexical embedder's layout).
``--queries`` (default 30) random queries per kind (dense; sparse of 8 terms; hybrid).

Output: JSON on stdout, per collection size: p50/p95 ms of ``search_dense``, ``search_sparse`` and
``hybrid_search`` through ``QdrantVectorStore`` with its ``LocalVectorIndex`` (``index``) and with
``search_index = False`` (``qdrant``: qdrant-client's local-mode search), the speed-up
(qdrant p50 / index p50, measured in the same run), the index build time, and the top-10 overlap
of the two (1.0 = the same points). Then ``--rounds`` (default 10) rounds of a write followed by a
hybrid search, alternating two ways in the same run: ``incremental`` (the store hands the write to
its index, as it does by default) and ``reread`` (the index dropped after the write, so the search
reads the collection whole, as every read after a write did before the index followed writes);
per way and kind of write (upsert of 10 new points; delete of 10 points) the p50 ms of the write
and of the search after it.

    python benchmarks/vector_search.py [--points 4000 --points 20000] [--queries 30] [--rounds 10]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from medgraph.config.models import QdrantLocalConfig
from medgraph.embed.base import SparseVector
from medgraph.schemas import Chunk
from medgraph.stores import make_vector_store
from medgraph.stores.vector import QdrantVectorStore

DIM, VOCAB, TERMS_PER_DOC, LIMIT = 384, 50_000, 60, 40


def build(n: int, rng: np.random.Generator) -> QdrantVectorStore:
    store = make_vector_store(QdrantLocalConfig(path=":memory:", collection="bench", upsert_batch_size=512))
    store.ensure_collection(DIM, sparse_idf=True)
    for start in range(0, n, 1000):
        ids = range(start, min(start + 1000, n))
        chunks = [Chunk(f"c{i}", f"d{i}", 0, "x", ["S"], f"d{i}", "x", 1, "en") for i in ids]
        dense = rng.normal(size=(len(chunks), DIM)).astype(np.float32)
        sparse = [sparse_vector(rng, TERMS_PER_DOC) for _ in chunks]
        store.upsert(chunks, dense, sparse)
    return store


def sparse_vector(rng: np.random.Generator, terms: int) -> SparseVector:
    return SparseVector.from_arrays(rng.zipf(1.3, size=terms) % VOCAB, rng.uniform(0.2, 2.0, size=terms))


def timed(fn: Callable[[int], Any], arg: int) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn(arg)
    return out, (time.perf_counter() - start) * 1000


def measure(n: int, n_queries: int, rounds: int, seed: int = 0) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    store = build(n, rng)
    start = time.perf_counter()
    store.search_dense(np.ones(DIM, dtype=np.float32), 1)  # builds the index
    build_s = time.perf_counter() - start
    dense_q = [rng.normal(size=DIM).astype(np.float32) for _ in range(n_queries)]
    sparse_q = [sparse_vector(rng, 8) for _ in range(n_queries)]
    kinds: dict[str, Callable[[int], Any]] = {
        "dense": lambda i: store.search_dense(dense_q[i], LIMIT),
        "sparse": lambda i: store.search_sparse(sparse_q[i], LIMIT),
        "hybrid": lambda i: store.hybrid_search(dense_q[i], sparse_q[i], LIMIT),
    }
    out: dict[str, Any] = {"points": n, "index_build_s": round(build_s, 3)}
    for kind, fn in kinds.items():
        row: dict[str, Any] = {}
        results = {}
        for mode, on in (("index", True), ("qdrant", False)):
            store.search_index = on
            hits, ms = [], []
            for i in range(n_queries):
                h, t = timed(fn, i)
                hits.append(h)
                ms.append(t)
            results[mode] = hits
            row[mode] = {"p50_ms": round(float(np.median(ms)), 3), "p95_ms": round(float(np.percentile(ms, 95)), 3)}
        store.search_index = True
        row["speedup_p50"] = round(row["qdrant"]["p50_ms"] / max(row["index"]["p50_ms"], 1e-6), 1)
        overlaps = [
            len({h.chunk_id for h in a[:10]} & {h.chunk_id for h in b[:10]}) / max(min(10, len(b)), 1)
            for a, b in zip(results["index"], results["qdrant"], strict=True)
        ]
        row["top10_overlap"] = round(float(np.mean(overlaps)), 4)
        out[kind] = row
    out["read_after_write"] = read_after_write(store, rng, n, rounds)
    store.close()
    return out


def read_after_write(store: QdrantVectorStore, rng: np.random.Generator, n: int, rounds: int) -> dict[str, Any]:
    """Write, then search, ``rounds`` times per way (module docstring); ways alternate."""
    times: dict[str, list[float]] = {}
    next_id = n
    for r in range(2 * rounds):
        way = ("incremental", "reread")[r % 2]
        for write in ("upsert", "delete"):
            start = time.perf_counter()
            if write == "upsert":
                chunks = [Chunk(f"c{i}", f"d{i}", 0, "x", ["S"], f"d{i}", "x", 1, "en")
                          for i in range(next_id, next_id + 10)]
                next_id += 10
                store.upsert(chunks, rng.normal(size=(10, DIM)).astype(np.float32),
                             [sparse_vector(rng, TERMS_PER_DOC) for _ in chunks])
            else:
                store.delete_chunks([f"c{int(i)}" for i in rng.choice(n, size=10, replace=False)])
            written = time.perf_counter()
            if way == "reread":
                store._index = None  # as before: the first read after a write reads the collection
            read_start = time.perf_counter()
            store.hybrid_search(rng.normal(size=DIM).astype(np.float32), sparse_vector(rng, 8), LIMIT)
            done = time.perf_counter()
            times.setdefault(f"{way}_{write}_write_ms", []).append((written - start) * 1000)
            times.setdefault(f"{way}_{write}_then_search_ms", []).append((done - read_start) * 1000)
    out: dict[str, Any] = {key: round(float(np.median(v)), 3) for key, v in times.items()}
    for write in ("upsert", "delete"):
        out[f"{write}_then_search_speedup_p50"] = round(
            out[f"reread_{write}_then_search_ms"] / max(out[f"incremental_{write}_then_search_ms"], 1e-6), 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--points", type=int, action="append")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    sizes = args.points or [4000]
    report = {"load_avg_start": os.getloadavg(), "sizes": [measure(n, args.queries, args.rounds) for n in sizes],
              "load_avg_end": os.getloadavg()}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
