"""Records of query routing: intents, tiers and the ``RouteDecision`` a router returns.

Score: E (entities + patient constraints, 1-3) + I (intent depth, 1-3). With the default
thresholds a total <= 3 goes to SMALL, 4 to MEDIUM, >= 5 to LARGE.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Intent(StrEnum):
    PATIENT_FAQ = "PATIENT_FAQ"
    CLINICAL_DECISION = "CLINICAL_DECISION"
    DRUG_INTERACTION = "DRUG_INTERACTION"
    LITERATURE_MULTIHOP = "LITERATURE_MULTIHOP"
    CROSS_CORPUS = "CROSS_CORPUS"


# intent depth I: how much reasoning over the evidence the question needs
INTENT_DEPTH: dict[Intent, int] = {
    Intent.PATIENT_FAQ: 1,
    Intent.CLINICAL_DECISION: 2,
    Intent.DRUG_INTERACTION: 2,
    Intent.LITERATURE_MULTIHOP: 3,
    Intent.CROSS_CORPUS: 3,
}

CONSTRAINT_KINDS = ("age", "sex", "renal", "hepatic", "pregnancy")


def entity_score(n_entities: int, n_constraints: int) -> int:
    """E: 1 for at most one entity or constraint, 2 for two or three, 3 for four or more."""
    n = n_entities + n_constraints
    return 1 if n <= 1 else 2 if n <= 3 else 3


def tier_for(total: int, small_max: int = 3, medium_max: int = 4) -> str:
    return "small" if total <= small_max else "medium" if total <= medium_max else "large"


@dataclass(frozen=True)
class RouteDecision:
    tier: str
    intent: Intent
    entity_score: int  # E
    intent_score: int  # I
    entities: tuple[str, ...] = ()  # MeSH IDs counted in E
    constraints: tuple[str, ...] = ()  # constraint kinds counted in E
    cues: tuple[str, ...] = ()  # the cue words that decided the intent
    method: str = "rules"  # rules | llm | llm-fallback | forced
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def total(self) -> int:
        return self.entity_score + self.intent_score

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["intent"] = self.intent.value
        out["total"] = self.total
        for key in ("entities", "constraints", "cues", "notes"):
            out[key] = list(out[key])
        return out
