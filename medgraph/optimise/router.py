"""The router program (``medgraph.route.dspy_router.RouterProgram``) as a GEPA task.

The program names the question's intent, entities and constraints and rewrites it as a standalone
query; its route (intent, and the tier scored from intent depth + entity count, as the service
does: ``DSPyRouter.decide``) is compared with the labelled question. Examples come from the
labelled router questions (``tests/fixtures/router/*.jsonl``: ``question``, ``lang``, ``intent``,
``tier``, ``e``).

``RouterMetric``: score = ½ intent right + ½ tier right; the feedback names what was wrong
("intent PATIENT_FAQ, expected DRUG_INTERACTION", "tier small, expected medium: 1 entity and
constraint counted, the question has 2 (E 1, expected 2)"), or that the reply gave no route.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import dspy

from medgraph.optimise.gepa import feedback_metric
from medgraph.retrieve.types import QueryAnalysis
from medgraph.route.dspy_router import DSPyRouter
from medgraph.route.types import Intent


def router_examples(rows: Iterable[dict[str, Any]]) -> list[dspy.Example]:
    """One example per labelled question (inputs: ``question``)."""
    return [dspy.Example(id=r.get("id"), question=r["question"], lang=r["lang"], intent=r["intent"],
                         tier=r["tier"], e=r.get("e")).with_inputs("question") for r in rows]


class RouterMetric:
    """Intent and tier agreement with the label, with a diagnosis (module docstring)."""

    def __init__(self, small_max: int = 3, medium_max: int = 4) -> None:
        self.router = DSPyRouter(None, small_max, medium_max)

    def __call__(self, gold: dspy.Example, pred: Any, trace: Any = None, pred_name: str | None = None,
                 pred_trace: Any = None) -> dspy.Prediction:
        decision = self.router.decide(QueryAnalysis(gold.question, gold.lang), pred)
        if decision.method != self.router.name:
            reason = next((n for n in decision.notes if n.startswith("dspy: ")), "dspy: no usable reply")[6:]
            return feedback_metric(0.0, f"No usable route ({reason}). The intent must be exactly one of "
                                        f"{', '.join(i.value for i in Intent)}; expected {gold.intent}.",
                                   intent_ok=False, tier_ok=False)
        problems = []
        intent_ok = decision.intent.value == gold.intent
        if not intent_ok:
            problems.append(f"Misclassified intent: {decision.intent.value}, expected {gold.intent}.")
        tier_ok = decision.tier == gold.tier
        if not tier_ok:
            why = ""
            if gold.get("e") is not None and decision.entity_score != gold.e:
                named = len(decision.entities) + len(decision.constraints)
                why = (f" It named {named} entities and patient constraints (E {decision.entity_score}); "
                       f"the question has E {gold.e} (1: one thing, 2: two or three, 3: four or more).")
            problems.append(f"Misclassified tier: {decision.tier}, expected {gold.tier}.{why}")
        score = 0.5 * intent_ok + 0.5 * tier_ok
        return feedback_metric(score, " ".join(problems) or "Intent and tier right.", intent_ok=intent_ok,
                               tier_ok=tier_ok)
