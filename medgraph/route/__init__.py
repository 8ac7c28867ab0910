"""Query routing: send each question to the cheapest tier (SMALL / MEDIUM / LARGE) that can answer it.

Input: a ``QueryAnalysis``. Output: a ``RouteDecision``. ``RuleRouter`` is the offline tier
(transparent rules over the language packs' cues); ``LLMRouter`` (``medgraph.route.llm``) asks an LLM for the intent,
entities and constraints and falls back to the rules when its answer does not parse.
"""

from __future__ import annotations

from medgraph.route.rules import RuleRouter
from medgraph.route.types import INTENT_DEPTH, Intent, RouteDecision, entity_score, tier_for

__all__ = ["INTENT_DEPTH", "Intent", "RouteDecision", "RuleRouter", "entity_score", "tier_for"]
