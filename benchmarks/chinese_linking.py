"""Chinese offline linking without / with the CC-CEDICT words (the ``cedict`` vocabulary source).

"Before" is the default extractor (``EntityExtractor``: gazetteer, second NER stage) on the
vocabulary of the same config without its ``cedict`` sources (built once and cached beside the
default vocabulary, ``<vocabulary path>-no-cedict``); "after" is the config as given (``--set
ner.chinese_words=true``: with the dictionary words as gazetteer keys in corpus text, where the default
leaves them out; both extract corpus text, not questions). The text is a range of
the Huatuo Chinese QA records (``chinese_huatuo/llama_data.jsonl`` under ``$MEDGRAPH_SHARED_DATA``,
default ``../shared/data``; question + answer, one document per record), or with ``--liver`` the
1,000 liver-cancer literature dialogues of the same folder. The matching rules were chosen on the
QA records (all 8,658: 1-2,000 first, then the rest after a first test on them); the dialogues,
written from a different source (2023 liver-cancer literature), are the test set.

Printed as JSON: linked mentions and distinct MeSH IDs before / after, by method, the mentions only
"after" has (a new span, or the same span with another ID), the most frequent of them, and a seeded
random sample with its context for reading by hand (``--sample-out FILE`` writes it as TSV).

    python benchmarks/chinese_linking.py [--config configs/local.yaml] [--records 1-8658 | --liver]
        [--set ner.chinese_words=true] [--baseline-set linking.dictionary_compose=false]
        [--sample 60] [--sample-seed 1] [--sample-out sample.tsv]

With ``--baseline-set``, "before" is the same config and vocabulary with those overrides (one
setting measured on its own) instead of the vocabulary without CC-CEDICT.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.config import load_config  # noqa: E402
from medgraph.link import EntityExtractor  # noqa: E402
from medgraph.ontology.build import load_or_build  # noqa: E402
from medgraph.schemas import Mention  # noqa: E402


def records(root: Path, first: int, last: int) -> list[str]:
    """Question + answer of the Huatuo records ``first``..``last`` (1-based, inclusive)."""
    out = []
    with open(root / "chinese_huatuo" / "llama_data.jsonl", encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if first <= number <= last:
                record = json.loads(line)
                out.append(record.get("instruction", "") + record.get("output", ""))
    return out


def dialogues(root: Path) -> list[str]:
    """The liver-cancer literature dialogues (``<user>`` / ``<bot>`` turns and the answer)."""
    with open(root / "chinese_huatuo" / "liver_cancer_literature_qa.json", encoding="utf-8") as fh:
        rows = json.load(fh)
    return [re.sub(r"<(?:user|bot)>:", " ", r.get("instruction", "") + " " + r.get("output", "")).strip() for r in rows]


def without_cedict(cfg: Any) -> Any:
    """The same config with no ``cedict`` source and its own vocabulary path."""
    sources = [s for s in cfg.vocabulary.sources if s.kind != "cedict"]
    vocabulary = cfg.vocabulary.model_copy(update={"sources": sources, "path": cfg.vocabulary.path + "-no-cedict"})
    return cfg.model_copy(update={"vocabulary": vocabulary})


def _context(text: str, m: Mention, width: int = 16) -> str:
    return f"{text[max(0, m.start - width):m.start]}[[{m.surface}]]{text[m.end:m.end + width]}"


def measure(cfg: Any, texts: list[str], sample: int, seed: int, base_cfg: Any = None) -> dict[str, Any]:
    base_cfg = base_cfg or without_cedict(cfg)
    vocab = load_or_build(cfg.vocabulary)
    runs: dict[str, list[list[Mention]]] = {}
    seconds: dict[str, float] = {}
    for name, run_cfg, run_vocab in (("before", base_cfg, load_or_build(base_cfg.vocabulary)),
                                     ("after", cfg, vocab)):
        extractor = EntityExtractor(run_vocab, run_cfg.ner, run_cfg.linking)
        extractor.extract(texts[0], "zh")  # lazy tables (and the segmenter) outside the timing
        start = time.perf_counter()
        runs[name] = [[m for m in extractor.extract(t, "zh") if m.mesh_id] for t in texts]
        seconds[name] = round(time.perf_counter() - start, 2)
    new: list[tuple[int, Mention]] = []
    for number, (old, cur) in enumerate(zip(runs["before"], runs["after"], strict=True)):
        seen = {(m.start, m.end, m.mesh_id) for m in old}
        new += [(number, m) for m in cur if (m.start, m.end, m.mesh_id) not in seen]

    def name(mesh_id: str | None) -> str:
        entity = vocab.get(mesh_id or "")
        return entity.name if entity else str(mesh_id)

    picked = random.Random(seed).sample(new, min(sample, len(new)))
    counts = Counter(f"{m.surface} -> {name(m.mesh_id)}" for _, m in new)
    return {
        "records": len(texts),
        "chars": sum(map(len, texts)),
        "mentions": {k: sum(map(len, v)) for k, v in runs.items()},
        "distinct_ids": {k: len({m.mesh_id for ms in v for m in ms}) for k, v in runs.items()},
        "methods": {k: dict(Counter(m.method for ms in v for m in ms).most_common()) for k, v in runs.items()},
        "new_mentions": len(new),
        "new_distinct": len(counts),
        "extract_seconds": seconds,
        "sample_seed": seed,
        "sample": [
            {"surface": m.surface, "mesh_id": m.mesh_id, "name": name(m.mesh_id), "method": m.method,
             "context": _context(texts[i], m)}
            for i, m in picked
        ],
        "new": counts.most_common(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument("--records", default="1-8658", help="first-last Huatuo QA record, 1-based")
    ap.add_argument("--liver", action="store_true", help="the liver-cancer dialogues (the test set) instead")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="config override for 'after', e.g. ner.chinese_words=true (the gazetteer's words)")
    ap.add_argument("--baseline-set", action="append", default=[], metavar="KEY=VALUE",
                    help="'before' is the config with these overrides, on the same vocabulary (instead of the "
                         "vocabulary without cedict), e.g. linking.dictionary_compose=false")
    ap.add_argument("--sample", type=int, default=60)
    ap.add_argument("--sample-seed", type=int, default=1)
    ap.add_argument("--sample-out", default=None, help="write the hand-check sample as TSV")
    args = ap.parse_args()
    first, _, last = args.records.partition("-")
    cfg = load_config(args.config, args.set)
    if not any(s.kind == "cedict" for s in cfg.vocabulary.sources):
        ap.error(f"{args.config} has no cedict vocabulary source: nothing to compare")
    root = Path(os.environ.get("MEDGRAPH_SHARED_DATA", REPO.parent / "shared" / "data"))
    texts = dialogues(root) if args.liver else records(root, int(first), int(last or first))
    if not texts:
        ap.error(f"no Huatuo records in {args.records}")
    base_cfg = load_config(args.config, [*args.set, *args.baseline_set]) if args.baseline_set else None
    result = measure(cfg, texts, args.sample, args.sample_seed, base_cfg)
    if args.sample_out:
        with open(args.sample_out, "w", encoding="utf-8") as fh:
            fh.write("correct\tsurface\tmesh_id\tname\tmethod\tcontext\n")
            for r in result["sample"]:
                fh.write(f"\t{r['surface']}\t{r['mesh_id']}\t{r['name']}\t{r['method']}\t{r['context']}\n")
    print(json.dumps({"text": "liver-cancer dialogues" if args.liver else f"QA records {args.records}", **result}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
