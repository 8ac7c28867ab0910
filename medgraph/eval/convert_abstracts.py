"""All the English abstracts of the shared data as one retrieval corpus (the multi-hop benchmark's).

    python -m medgraph.eval convert-abstracts --shared ../shared/data --out abstracts.corpus.jsonl

Input: the shared data folder: PubMedQA (``pubmedqa/ori_pqal.json``, all 1,000 abstracts), SciFact
(``ir/scifact/corpus.part-*.jsonl``, 5,183), NFCorpus (``ir/nfcorpus/corpus.jsonl``, 3,162; its
text is lowercased and stop-worded as published) and BC5CDR (``bc5cdr/CDR_*Set.PubTator.txt``, the
training and development sets, 1,000 titles with abstracts). Output: one JSONL corpus for
``python -m medgraph.eval retrieval``, ``{doc_id, title, text | sections, language: "en",
source_id}``, about 10k documents, in that order. Document IDs are those of each source's own
convention here: ``pmid-<PMID>`` (as ``convert-pubmedqa``), SciFact's numeric IDs, NFCorpus's
``MED-<n>``, ``bc5cdr-<PMID>``; an abstract in two sources is two documents (a question's gold
names the one it was written from). Records keep the input order, so the file (and its hash, the
evaluation's index cache key) is the same on every run.

Large enough that a strong dense retriever does not find both passages of a two-hop question by
elimination (``data/eval/multihop.*.jsonl``, docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medgraph import lang
from medgraph.eval.convert import pubmedqa_records, write_jsonl

_PUBTATOR = re.compile(r"^(\d+)\|([ta])\|(.*)$")
BC5CDR_SETS = ("CDR_TrainingSet.PubTator.txt", "CDR_DevelopmentSet.PubTator.txt")


def pubtator_records(path: Path) -> Iterator[dict[str, Any]]:
    """Title + abstract of each document of a PubTator file (its annotation lines are skipped)."""
    docs: dict[str, dict[str, str]] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            m = _PUBTATOR.match(line.rstrip("\n"))
            if m:
                docs.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
    for pmid, parts in docs.items():
        yield {"doc_id": f"bc5cdr-{pmid}", "title": parts.get("t", ""), "text": parts.get("a", ""),
               "language": lang.PIVOT, "source_id": f"PMID:{pmid}"}  # English


def jsonl_records(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                yield {"doc_id": str(r["doc_id"]), "title": r.get("title") or "", "text": r["text"],
                       "language": lang.PIVOT, "source_id": str(r["doc_id"])}  # English


def abstract_records(shared: Path) -> Iterator[dict[str, Any]]:
    pubmedqa = shared / "pubmedqa" / "ori_pqal.json"
    yield from pubmedqa_records(json.loads(pubmedqa.read_text(encoding="utf-8")), pubmedqa)[0]
    for part in sorted((shared / "ir" / "scifact").glob("corpus.part-*.jsonl")):
        yield from jsonl_records(part)
    yield from jsonl_records(shared / "ir" / "nfcorpus" / "corpus.jsonl")
    for name in BC5CDR_SETS:
        yield from pubtator_records(shared / "bc5cdr" / name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m medgraph.eval convert-abstracts", description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=Path("../shared/data"), help="the shared data folder")
    ap.add_argument("--out", required=True, type=Path, help="output corpus JSONL")
    args = ap.parse_args(argv)
    records = list(abstract_records(args.shared))
    write_jsonl(args.out, records)
    counts: dict[str, int] = {}
    for r in records:
        source = r["doc_id"].split("-")[0] if not r["doc_id"].isdigit() else "scifact"
        counts[source] = counts.get(source, 0) + 1
    print(json.dumps({"n_docs": len(records), "by_source": counts, "out": str(args.out)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
