"""Convert the shared German letters and Chinese QA records into one benchmark corpus file.

    python -m medgraph.eval convert-shared --shared ../shared/data --out multilingual.corpus.jsonl \
        [--huatuo-lines 1-3000] [--liver-items 1-300]

Input: the shared data folder: ``german_grascco/grascco_phi.jsonl`` (GraSCCo letters,
``{doc_id, text}``), ``chinese_huatuo/llama_data.jsonl`` (instruction / output records) and
``chinese_huatuo/liver_cancer_literature_qa.json`` (dialogues). Output: corpus JSONL for
``python -m medgraph.eval retrieval`` / ``answers`` with stable document IDs, the ones the question
files of ``data/eval`` name:
- a letter keeps its ``doc_id`` (``Albers``);
- a Huatuo record is ``huatuo-<line>`` (1-based line of ``llama_data.jsonl``), a liver-cancer
  dialogue ``huatuo-liver-<n>`` (1-based item); both as a ``Question`` and an ``Answer`` section, as
  the corpus loader reads such records.
Each record's language is detected from its text, as the corpus loader does (the letters are German,
the Huatuo records Chinese).
The ranges keep the corpus small enough to index on a laptop; the question files only name records
inside the default ranges. Records keep the input order, so the file (and its hash) is the same on
every run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medgraph.eval.convert import write_jsonl
from medgraph.eval.retrieval import parse_range
from medgraph.ingest.loaders import record_document


def _record(doc_id: str, fields: dict[str, Any], path: Path, lineno: int) -> dict[str, Any]:
    doc = record_document({**fields, "doc_id": doc_id}, path, lineno)
    return {"doc_id": doc.doc_id, "title": doc.title, "language": doc.language, "source_id": doc.source_id,
            "sections": [{"title": s.title, "text": s.text} for s in doc.sections]}


def grascco_records(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                rec = json.loads(line)
                yield _record(str(rec["doc_id"]), {"text": rec["text"]}, path, n)


def huatuo_records(path: Path, lines: tuple[int, int]) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if n > lines[1]:
                break
            if n >= lines[0] and line.strip():
                rec = json.loads(line)
                yield _record(f"huatuo-{n}", {k: rec.get(k, "") for k in ("instruction", "input", "output")}, path, n)


def liver_records(path: Path, items: tuple[int, int]) -> Iterator[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    for n, rec in enumerate(data[items[0] - 1 : items[1]], items[0]):
        yield _record(f"huatuo-liver-{n}", {k: rec.get(k, "") for k in ("instruction", "input", "output")}, path, n)


def convert_shared(shared: Path, out: Path, huatuo_lines: tuple[int, int], liver_items: tuple[int, int]) -> dict[str, int]:
    letters = list(grascco_records(shared / "german_grascco" / "grascco_phi.jsonl"))
    records = list(huatuo_records(shared / "chinese_huatuo" / "llama_data.jsonl", huatuo_lines))
    dialogues = list(liver_records(shared / "chinese_huatuo" / "liver_cancer_literature_qa.json", liver_items))
    write_jsonl(out, letters + records + dialogues)
    return {"letters": len(letters), "huatuo": len(records), "liver": len(dialogues)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m medgraph.eval convert-shared",
                                 description="GraSCCo letters + Huatuo records -> one benchmark corpus (JSONL)")
    ap.add_argument("--shared", type=Path, default=Path("../shared/data"), help="the shared data folder")
    ap.add_argument("--out", required=True, type=Path, help="output corpus JSONL")
    ap.add_argument("--huatuo-lines", default="1-3000", help="lines of llama_data.jsonl (1-based, inclusive)")
    ap.add_argument("--liver-items", default="1-300", help="items of liver_cancer_literature_qa.json")
    args = ap.parse_args(argv)
    lines, items = parse_range(args.huatuo_lines), parse_range(args.liver_items)
    if lines is None or items is None:
        ap.error("ranges are A-B")
    counts = convert_shared(args.shared, args.out, lines, items)
    print(json.dumps({**counts, "out": str(args.out)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
