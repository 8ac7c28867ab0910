"""What the second NER stage adds on real German and Chinese text.

Input: the GraSCCo German clinical letters (``german_grascco/grascco_phi.jsonl``, all 63) and the
first ``--zh-records`` Huatuo Chinese QA records (``chinese_huatuo/llama_data.jsonl``, question +
answer) from the shared data directory (``$MEDGRAPH_SHARED_DATA``, default ``../shared/data``).
Output: JSON on stdout, per language: documents, characters, linked mentions and distinct MeSH IDs
without and with ``ner.compose_candidates`` (same extractor settings otherwise, same run), the
mentions the second stage adds (``method="compose"``), extraction seconds for both, and every
distinct composed mention with its count (``surface -> descriptor``) for reading by eye.

    python benchmarks/compose_mentions.py [--config configs/local.yaml] [--zh-records 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.config import load_config  # noqa: E402
from medgraph.link import EntityExtractor  # noqa: E402
from medgraph.ontology.build import load_or_build  # noqa: E402


def german_letters(root: Path) -> Iterator[str]:
    with open(root / "german_grascco" / "grascco_phi.jsonl", encoding="utf-8") as fh:
        for line in fh:
            yield json.loads(line).get("text") or ""


def chinese_records(root: Path, limit: int) -> Iterator[str]:
    with open(root / "chinese_huatuo" / "llama_data.jsonl", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i >= limit:
                return
            record = json.loads(line)
            yield record.get("instruction", "") + record.get("output", "")


def measure(on: EntityExtractor, off: EntityExtractor, texts: list[str], lang: str) -> dict[str, Any]:
    on.extract(texts[0], lang)  # build the composer outside the timing
    start = time.perf_counter()
    without = [off.extract(t, lang) for t in texts]
    off_s = time.perf_counter() - start
    start = time.perf_counter()
    with_stage = [on.extract(t, lang) for t in texts]
    on_s = time.perf_counter() - start
    composed = [m for ms in with_stage for m in ms if m.method == "compose"]
    names = Counter(f"{m.surface} -> {on.vocab.get(m.mesh_id).name}" for m in composed if on.vocab.get(m.mesh_id))
    return {
        "docs": len(texts), "chars": sum(map(len, texts)),
        "mentions": {"without": sum(map(len, without)), "with": sum(map(len, with_stage))},
        "distinct_ids": {"without": len({m.mesh_id for ms in without for m in ms}),
                         "with": len({m.mesh_id for ms in with_stage for m in ms})},
        "composed_mentions": len(composed), "composed_distinct": len(names),
        "seconds": {"without": round(off_s, 2), "with": round(on_s, 2)},
        "composed": names.most_common(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument("--zh-records", type=int, default=2000)
    args = ap.parse_args()
    cfg = load_config(args.config, [])
    vocab = load_or_build(cfg.vocabulary)
    on = EntityExtractor(vocab, cfg.ner.model_copy(update={"compose_candidates": True}), cfg.linking)
    off = EntityExtractor(vocab, cfg.ner.model_copy(update={"compose_candidates": False}), cfg.linking)
    root = Path(os.environ.get("MEDGRAPH_SHARED_DATA", REPO.parent / "shared" / "data"))
    out = {"de": measure(on, off, list(german_letters(root)), "de"),
           "zh": measure(on, off, list(chinese_records(root, args.zh_records)), "zh")}
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
