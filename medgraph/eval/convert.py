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

With ``--hold-out-conclusion`` (the answer benchmark, ``python -m medgraph.eval answers``) the
``LONG_ANSWER`` is left out of the documents and each query carries it as ``reference`` (the
answer a reader would want), with ``final_decision`` (yes / no / maybe). ``--test-ids
test_ground_truth.json --test-queries T.jsonl`` puts the questions of PubMedQA's official test split
in T and keeps the others (its train / dev pool) in ``--queries``: choose settings on the latter.
Records keep the input order, so the files (and their hashes) are the same on every run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from medgraph import lang
from medgraph.ingest.loaders import pubmedqa_document


def pubmedqa_records(data: dict[str, Any], path: Path,
                     hold_out_conclusion: bool = False) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(corpus records, query records) of a parsed ``ori_pqal.json``, in input order."""
    corpus: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for pmid, item in data.items():
        doc = pubmedqa_document(str(pmid), item, path, conclusion=not hold_out_conclusion)
        corpus.append({
            "doc_id": doc.doc_id, "title": doc.title, "language": doc.language, "source_id": doc.source_id,
            "sections": [{"title": s.title, "text": s.text} for s in doc.sections],
        })
        queries.append({
            "query_id": str(pmid), "text": str(item["QUESTION"]), "language": lang.PIVOT,  # English
            "relevant_doc_ids": [doc.doc_id],
            **({"reference": str(item.get("LONG_ANSWER") or ""), "final_decision": item.get("final_decision")}
               if hold_out_conclusion else {}),
        })
    return corpus, queries


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")


def convert_pubmedqa(input_path: Path, corpus_path: Path, queries_path: Path,
                     hold_out_conclusion: bool = False, test_ids: Path | None = None,
                     test_queries_path: Path | None = None) -> dict[str, int]:
    data = json.loads(input_path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{input_path}: expected a JSON object keyed by PMID")
    if (test_ids is None) != (test_queries_path is None):
        raise ValueError("--test-ids and --test-queries go together")
    corpus, queries = pubmedqa_records(data, input_path, hold_out_conclusion)
    write_jsonl(corpus_path, corpus)
    counts = {"n_docs": len(corpus), "n_queries": len(queries)}
    if test_ids is not None and test_queries_path is not None:
        held = {str(k) for k in json.loads(test_ids.read_text(encoding="utf-8"))}
        write_jsonl(test_queries_path, [q for q in queries if q["query_id"] in held])
        queries = [q for q in queries if q["query_id"] not in held]
        counts["n_test_queries"] = len(held & {str(k) for k in data})
    write_jsonl(queries_path, queries)
    counts["n_queries"] = len(queries)
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m medgraph.eval convert-pubmedqa",
                                 description="PubMedQA ori_pqal.json -> retrieval corpus + queries (JSONL)")
    ap.add_argument("--input", required=True, type=Path, help="ori_pqal.json")
    ap.add_argument("--corpus", required=True, type=Path, help="output corpus JSONL")
    ap.add_argument("--queries", required=True, type=Path, help="output queries JSONL")
    ap.add_argument("--hold-out-conclusion", action="store_true",
                    help="leave LONG_ANSWER out of the documents; queries carry it as 'reference'")
    ap.add_argument("--test-ids", type=Path, help="JSON keyed by the PMIDs of the test split (test_ground_truth.json)")
    ap.add_argument("--test-queries", type=Path, help="output JSONL of the --test-ids questions")
    args = ap.parse_args(argv)
    if (args.test_ids is None) != (args.test_queries is None):
        ap.error("--test-ids and --test-queries go together")
    counts = convert_pubmedqa(args.input, args.corpus, args.queries, args.hold_out_conclusion,
                              args.test_ids, args.test_queries)
    print(json.dumps({**counts, "corpus": str(args.corpus), "queries": str(args.queries)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
