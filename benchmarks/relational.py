"""The agent's relational channel on a built graph store: time per question, and the store calls.

Input: a built store (``--config`` plus ``--set`` overrides, e.g. ``stores.graph.path=`` of a
``benchmarks/scale.py`` corpus) and question files (JSONL with ``text`` and ``language``; default the
German, English and Chinese PubMedQA dev questions). Each question is analysed first (not timed);
then ``medgraph.agent.relational.relational_evidence`` runs on its linked entities, as the Serve app's
relational channel does, over ``--rounds`` passes, through the store itself (``--via store``) and
through the retriever's ``served_graph`` (``--via served``: lookups from the in-process index's
``Connections``, built with the PPR index on the first call), one after the other in one run.

Output: JSON on stdout, per way: the first call (it pays for whatever is built on first use: the
embedded store's in-memory lookups, the served index) apart from the rest; per-question p50 / p95 / mean over the
questions with at least two entities; how many ``connecting_evidence`` and ``neighbourhood`` calls a
question makes and their share of the time; and a digest of every answer (chunk IDs, scores, entity
paths), so that two versions of the store can be checked to give the same evidence.

    python benchmarks/relational.py --set stores.graph.path=/tmp/medgraph-scale/n50000/graph.sqlite \\
        --set embedding.dense=hashing [--questions data/eval/xl_pubmedqa.dev.jsonl] [--rounds 2] \\
        [--via store served]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


class CountingGraph:
    """The store, with the time and number of its ``connecting_evidence`` / ``neighbourhood`` calls."""

    def __init__(self, graph: Any) -> None:
        self._graph = graph
        self.calls = {"connecting_evidence": 0, "neighbourhood": 0}
        self.seconds = {"connecting_evidence": 0.0, "neighbourhood": 0.0}

    def _timed(self, name: str, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return getattr(self._graph, name)(*args, **kwargs)
        finally:
            self.calls[name] += 1
            self.seconds[name] += time.perf_counter() - start

    def connecting_evidence(self, *args: Any, **kwargs: Any) -> Any:
        return self._timed("connecting_evidence", *args, **kwargs)

    def neighbourhood(self, *args: Any, **kwargs: Any) -> Any:
        return self._timed("neighbourhood", *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._graph, name)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def load_questions(paths: list[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out.append((row.get("text") or row["question"], row.get("language") or "en"))
    return list(dict.fromkeys(out))


def run(reader: Any, paired: list[list[str]], rounds: int, max_pairs: int, limit: int,
        relational_evidence: Any) -> dict[str, Any]:
    """Time the channel over the questions through one reader (see the module docstring)."""
    counting = CountingGraph(reader)
    start = time.perf_counter()
    relational_evidence(counting, paired[0], max_pairs, limit)
    first_ms = (time.perf_counter() - start) * 1000
    counting.calls = dict.fromkeys(counting.calls, 0)
    counting.seconds = dict.fromkeys(counting.seconds, 0.0)
    digest = hashlib.blake2b(digest_size=8)
    times: list[float] = []
    for r in range(rounds):
        for ids in paired:
            start = time.perf_counter()
            found = relational_evidence(counting, ids, max_pairs, limit)
            times.append((time.perf_counter() - start) * 1000)
            if r == 0:
                for c in found:
                    digest.update(f"{c.chunk_id}|{c.score:.6f}|{'/'.join(c.entity_path)}\n".encode())
    total_s = sum(times) / 1000
    return {
        "first_call_ms": round(first_ms, 1),
        "per_question_ms": {"p50": _pct(times, 0.5), "p95": _pct(times, 0.95), "mean": round(statistics.fmean(times), 2)},
        "calls_per_question": {k: round(v / len(times), 2) for k, v in counting.calls.items()},
        "share_of_time": {k: round(v / total_s, 3) for k, v in counting.seconds.items()},
        "evidence_digest": digest.hexdigest(),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--questions", nargs="+", default=[str(REPO / "data" / "eval" / "xl_pubmedqa.dev.jsonl")])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--max-pairs", type=int, default=6)
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--via", nargs="+", choices=["store", "served"], default=["store", "served"])
    args = ap.parse_args(argv)

    from medgraph.agent.relational import relational_evidence
    from medgraph.assemble import build_analyzer, load_extractor
    from medgraph.config import load_config
    from medgraph.stores import make_graph_store

    cfg = load_config(args.config, args.overrides)
    analyzer = build_analyzer(cfg, load_extractor(cfg), cache_size=0)
    entity_lists = [analyzer.analyze(text, lang).entity_ids for text, lang in load_questions(args.questions)]
    paired = [ids for ids in entity_lists if len(dict.fromkeys(ids)) >= 2]
    graph = make_graph_store(cfg.stores.graph)
    try:
        results = {}
        for via in args.via:
            reader: Any = graph
            if via == "served":
                from medgraph.retrieve.ppr import ProcessPPR
                from medgraph.retrieve.served_graph import ServedGraph

                reader = ServedGraph(graph, ProcessPPR(graph))
            results[via] = run(reader, paired, args.rounds, args.max_pairs, args.limit, relational_evidence)
        print(json.dumps({"store": type(graph).__name__, "counts": graph.counts(),
                          "questions": len(entity_lists), "questions_with_pairs": len(paired),
                          "rounds": args.rounds, **results}, indent=2))
    finally:
        graph.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
