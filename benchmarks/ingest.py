"""Corpus-build throughput: each stage alone in one process vs the Ray job, same corpus, same run.

    python benchmarks/ingest.py [--input FILE ...] [--n N] [--set a.b=c ...] [--workers 1 2]
                                [--ray-address ADDR --label NAME] [--config CFG --wipe-stores]

Default input: the SciFact corpus (``../shared/data/ir/scifact/corpus.part-*.jsonl``, 5,183 abstracts).

Prints JSON:
- ``stages``: seconds, documents/s and chunks/s of each step run alone in this process on one
  thread, through the same code the job runs (``medgraph.index.pipeline``): load, chunk,
  extract (normalise + NER + linking), embed (dense + sparse), write (``CorpusWriter`` into fresh
  embedded stores); ``stages_total_s`` is their sum, plus the vocabulary load;
- ``ray``: for each embedding pool size in ``--workers``, the job (``python -m jobs.build_corpus``,
  fresh stores) run as a user runs it: its wall time from the command's start, its own summary
  time, chunks/s, and ``job_vs_stages`` = wall / ``stages_total_s`` (1.0: Ray adds nothing over
  running the steps one after another; below 1: the pools overlap the steps);
- with ``--ray-address`` the jobs join that cluster (e.g. the local multi-node cluster of
  ``cluster/local/``) instead of starting a local Ray, and ``--label`` names the run in the JSON;
- ``--config`` with server stores (e.g. ``configs/local-cluster.yaml``: Neo4j + a Qdrant server,
  written by the writer actors) needs ``--wipe-stores``: before each run every node of that Neo4j
  database and the Qdrant collection are deleted, so only point it at stores you can empty.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.config import load_config  # noqa: E402
from medgraph.ingest.loaders import expand_inputs, load_shard, plan_shards  # noqa: E402
from medgraph.schemas import Document  # noqa: E402

SCIFACT = sorted((REPO.parent / "shared" / "data" / "ir" / "scifact").glob("corpus.part-*.jsonl"))


def timed(fn: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def rate(n_docs: int, n_chunks: int, seconds: float) -> dict[str, float]:
    return {"seconds": round(seconds, 2), "docs_per_s": round(n_docs / max(seconds, 1e-9), 1),
            "chunks_per_s": round(n_chunks / max(seconds, 1e-9), 1)}


def stage_rates(cfg: Any, corpus: list[Path]) -> dict[str, Any]:
    """Every step alone, one after another, in this process (see the module docstring)."""
    from jobs.build_corpus import ensure_vocabulary, open_writer
    from medgraph.assemble import load_extractor
    from medgraph.embed import make_embedder
    from medgraph.index.pipeline import chunk_documents, embed_chunks, extract_mentions
    from medgraph.ingest.chunking import Chunker

    files, _ = expand_inputs(corpus)
    docs, t_load = timed(lambda: [d for s in plan_shards(files, cfg.pipeline.records_per_shard)
                                  for d in load_shard(s) if isinstance(d, Document)])
    chunker = Chunker(cfg.chunking)
    batch, t_chunk = timed(lambda: chunk_documents(docs, chunker))
    vocab, t_vocab = timed(lambda: ensure_vocabulary(cfg))
    extractor = load_extractor(cfg, vocab)
    (items, _), t_extract = timed(lambda: extract_mentions(batch.items, extractor, cfg.normalise.enabled))
    embedder = make_embedder(cfg.embedding)
    embedder.embed_dense([it.chunk.indexed_text for it in items[:8]])  # warm-up outside the timing
    size = cfg.pipeline.embed.batch_size
    _, t_embed = timed(lambda: [embed_chunks(items[i:i + size], embedder) for i in range(0, len(items), size)])
    writer = open_writer(cfg, vocab, embedder.dim, embedder.sparse_idf)
    size = cfg.pipeline.write.batch_size
    _, t_write = timed(lambda: [writer.write(items[i:i + size]) for i in range(0, len(items), size)])
    writer.graph.close()
    writer.vectors.close()
    nd, nc = len(docs), len(items)
    stages = {"load": rate(nd, nc, t_load), "chunk": rate(nd, nc, t_chunk), "vocabulary_load_s": round(t_vocab, 2),
              "extract": rate(nd, nc, t_extract), "embed": rate(nd, nc, t_embed), "write": rate(nd, nc, t_write)}
    total = t_load + t_chunk + t_vocab + t_extract + t_embed + t_write
    return {"n_docs": nd, "n_chunks": nc, "stages": stages, "stages_total_s": round(total, 2)}


def wipe_server_stores(cfg: Any) -> None:
    """Empty the Neo4j database and drop the Qdrant collection of ``cfg`` (``--wipe-stores``)."""
    from medgraph.stores import make_graph_store

    graph: Any = make_graph_store(cfg.stores.graph)
    with graph._driver.session(database=cfg.stores.graph.database) as session:  # an implicit transaction
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()
    graph.close()
    drop_collection(cfg)


def drop_collection(cfg: Any) -> None:
    """Drop the Qdrant server collection ``cfg`` names, when it exists."""
    from medgraph.stores import make_vector_store

    vectors = make_vector_store(cfg.stores.vector)
    try:
        if vectors.client.collection_exists(cfg.stores.vector.collection):
            vectors.client.delete_collection(cfg.stores.vector.collection)
    finally:
        vectors.close()


def ray_run(corpus: list[Path], workers: int, extra: list[str], address: str | None, config: str,
            wipe: Any = None) -> dict[str, Any]:
    """The job as a user runs it, into fresh stores; wall time from the command's start."""
    with tempfile.TemporaryDirectory() as home:
        stores = [f"stores.graph.path={home}/g.sqlite", f"stores.vector.path={home}/q"] if wipe is None else []
        if wipe is not None:
            wipe()
        sets = [*stores, f"pipeline.embed.min_actors={workers}", f"pipeline.embed.max_actors={workers}", *extra]
        cmd = [sys.executable, "-m", "jobs.build_corpus", "--config", config, "--json",
               "--input", *map(str, corpus), *[a for s in sets for a in ("--set", s)]]
        env = {**os.environ, "MEDGRAPH_HOME": os.environ.get("MEDGRAPH_HOME", str(REPO / ".medgraph"))}
        if address:
            env["RAY_ADDRESS"] = address
        start = time.perf_counter()
        out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        if out.returncode != 0:
            raise RuntimeError(f"the job failed ({out.returncode}):\n{out.stderr[-3000:]}")
        summary = json.loads(out.stdout[out.stdout.index("{"):])
    return {"embed_actors": workers, "wall_s": round(wall, 2), "job_summary_s": summary["seconds"],
            "chunks": summary["chunks_written"], "chunks_per_s": round(summary["chunks_written"] / wall, 1),
            "failures": len(summary["failures"])}


