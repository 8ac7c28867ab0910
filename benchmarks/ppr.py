"""Latency and accuracy of Personalized PageRank over the Entity—Chunk graph.

Input: ``--mentions`` (default 1,000,000) sizes a synthetic bipartite graph (seeded RNG: ~3.3
entity mentions per chunk, 6 chunks per entity, Zipf entity popularity); ``--graph-db PATH``
adds the graph of an embedded store (``graph.sqlite``). Per graph, ``--queries`` (default 200)
random queries of 1–3 seeds with linking-score weights in [0.5, 1], seeds drawn two ways:
``popular`` (∝ mention count, as questions mention entities) and ``uniform`` (over entities).

Output: JSON on stdout. Per graph and seed draw: p50/p95 latency (ms) of ``PPRIndex.query``
(the index's default ``tol``, ``tolerance_for``, and the ``--tols`` sweep), of full-graph power iteration to 1e-6 (the
alternative algorithm), of igraph ``personalized_pagerank`` (graph and reset vectors built
outside the timing), of networkx ``pagerank`` (``--nx-queries``, default 5); the index build
time; top-10 overlap of each with ``PPRIndex.exact`` (strict, and counting chunks tied with the
exact 10th score as hits); speed-up of ``PPRIndex.query`` over igraph and networkx.

    python benchmarks/ppr.py --mentions 1000000 [--graph-db .medgraph/store/graph.sqlite]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from medgraph.graph.ppr import PPRIndex
from medgraph.llm.base import resident_memory_bytes

DAMPING = 0.5
TOP = 10
Query = dict[str, float]


def synthetic_graph(
    mentions: int, seed: int = 0, zipf: float = 1.0
) -> tuple[sp.csr_matrix, list[str], list[str]]:
    """Entity × chunk mention counts: ~3.3 mentions per chunk, Zipf(``zipf``) entity popularity."""
    rng = np.random.default_rng(seed)
    n_chunk = max(1, round(mentions / 3.3))
    n_ent = max(2, n_chunk // 6)
    per_chunk = 1 + rng.poisson(2.3, n_chunk)
    popularity = 1.0 / np.arange(1, n_ent + 1) ** zipf
    ents = rng.choice(n_ent, size=int(per_chunk.sum()), p=popularity / popularity.sum())
    chunks = np.repeat(np.arange(n_chunk), per_chunk)
    b = sp.csr_matrix((np.ones(len(ents)), (ents, chunks)), shape=(n_ent, n_chunk))
    b.sum_duplicates()
    keep_e, keep_c = np.flatnonzero(b.getnnz(axis=1)), np.flatnonzero(b.getnnz(axis=0))
    b = b[keep_e][:, keep_c].tocsr()
    return b, [f"D{i:06d}" for i in keep_e], [f"c{j:07d}" for j in keep_c]


def random_queries(b: sp.csr_matrix, entity_ids: list[str], n: int, draw: str, seed: int = 1) -> list[Query]:
    rng = np.random.default_rng(seed)
    counts = np.asarray(b.sum(axis=1)).ravel()
    p = counts / counts.sum() if draw == "popular" else None
    out = []
    for _ in range(n):
        k = int(rng.integers(1, 4))
        picked = rng.choice(len(entity_ids), size=k, replace=False, p=p)
        out.append({entity_ids[i]: float(rng.uniform(0.5, 1.0)) for i in picked})
    return out


def top_ids(scores: np.ndarray, k: int = TOP) -> np.ndarray:
    order = np.lexsort((np.arange(len(scores)), -scores))
    return order[:k][scores[order[:k]] > 0]


def overlap(found: list[int], exact: np.ndarray) -> tuple[float, float]:
    """Strict top-k set overlap, and overlap counting chunks tied with the exact k-th score."""
    best = top_ids(exact)
    if len(best) == 0:
        return 1.0, 1.0
    strict = len(set(found[:TOP]) & set(best.tolist())) / len(best)
    kth = exact[best[-1]]
    tied = sum(1 for c in found[:TOP] if exact[c] >= kth * (1 - 1e-9)) / len(best)
    return strict, min(tied, 1.0)


def timed(
    fn: Callable[[Query], list[int]],
    queries: list[Query],
    exact: list[np.ndarray],
    prepare: Callable[[Query], None] | None = None,
) -> dict[str, Any]:
    """Wall and CPU (process, all threads) latency per query; ``prepare`` runs untimed before each."""
    if prepare is not None:
        prepare(queries[0])
    fn(queries[0])  # warm-up
    wall, cpu, strict, tied = [], [], [], []
    for q, ex in zip(queries, exact, strict=False):
        if prepare is not None:
            prepare(q)
        start, start_cpu = time.perf_counter(), time.process_time()
        found = fn(q)
        cpu.append((time.process_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start) * 1000)
        s, t = overlap(found, ex)
        strict.append(s)
        tied.append(t)
    return {
        "n": len(wall),
        **_percentiles("", wall),
        **_percentiles("cpu_", cpu),
        "top10_overlap": round(float(np.mean(strict)), 4),
        "top10_overlap_ties": round(float(np.mean(tied)), 4),
    }


def _percentiles(prefix: str, values: list[float]) -> dict[str, float]:
    return {f"{prefix}p{q}_ms": round(float(np.percentile(values, q)), 3) for q in (50, 95)}


def ours(index: PPRIndex, tol: float | None) -> Callable[[Query], list[int]]:
    pos = {c: j for j, c in enumerate(index.chunk_ids)}
    return lambda q: [pos[h.chunk_id] for h in index.query(q, DAMPING, tol=tol)][:TOP]


def power(index: PPRIndex) -> Callable[[Query], list[int]]:
    return lambda q: top_ids(index.exact(q, DAMPING, tol=1e-6)).tolist()


class IgraphRunner:
    """igraph's PRPACK solver; the graph and each query's dense reset vector are built untimed."""

    def __init__(self, b: sp.csr_matrix, entity_ids: list[str]) -> None:
        import igraph as ig

        start = time.perf_counter()
        coo = b.tocoo()
        self.n_ent, n_chunk = b.shape
        edges = np.column_stack([coo.row, coo.col + self.n_ent]).tolist()
        self.graph = ig.Graph(n=self.n_ent + n_chunk, edges=edges)
        self.weights = coo.data.tolist()
        self.build_s = round(time.perf_counter() - start, 3)
        self.ent_pos = {e: i for i, e in enumerate(entity_ids)}
        self.reset: list[float] = []

    def prepare(self, q: Query) -> None:
        self.reset = [0.0] * self.graph.vcount()
        for e, w in q.items():
            self.reset[self.ent_pos[e]] = w

    def __call__(self, q: Query) -> list[int]:
        pr = self.graph.personalized_pagerank(
            directed=False, damping=DAMPING, reset=self.reset, weights=self.weights
        )
        found: list[int] = top_ids(np.asarray(pr)[self.n_ent :]).tolist()
        return found


def networkx_runner(b: sp.csr_matrix, entity_ids: list[str]) -> tuple[Callable[[Query], list[int]], float]:
    import networkx as nx

    start = time.perf_counter()
    coo = b.tocoo()
    n_ent, n_chunk = b.shape
    graph = nx.Graph()
    graph.add_nodes_from(range(n_ent + n_chunk))
    graph.add_weighted_edges_from(
        zip(coo.row.tolist(), (coo.col + n_ent).tolist(), coo.data.tolist(), strict=True)
    )
    build = time.perf_counter() - start
    ent_pos = {e: i for i, e in enumerate(entity_ids)}

    def run(q: Query) -> list[int]:
        pr = nx.pagerank(
            graph,
            alpha=DAMPING,
            personalization={ent_pos[e]: w for e, w in q.items()},
            weight="weight",
            tol=1e-10,
            max_iter=1000,
        )
        scores = np.array([pr.get(n_ent + j, 0.0) for j in range(n_chunk)])
        found: list[int] = top_ids(scores).tolist()
        return found

    return run, build


def bench_graph(
    b: sp.csr_matrix, entity_ids: list[str], chunk_ids: list[str], args: argparse.Namespace
) -> dict[str, Any]:
    start, rss = time.perf_counter(), resident_memory_bytes()
    index = PPRIndex(b, entity_ids, chunk_ids)
    out: dict[str, Any] = {
        "entities": len(entity_ids),
        "chunks": len(chunk_ids),
        "edges": int(b.nnz),
        "mentions": int(b.sum()),
        "max_entity_mentions": int(np.asarray(b.sum(axis=1)).max()),
        "index_method": index.method,
        "index_build_s": round(time.perf_counter() - start, 3),
        "index_rss_gb": round((resident_memory_bytes() - rss) / 2**30, 3),
        "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 3),
        "default_tol": index.default_tol,
    }
    start = time.perf_counter()
    fallback = PPRIndex(b, entity_ids, chunk_ids, max_pairs=0)
    out["bipartite_index_build_s"] = round(time.perf_counter() - start, 3)
    ig_run = IgraphRunner(b, entity_ids)
    out["igraph_build_s"] = ig_run.build_s
    nx_run = networkx_runner(b, entity_ids) if args.nx_queries > 0 else None
    if nx_run is not None:
        out["networkx_build_s"] = nx_run[1]
    for draw in ("popular", "uniform"):
        out[draw] = bench_draw(index, fallback, b, draw, ig_run, nx_run[0] if nx_run else None, args)
    return out


def bench_draw(
    index: PPRIndex,
    fallback: PPRIndex,
    b: sp.csr_matrix,
    draw: str,
    ig_run: IgraphRunner,
    nx_run: Callable[[Query], list[int]] | None,
    args: argparse.Namespace,
) -> dict[str, Any]:
    queries = random_queries(b, index.entity_ids, args.queries, draw)
    exact = [index.exact(q, DAMPING) for q in queries]
    res: dict[str, Any] = {"ppr_query": timed(ours(index, None), queries, exact)}
    for tol in args.tols:
        res[f"ppr_query_tol{tol:g}"] = timed(ours(index, tol), queries, exact)
    res["ppr_query_bipartite_fallback"] = timed(ours(fallback, None), queries, exact)
    res["power_iteration_tol1e-6"] = timed(power(index), queries[: args.power_queries], exact)
    res["igraph"] = timed(ig_run, queries[: args.igraph_queries], exact, prepare=ig_run.prepare)
    if nx_run is not None:
        res["networkx"] = timed(nx_run, queries[: args.nx_queries], exact)
    for name in ("igraph", "networkx"):
        if name in res:
            for key in ("p50_ms", "cpu_p50_ms"):
                res[f"speedup_vs_{name}_{key[:-3]}"] = round(res[name][key] / res["ppr_query"][key], 1)
    return res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mentions", type=int, default=1_000_000)
    parser.add_argument("--graph-db", type=Path, default=None)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--nx-queries", type=int, default=5)
    parser.add_argument("--power-queries", type=int, default=20)
    parser.add_argument("--igraph-queries", type=int, default=200)
    parser.add_argument("--tols", type=float, nargs="*", default=[1e-5, 1e-6, 1e-7])
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    report: dict[str, Any] = {"damping": DAMPING, "cpus": os.cpu_count(), "load_avg_start": os.getloadavg()}
    if args.graph_db is not None:
        from medgraph.stores.embedded import EmbeddedGraphStore

        store = EmbeddedGraphStore(args.graph_db)
        report["graph_db"] = {"path": str(args.graph_db), **bench_graph(*store.incidence(), args)}
        store.close()
    if args.mentions > 0:
        report["synthetic"] = bench_graph(*synthetic_graph(args.mentions), args)
    report["load_avg_end"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
