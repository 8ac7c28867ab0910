"""Throughput of cascade NER (``ner.kind: cascade``) against the gazetteer alone, in the same run.

Input: the demo corpus (``data/demo``: PubMedQA abstracts in English and German, Huatuo Chinese QA),
chunked with the config's chunker, and the model directories given on the command line. Without
``--gliner`` / ``--token-model`` it builds the tiny random-weight models of the tests
(``tests/tiny_ner.py``) in a temporary directory: that measures the cascade's plumbing and its
merge on CPU, not a real model. With real weights and ``--device cuda`` it measures them on a GPU.
Output: one JSON object on stdout: chunks, characters, per extractor (``gazetteer``, ``cascade``)
seconds, mentions, chunks/s and mentions/s, the cascade's merge counts, the ratio of the cascade's
chunks/s to the gazetteer's, the device and the load average. Both go through ``extract_many`` in
batches of ``--batch-size`` chunks (the Ray ``Extract`` stage's call), after one warm-up batch.

    python -m benchmarks.ner_cascade [--limit 300] [--batch-size 32] [--threshold 0.01]
    python -m benchmarks.ner_cascade --gliner /models/gliner-multi \\
        --token-model en=/models/ner-en --token-model de=/models/ner-de --token-model zh=/models/ner-zh \\
        --device cuda
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.config import load_config  # noqa: E402
from medgraph.link import EntityExtractor  # noqa: E402


def demo_chunks(cfg: Any, limit: int) -> list[tuple[str, str]]:
    """(text, language) of the demo corpus's chunks, the languages interleaved, at most ``limit``."""
    from medgraph.ingest.chunking import Chunker
    from medgraph.ingest.loaders import expand_inputs, load_shard, plan_shards
    from medgraph.schemas import Document

    files, _ = expand_inputs(
        [
            str(REPO / "data" / "demo" / n)
            for n in ("pubmedqa_demo.json", "pubmedqa_de_demo.jsonl", "huatuo_zh_demo.jsonl")
        ]
    )
    chunker = Chunker(cfg.chunking)
    by_language: dict[str, list[tuple[str, str]]] = {}
    for shard in plan_shards(files):
        for doc in load_shard(shard):
            if isinstance(doc, Document):
                for c in chunker.chunk(doc):
                    by_language.setdefault(c.language, []).append((c.text, c.language))
    groups = list(by_language.values())
    mixed = [g[i] for i in range(max(map(len, groups), default=0)) for g in groups if i < len(g)]
    return mixed[:limit]


def measure(extractor: EntityExtractor, chunks: list[tuple[str, str]], batch_size: int) -> dict[str, Any]:
    batches = [chunks[i : i + batch_size] for i in range(0, len(chunks), batch_size)]
    texts, languages = zip(*batches[0], strict=True)
    extractor.extract_many(list(texts), list(languages))  # warm-up: lazy indexes, kernels
    if extractor.cascade is not None:
        extractor.cascade.stats.clear()  # count the timed batches only
    start = time.perf_counter()
    mentions = 0
    for batch in batches:
        texts, languages = zip(*batch, strict=True)
        mentions += sum(len(m) for m in extractor.extract_many(list(texts), list(languages)))
    seconds = time.perf_counter() - start
    return {
        "seconds": round(seconds, 3),
        "mentions": mentions,
        "chunks_per_s": round(len(chunks) / seconds, 2),
        "mentions_per_s": round(mentions / seconds, 1),
    }


def tiny_models(root: Path) -> tuple[str, dict[str, str]]:
    from tests.tiny_ner import save_tiny_gliner, save_tiny_token_model

    token = save_tiny_token_model(root / "token")
    return str(save_tiny_gliner(root / "gliner")), {lang: str(token) for lang in ("en", "de", "zh")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument(
        "--gliner", help="a local GLiNER directory (default with no model given: tiny test models)"
    )
    ap.add_argument(
        "--token-model",
        action="append",
        default=[],
        metavar="LANG=PATH",
        help="a local token-classification model for a language (repeat per language)",
    )
    ap.add_argument("--device", default="cpu")
    ap.add_argument(
        "--threshold",
        type=float,
        help="gliner_threshold and token_threshold (default: the config's); "
        "the tiny models' random scores sit near 0.5, so 0.01 makes them propose spans to merge",
    )
    ap.add_argument("--limit", type=int, default=300, help="chunks of the demo corpus to extract")
    ap.add_argument(
        "--batch-size", type=int, default=32, help="chunks per extract_many call (the Extract stage's batch)"
    )
    ap.add_argument(
        "--model-batch-size", type=int, default=16, help="texts per forward pass (ner.batch_size)"
    )
    args = ap.parse_args(argv)
    cfg = load_config(Path(args.config))
    token_paths = dict(spec.split("=", 1) for spec in args.token_model)
    with tempfile.TemporaryDirectory() as tmp:
        gliner = args.gliner
        tiny = not gliner and not token_paths
        if tiny:
            gliner, token_paths = tiny_models(Path(tmp))
        ner = cfg.ner.model_copy(
            update={
                "kind": "cascade",
                "gliner_model_path": gliner,
                "token_model_paths": token_paths,
                "device": args.device,
                "batch_size": args.model_batch_size,
            }
        )
        if args.threshold is not None:
            ner = ner.model_copy(
                update={"gliner_threshold": args.threshold, "token_threshold": args.threshold}
            )
        from medgraph.ontology.build import load_or_build

        vocab = load_or_build(cfg.vocabulary)
        chunks = demo_chunks(cfg, args.limit)
        gazetteer = measure(EntityExtractor(vocab, cfg.ner, cfg.linking), chunks, args.batch_size)
        start = time.perf_counter()
        cascade_extractor = EntityExtractor(
            vocab, type(cfg.ner).model_validate(ner.model_dump()), cfg.linking
        )
        load_s = time.perf_counter() - start
        cascade = measure(cascade_extractor, chunks, args.batch_size)
    assert cascade_extractor.cascade is not None
    out = {
        "models": "tiny random-weight test models" if tiny else {"gliner": gliner, "token": token_paths},
        "device": args.device,
        "thresholds": [ner.gliner_threshold, ner.token_threshold],
        "chunks": len(chunks),
        "chars": sum(len(t) for t, _ in chunks),
        "languages": {
            lang: sum(1 for _, x in chunks if x == lang) for lang in sorted({x for _, x in chunks})
        },
        "batch_size": args.batch_size,
        "model_batch_size": args.model_batch_size,
        "gazetteer": gazetteer,
        "cascade": {
            **cascade,
            "model_load_s": round(load_s, 2),
            "merge": dict(cascade_extractor.cascade.stats),
        },
        "cascade_vs_gazetteer_chunks_per_s": round(cascade["chunks_per_s"] / gazetteer["chunks_per_s"], 4),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