def subset(corpus: list[Path], n: int, tmp: Path) -> list[Path]:
    """The first n records of the JSONL inputs, as one file (all of them when n is 0)."""
    if not n:
        return corpus
    out, lines = tmp / "subset.jsonl", []
    for path in corpus:
        with path.open(encoding="utf-8") as fh:
            lines.extend(line for line in fh if line.strip())
        if len(lines) >= n:
            break
    out.write_text("".join(lines[:n]), encoding="utf-8")
    return [out]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--input", nargs="+", type=Path, default=SCIFACT)
    ap.add_argument("--n", type=int, default=0, help="only the first N records (0: all)")
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="embedding pool sizes of the Ray runs")
    ap.add_argument("--ray-address", help="run the jobs on this Ray cluster")
    ap.add_argument("--label", default="", help="a name for this run in the JSON")
    ap.add_argument("--skip-stages", action="store_true", help="only the Ray runs")
    ap.add_argument("--config", default="configs/local.yaml", help="the jobs' config")
    ap.add_argument("--wipe-stores", action="store_true", help="empty the config's server stores before each run")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("MEDGRAPH_HOME", str(REPO / ".medgraph"))
    with tempfile.TemporaryDirectory() as tmp:
        corpus = subset(args.input, args.n, Path(tmp))
        cfg = load_config(REPO / "configs" / "local.yaml",
                          [f"stores.graph.path={tmp}/g.sqlite", f"stores.vector.path={tmp}/q", *args.overrides])
        result: dict[str, Any] = {"label": args.label, "input": [str(p) for p in args.input], "n": args.n,
                                  "embedding": f"{cfg.embedding.dense}+{cfg.embedding.sparse}",
                                  "ray_address": args.ray_address or "local (started by the job)",
                                  "date": time.strftime("%Y-%m-%d %H:%M"), "load_avg_start": os.getloadavg()[0]}
        if not args.skip_stages:
            result.update(stage_rates(cfg, corpus))
        job_cfg = load_config(REPO / args.config, args.overrides)
        server = job_cfg.stores.graph.kind != "embedded"
        if server and not args.wipe_stores:
            ap.error(f"{args.config} writes to server stores: pass --wipe-stores to empty them before each run")
        wipe = (lambda: wipe_server_stores(job_cfg)) if server else None
        result["config"] = args.config
        result["ray"] = [ray_run(corpus, w, args.overrides, args.ray_address, args.config, wipe) for w in args.workers]
    if "stages_total_s" in result:
        for run in result["ray"]:
            run["job_vs_stages"] = round(run["wall_s"] / result["stages_total_s"], 3)
    if len(result["ray"]) == 2:
        result["speedup_second_vs_first"] = round(result["ray"][0]["wall_s"] / result["ray"][1]["wall_s"], 3)
    result["load_avg_end"] = os.getloadavg()[0]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
