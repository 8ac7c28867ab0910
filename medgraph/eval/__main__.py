"""Benchmark CLIs: ``python -m medgraph.eval <command> [options]``.

Input: a subcommand name and its arguments. Output: whatever the subcommand prints (``--json``
gives one JSON object). Each subcommand is a module exposing ``main(argv: list[str]) -> int``;
add one by adding a line to ``COMMANDS`` (imported lazily, so one command's dependencies never
slow down another).
"""

from __future__ import annotations

import importlib
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "link": ("medgraph.eval.link", "entity linking + NER on a PubTator file"),
    "retrieval": ("medgraph.eval.retrieval", "retrieval paths, fusion and reranking vs bm25s on a corpus"),
    "answers": ("medgraph.eval.answers", "end-to-end answers per language: answered / refused, gold citations, ROUGE-L"),
    "optimise": ("medgraph.eval.optimise", "GEPA-compiled router / generator programs, scored against their baselines"),
    "calibrate": ("medgraph.eval.calibrate", "reranker relevance + refusal threshold fitted on saved dev answer runs"),
    "tune": ("medgraph.eval.tuning", "one fusion setting chosen on saved dev runs of several corpora"),
    "convert-pubmedqa": ("medgraph.eval.convert", "PubMedQA ori_pqal.json -> retrieval corpus + queries"),
    "convert-shared": ("medgraph.eval.convert_shared", "German letters + Chinese QA records -> one benchmark corpus"),
    "convert-abstracts": ("medgraph.eval.convert_abstracts", "all the shared English abstracts -> one ~10k corpus"),
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in {"-h", "--help"} or argv[0] not in COMMANDS:
        print("usage: python -m medgraph.eval <command> [options]\n\ncommands:")
        for name, (_, help_text) in sorted(COMMANDS.items()):
            print(f"  {name:12s} {help_text}")
        return 0 if argv and argv[0] in {"-h", "--help"} else 2
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return int(module.main(argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
