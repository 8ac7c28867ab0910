"""Router evaluation on a labelled question set.

Input: a router (anything with ``route(QueryAnalysis) -> RouteDecision``), a function that turns a
question and its language into a ``QueryAnalysis`` (NER + linking), and labelled rows
(``question``, ``lang``, ``tier``, ``intent``; JSONL as in ``tests/fixtures/router/``).
Output: tier and intent accuracy overall and per language, the tier confusion matrix, routing
latency (p50 / p95 / mean, ms, analysis excluded) and the misrouted questions.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from medgraph.retrieve.types import QueryAnalysis
from medgraph.route.types import RouteDecision


class Router(Protocol):
    def route(self, analysis: QueryAnalysis) -> RouteDecision: ...


def load_labelled(path: str | Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        missing = {"question", "lang", "tier", "intent"} - set(row)
        if missing:
            raise ValueError(f"{path}: row {row.get('id')} lacks {sorted(missing)}")
    return rows


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def evaluate(router: Router, analyze: Callable[[str, str], QueryAnalysis],
             rows: Iterable[dict[str, Any]], repeats: int = 20) -> dict[str, Any]:
    """Route every row (timing ``repeats`` calls each) and compare with the gold labels."""
    per_lang: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    confusion: Counter[tuple[str, str]] = Counter()
    latencies: list[float] = []
    wrong: list[dict[str, Any]] = []
    for row in rows:
        analysis = analyze(row["question"], row["lang"])
        start = time.perf_counter()
        for _ in range(repeats):
            decision = router.route(analysis)
        latencies.append((time.perf_counter() - start) * 1000 / repeats)
        ok_tier, ok_intent = decision.tier == row["tier"], decision.intent.value == row["intent"]
        per_lang[row["lang"]].append((ok_tier, ok_intent))
        confusion[(row["tier"], decision.tier)] += 1
        if not ok_tier:
            wrong.append({"id": row.get("id"), "question": row["question"], "gold": row["tier"],
                          "gold_intent": row["intent"], "got": decision.tier, "route": decision.to_dict()})
    every = [x for v in per_lang.values() for x in v]

    def acc(items: list[tuple[bool, bool]], k: int) -> float:
        return round(sum(x[k] for x in items) / len(items), 3) if items else 0.0

    return {
        "questions": len(every),
        "tier_accuracy": acc(every, 0),
        "intent_accuracy": acc(every, 1),
        "per_language": {lang: {"n": len(v), "tier_accuracy": acc(v, 0), "intent_accuracy": acc(v, 1)}
                         for lang, v in sorted(per_lang.items())},
        "confusion": {f"{gold}->{got}": n for (gold, got), n in sorted(confusion.items())},
        "latency_ms": {"p50": round(_pct(latencies, 0.5), 4), "p95": round(_pct(latencies, 0.95), 4),
                       "mean": round(statistics.fmean(latencies), 4) if latencies else 0.0},
        "misrouted": wrong,
    }
