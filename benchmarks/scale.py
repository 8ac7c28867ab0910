"""The cost curve of a corpus build and of serving it, from 10k documents up (embedded default).

    python benchmarks/scale.py [--sizes 10000 50000 200000] [--set embedding.dense=hashing ...]
        [--questions 50] [--work /tmp/scale] [--plot docs/images/scale.png]
    python benchmarks/scale.py --stores servers --ray-address 127.0.0.1:6390 [--sizes 10000 50000]

Each size runs in a process of its own (its driver's peak memory is its own): the scale corpus's
first N articles (``benchmarks/scale_corpus.py``: real sentences, unique PMIDs) are built by the
corpus job (``jobs.build_corpus``, Ray Data on this machine) into fresh embedded stores; then
1% more articles are added as an incremental build; the communities are built
(``jobs.build_communities``: co-occurrence graph, Leiden, offline summaries, their index); the
served retriever is built from the stores (``medgraph.assemble``, timed: its start-up loads the PPR
index, the vector store's in-process index and the embedder) and
PubMedQA's questions are analysed and retrieved one at a time; then 1% of the documents are deleted
and the communities built again (incremental: only communities whose members or evidence changed
are summarised again). ``--no-communities`` leaves both community builds out.

Prints JSON, one entry per size: build seconds, documents/s and chunks/s, chunks and mentions, the
driver's peak RSS, store sizes on disk (SQLite graph store, Qdrant local folder), the incremental
add (seconds, its share of the full build, and whether an added article is retrieved first for
its own abstract at once), the delete (seconds), the PPR index build (seconds: incidence read and
index, from the served index's own timings) and the retriever's whole start-up, retrieval p50 / p95
(ms, analysis included), the community builds (seconds in all, Leiden, summaries, their index;
communities, summarised and reused); and per size its cost per document relative to the smallest size's
(the curve's bend: 1.0 is linear). Records the machine's load average before and after. With
``--plot``, a PNG of documents/s and retrieval p50 against size (matplotlib, the ``bench`` extra).

``--stores servers``: the cluster stores instead (``configs/local-cluster.yaml``: Neo4j + GDS, the
Qdrant server, the writer pool of Write actors): the local Neo4j (``make neo4j-start``; it is
restarted with its data wiped before each size, ``cluster/neo4j/neo4j-dev.sh restart --wipe``) and
the Qdrant server at ``$MEDGRAPH_QDRANT_URL`` (``make qdrant-start``; one collection per size,
dropped first). ``--ray-address``: the driver joins that cluster (the local three-node one:
``cluster/local/ray-local.sh start``, then ``ray-local.sh address``) instead of starting Ray. Disk
sizes are then the Neo4j data directory and the Qdrant server's collection (its storage folder).
Not measured here: the Ray worker processes' memory (only the driver's), serving under load
(``benchmarks/serve_load.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def questions(shared: Path, n: int) -> list[str]:
    data = json.loads((shared / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8"))
    return [item["QUESTION"] for item in list(data.values())[:n]]


NEO4J_DATA = REPO / "cluster" / "neo4j" / "run" / "data"
QDRANT_STORAGE = REPO / ".medgraph" / "qdrant-server" / "storage"


def server_stores(work: Path, size: int) -> None:
    """Name one size's server stores in the environment configs/local-cluster.yaml reads (addresses,
    the collection; its vocabulary under ``work``, shared by the sizes) and restart Neo4j with its
    data wiped (deleting nodes would leave the store files at the previous size's)."""
    url = os.environ.get("MEDGRAPH_QDRANT_URL") or os.environ.get("QDRANT_URL") or "http://127.0.0.1:6343"
    os.environ.update(MEDGRAPH_HOME=str(work), QDRANT_URL=url, MEDGRAPH_COLLECTION=f"scale_n{size}")
    os.environ.setdefault("NEO4J_URI", "bolt://127.0.0.1:7687")
    neo4j = str(REPO / "cluster" / "neo4j" / "neo4j-dev.sh")
    subprocess.run([neo4j, "restart", "--wipe"], check=True, capture_output=True)
    subprocess.run([neo4j, "wait"], check=True, capture_output=True)


def one_size(size: int, work: Path, config: str, overrides: list[str], shared: Path, n_questions: int,
             per_file: int, servers: bool = False, communities: bool = True) -> dict[str, Any]:
    """Build, grow, shrink and query a corpus of ``size`` articles (this process's whole job)."""
    from benchmarks.scale_corpus import FIRST_PMID, article, load_pool, write_corpus
    from jobs.build_communities import build_communities
    from jobs.build_corpus import build_corpus
    from medgraph.assemble import build_analyzer, build_retriever, load_extractor
    from medgraph.config import load_config
    from medgraph.index.writer import CorpusWriter
    from medgraph.stores import make_graph_store, make_vector_store

    root = work / f"n{size}"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    if servers:
        server_stores(work, size)
        stores = []
    else:
        stores = [f"stores.graph.path={root}/graph.sqlite", f"stores.vector.path={root}/qdrant"]
    cfg = load_config(config, [*overrides, *stores])
    if servers:
        from benchmarks.ingest import drop_collection

        drop_collection(cfg)
    pool = load_pool(shared)
    write_corpus(pool, root / "corpus", size, per_file)
    extra = max(size // 100, 1)
    write_corpus(pool, root / "more", extra, per_file, start=size)

    build = build_corpus(cfg, [str(root / "corpus")])
    if build["status"] != "succeeded":
        raise SystemExit(f"the build of {size} articles failed: {build}")
    if servers:  # the Neo4j data directory; the Qdrant server's folder of this size's collection
        disk = {"neo4j_data_mb": round(_du(NEO4J_DATA) / 2**20, 1),
                "qdrant_collection_mb": round(_du(QDRANT_STORAGE / "collections" / f"scale_n{size}") / 2**20, 1)}
    else:
        disk = {"graph_sqlite_mb": round(_du(root / "graph.sqlite") / 2**20, 1),
                "qdrant_mb": round(_du(root / "qdrant") / 2**20, 1)}
    more = build_corpus(cfg, [str(root / "more")])
    community_runs = {"after_build": _communities(build_communities(cfg))} if communities else {}

    graph, vectors = make_graph_store(cfg.stores.graph), make_vector_store(cfg.stores.vector)
    try:
        start = time.perf_counter()
        retriever = build_retriever(cfg, graph, vectors)  # warm_up: PPR index, vector index, embedder
        start_s = round(time.perf_counter() - start, 2)
        ppr = retriever.ppr_index.stats() if retriever.ppr_index is not None else {}
        ppr_build_s = round(ppr["load_s"] + ppr["build_s"], 2) if ppr.get("generation") else None
        analyzer = build_analyzer(cfg, load_extractor(cfg), cache_size=0)
        added = article(pool, size)  # the first article of the increment: answerable at once?
        found = retriever.retrieve(analyzer.analyze(added.sections[0][1], "en")).candidates
        added_found = bool(found) and found[0].chunk is not None and found[0].chunk.doc_id == f"pmid-{FIRST_PMID + size}"
        latencies = []
        for q in questions(shared, n_questions):
            start = time.perf_counter()
            retriever.retrieve(analyzer.analyze(q, "en"))
            latencies.append(_ms(start))
        start = time.perf_counter()
        deleted = CorpusWriter(graph, vectors, lambda _id: None).delete_documents(
            [f"pmid-{FIRST_PMID + i}" for i in range(0, size, 100)])
        delete_s = round(time.perf_counter() - start, 2)
        counts = graph.counts()
    finally:
        graph.close()
        vectors.close()
    if communities:
        community_runs["after_delete_1pct"] = _communities(build_communities(cfg))
    shutil.rmtree(root / "corpus", ignore_errors=True)
    return {
        "size": size, "build_s": build["seconds"], "docs_per_s": round(build["documents_written"] / build["seconds"], 2),
        "chunks_per_s": build["chunks_per_s"], "documents": build["documents_written"],
        "chunks": build["chunks_written"], "mentions": build["mentions_written"], "failures": len(build["failures"]),
        "driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1), **disk,
        "add_1pct": {"documents": more["documents_written"], "seconds": more["seconds"],
                     "share_of_build": round(more["seconds"] / build["seconds"], 4),
                     "added_article_found_first": added_found},
        "delete_1pct": {"documents": deleted.documents, "seconds": delete_s},
        "ppr_index_build_s": ppr_build_s,  # incidence read + index (+ co-occurrence lookups)
        "retriever_start_s": start_s,  # the PPR index, the vector store's in-process index, the embedder
        "communities": community_runs,
        "retrieval_ms": {"n": len(latencies), "p50": _pct(latencies, 0.5), "p95": _pct(latencies, 0.95),
                         "mean": round(statistics.fmean(latencies), 2) if latencies else None},
        "store_after": counts,
    }


def _communities(run: dict[str, Any]) -> dict[str, Any]:
    """The figures of a community build's summary that the curve reports."""
    if run["status"] != "succeeded":
        raise SystemExit(f"the community build failed: {run}")
    keys = ("seconds", "detect_s", "summarise_s", "index_s", "entities", "edges", "communities", "levels",
            "summarised", "reused", "removed", "backend")
    return {k: run.get(k) for k in keys}


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["size"] for r in results]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot(sizes, [r["docs_per_s"] for r in results], marker="o")
    a.set(xscale="log", xlabel="documents", ylabel="build: documents/s", title="build throughput")
    b.plot(sizes, [r["retrieval_ms"]["p50"] for r in results], marker="o", label="p50")
    b.plot(sizes, [r["retrieval_ms"]["p95"] for r in results], marker="o", label="p95")
    b.set(xscale="log", xlabel="documents", ylabel="ms", title="retrieval (analysis included)")
    b.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 200_000])
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--questions", type=int, default=50)
    ap.add_argument("--per-file", type=int, default=2500, help="articles per corpus file (one shard each)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/medgraph-scale"))
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--plot", type=Path)
    ap.add_argument("--stores", choices=["embedded", "servers"], default="embedded")
    ap.add_argument("--ray-address", help="join this Ray cluster (GCS address) instead of starting one")
    ap.add_argument("--no-communities", action="store_true", help="leave the community builds out")
    ap.add_argument("--one-size", type=int, help=argparse.SUPPRESS)  # the child process of one size
    args = ap.parse_args(argv)
    servers = args.stores == "servers"
    if servers and args.config == str(REPO / "configs" / "local.yaml"):
        args.config = str(REPO / "configs" / "local-cluster.yaml")
    if args.ray_address:
        os.environ["RAY_ADDRESS"] = args.ray_address  # init_ray joins it (the child inherits it)
    if args.one_size:
        print(json.dumps(one_size(args.one_size, args.work, args.config, args.overrides, args.shared,
                                  args.questions, args.per_file, servers, not args.no_communities)))
        return 0
    load = [round(x, 2) for x in os.getloadavg()]
    results = []
    for size in sorted(args.sizes):
        cmd = [sys.executable, __file__, "--one-size", str(size), "--config", args.config, "--questions",
               str(args.questions), "--per-file", str(args.per_file), "--work", str(args.work),
               "--shared", str(args.shared), "--stores", args.stores,
               *(["--no-communities"] if args.no_communities else []),
               *[a for s in args.overrides for a in ("--set", s)]]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        results.append(json.loads(out.strip().splitlines()[-1]))
        print(f"{size}: {results[-1]['build_s']} s", file=sys.stderr)
    base = results[0]["build_s"] / results[0]["size"]
    for r in results:
        r["cost_per_doc_vs_smallest"] = round(r["build_s"] / r["size"] / base, 3)
    if args.plot:
        plot(results, args.plot)
    print(json.dumps({"benchmark": "scale", "date": time.strftime("%Y-%m-%d %H:%M"), "config": args.config,
                      "stores": args.stores, "ray_address": args.ray_address,
                      "overrides": args.overrides, "load_before": load, "load_after": [round(x, 2) for x in os.getloadavg()],
                      "cpus": os.cpu_count(), "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
