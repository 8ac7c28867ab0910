"""Ingestion throughput on PubMedQA: per stage, raw embedder, and the Ray job with 1 and 2 workers.

    python benchmarks/ingest.py [--input ../shared/data/pubmedqa/ori_pqal.json] [--n 1000] [--json]

Prints JSON:
- ``stages``: documents/s and chunks/s of each stage run alone in this process (load, chunk,
  normalise+NER+link, embed, write), on one CPU thread;
- ``raw_embedder_s``: the embedder alone over the same chunk texts (the baseline);
- ``ray``: wall time of the full Ray job with 1 and 2 embedding workers, its ratio to the raw
  embedder time, and the 2-vs-1 speed-up. Each Ray run builds into a fresh temporary store.
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
from medgraph.ingest.chunking import Chunker  # noqa: E402
from medgraph.ingest.loaders import expand_inputs, load_shard, plan_shards  # noqa: E402
from medgraph.schemas import Document  # noqa: E402


def timed(fn: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def rate(n_docs: int, n_chunks: int, seconds: float) -> dict[str, float]:
    return {"seconds": round(seconds, 3), "docs_per_s": round(n_docs / seconds, 1),
            "chunks_per_s": round(n_chunks / seconds, 1)}


def stage_rates(cfg: Any, corpus: Path, n: int, home: Path) -> tuple[dict[str, Any], float, int]:
    from jobs.build_corpus import ensure_vocabulary, open_writer
    from medgraph.embed import make_embedder
    from medgraph.extract.normalise import normalise
    from medgraph.index.writer import IndexedChunk
    from medgraph.link import EntityExtractor

    files, _ = expand_inputs([corpus])
    docs, t_load = timed(lambda: [d for s in plan_shards(files) for d in load_shard(s) if isinstance(d, Document)][:n])
    chunker = Chunker(cfg.chunking)
    chunks, t_chunk = timed(lambda: [c for d in docs for c in chunker.chunk(d)])
    vocab = ensure_vocabulary(cfg)
    extractor = EntityExtractor(vocab, cfg.ner, cfg.linking)
    mentions, t_extract = timed(lambda: [extractor.extract(normalise(c.text).text, c.language) for c in chunks])
    embedder = make_embedder(cfg.embedding)
    texts = [c.text for c in chunks]
    embedder.embed_dense(texts[:8])  # warm-up outside the timing
    dense, t_dense = timed(lambda: embedder.embed_dense(texts))
    sparse, t_sparse = timed(lambda: embedder.embed_sparse(texts))
    writer = open_writer(cfg, vocab, embedder.dim, cfg.embedding.sparse == "lexical")
    items = [IndexedChunk(c, m, d, s) for c, m, d, s in zip(chunks, mentions, dense, sparse, strict=True)]
    _, t_write = timed(lambda: [writer.write(items[i:i + 256]) for i in range(0, len(items), 256)])
    writer.graph.close()
    writer.vectors.close()
    nd, nc = len(docs), len(chunks)
    stages = {
        "load": rate(nd, nc, t_load), "chunk": rate(nd, nc, t_chunk), "ner_link": rate(nd, nc, t_extract),
        "embed_dense": rate(nd, nc, t_dense), "embed_sparse": rate(nd, nc, t_sparse), "write": rate(nd, nc, t_write),
    }
    return stages, t_dense + t_sparse, nc


def ray_run(corpus: Path, workers: int, extra: list[str]) -> float:
    with tempfile.TemporaryDirectory() as home:
        sets = [f"stores.graph.path={home}/g.sqlite", f"stores.vector.path={home}/q",
                f"pipeline.embed.min_actors={workers}", f"pipeline.embed.max_actors={workers}", *extra]
        cmd = [sys.executable, "-m", "jobs.build_corpus", "--config", "configs/local.yaml", "--json",
               "--input", str(corpus), *[a for s in sets for a in ("--set", s)]]
        out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=True)
        summary = json.loads(out.stdout)
        return float(summary["seconds"])


def subset(corpus: Path, n: int, tmp: Path) -> Path:
    """The first n records of a PubMedQA file, as a file of its own."""
    data = json.loads(corpus.read_text())
    out = tmp / "subset.json"
    out.write_text(json.dumps({k: data[k] for k in list(data)[:n]}))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--input", default=str(REPO.parent / "shared" / "data" / "pubmedqa" / "ori_pqal.json"))
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("MEDGRAPH_HOME", str(REPO / ".medgraph"))
    with tempfile.TemporaryDirectory() as tmp:
        corpus = subset(Path(args.input), args.n, Path(tmp))
        cfg = load_config(REPO / "configs" / "local.yaml",
                          [f"stores.graph.path={tmp}/g.sqlite", f"stores.vector.path={tmp}/q", *args.overrides])
        stages, raw_embed_s, n_chunks = stage_rates(cfg, corpus, args.n, Path(tmp))
        one = ray_run(corpus, 1, args.overrides)
        two = ray_run(corpus, 2, args.overrides)
    result = {
        "n_docs": args.n, "n_chunks": n_chunks, "embedding": f"{cfg.embedding.dense}+{cfg.embedding.sparse}",
        "stages": stages, "raw_embedder_s": round(raw_embed_s, 2),
        "ray": {"one_worker_s": one, "two_workers_s": two,
                "one_worker_vs_raw_embedder": round(one / raw_embed_s, 3),
                "two_vs_one_speedup": round(one / two, 3)},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
