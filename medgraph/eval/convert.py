"""Convert PubMedQA into the retrieval benchmark's corpus and query files.

    python -m medgraph.eval convert-pubmedqa --input ../shared/data/pubmedqa/ori_pqal.json \
        --corpus pubmedqa.corpus.jsonl --queries pubmedqa.queries.jsonl

Input: PubMedQA's ``ori_pqal.json`` (``{pmid: {QUESTION, CONTEXTS, LABELS, LONG_ANSWER, ...}}``).
Output: two JSONL files for ``python -m medgraph.eval retrieval``:
- corpus: one record per abstract, ``{doc_id: "pmid-<pmid>", title: "PubMed <pmid>", sections:
  [{title, text}], language: "en", source_id}``; the sections are the labelled contexts plus the
  ``LONG_ANSWER`` as "Conclusions" (the same document the corpus loader builds). The question is
  never part of the document.
- queries: ``{query_id: <pmid>, text: QUESTION, language: "en", relevant_doc_ids: [doc_id]}``.
Records keep the input order, so the files (and their hashes) are the same on every run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from medgraph.ingest.loaders import pubmedqa_document


def pubmedqa_records(data: dict[str, Any], path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(corpus records, query records) of a parsed ``ori_pqal.json``, in input order."""
    corpus: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for pmid, item in data.items():
        doc = pubmedqa_document(str(pmid), item, path)
        corpus.append({
            "doc_id": doc.doc_id, "title": doc.title, "language": doc.language, "source_id": doc.source_id,
            "sections": [{"title": s.title, "text": s.text} for s in doc.sections],
        })
        queries.append({
            "query_id": str(pmid), "text": str(item["QUESTION"]), "language": "en",
            "relevant_doc_ids": [doc.doc_id],
        })
    return corpus, queries


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def convert_pubmedqa(input_path: Path, corpus_path: Path, queries_path: Path) -> dict[str, int]:
    data = json.loads(input_path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{input_path}: expected a JSON object keyed by PMID")
    corpus, queries = pubmedqa_records(data, input_path)
    write_jsonl(corpus_path, corpus)
    write_jsonl(queries_path, queries)
    return {"n_docs": len(corpus), "n_queries": len(queries)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m medgraph.eval convert-pubmedqa",
                                 description="PubMedQA ori_pqal.json -> retrieval corpus + queries (JSONL)")
    ap.add_argument("--input", required=True, type=Path, help="ori_pqal.json")
    ap.add_argument("--corpus", required=True, type=Path, help="output corpus JSONL")
    ap.add_argument("--queries", required=True, type=Path, help="output queries JSONL")
    args = ap.parse_args(argv)
    counts = convert_pubmedqa(args.input, args.corpus, args.queries)
    print(json.dumps({**counts, "corpus": str(args.corpus), "queries": str(args.queries)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
