"""The model-tier router: an LLM reads the question and names its intent, entities and constraints.

Input: a ``QueryAnalysis`` and a chat function (any tier's ``ChatModel``: llama.cpp, vLLM, an
OpenAI-compatible endpoint). Output: a ``RouteDecision`` scored exactly like the rules (E from
entities + constraints, I from the intent), with ``method="llm"``. When the reply is not the JSON
asked for, or names an unknown intent, the decision is the rule router's, marked
``llm-fallback`` with the reason. ``messages`` / ``decide`` are separate so that async callers
(serve/services.py) make the model call themselves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from medgraph import lang
from medgraph.lang.sections.dialogue import listing
from medgraph.llm.base import ChatParams, Message
from medgraph.retrieve.types import QueryAnalysis
from medgraph.route.rules import RuleRouter
from medgraph.route.types import CONSTRAINT_KINDS, INTENT_DEPTH, Intent, RouteDecision, entity_score, tier_for

SYSTEM = (
    "You classify clinical questions for routing. Reply with one JSON object and nothing else: "
    '{"intent": one of ' + ", ".join(f'"{i.value}"' for i in Intent) + ', '
    '"entities": [the distinct medical entities: drugs, diseases, symptoms, procedures], '
    '"constraints": [patient constraints among ' + ", ".join(f'"{c}"' for c in CONSTRAINT_KINDS) + "]}. "
    "PATIENT_FAQ: a lay question about one thing. CLINICAL_DECISION: what to do for a patient. "
    "DRUG_INTERACTION: drugs taken together. LITERATURE_MULTIHOP: what studies show, mechanisms, associations. "
    "CROSS_CORPUS: comparing guidelines or sources."
)


def system_prompt() -> str:
    """``SYSTEM`` and the languages a question may be in (the registered packs')."""
    return f"{SYSTEM} The question may be {listing([p.name for p in lang.packs()])}."
PARAMS = ChatParams(max_tokens=160, temperature=0.0)
_JSON = re.compile(r"\{.*\}", re.DOTALL)


class RouterReplyError(ValueError):
    pass


def parse_reply(raw: str) -> tuple[Intent, list[str], list[str]]:
    match = _JSON.search(raw)
    if match is None:
        raise RouterReplyError("no JSON object in the reply")
    try:
        data: Any = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise RouterReplyError(f"invalid JSON: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise RouterReplyError("the reply is not a JSON object")
    try:
        intent = Intent(str(data.get("intent", "")).strip().upper())
    except ValueError as exc:
        raise RouterReplyError(f"unknown intent {data.get('intent')!r}") from exc
    entities = [str(e).strip().lower() for e in data.get("entities") or [] if str(e).strip()]
    constraints = [str(c).strip().lower() for c in data.get("constraints") or []]
    return intent, list(dict.fromkeys(entities)), [c for c in dict.fromkeys(constraints) if c in CONSTRAINT_KINDS]


class LLMRouter:
    name = "llm"

    def __init__(self, chat: Callable[[list[Message], ChatParams], str] | None = None,
                 small_max: int = 3, medium_max: int = 4) -> None:
        self.chat = chat
        self.small_max, self.medium_max = small_max, medium_max
        self.fallback = RuleRouter(small_max, medium_max)

    @staticmethod
    def messages(analysis: QueryAnalysis) -> list[Message]:
        return [{"role": "system", "content": system_prompt()}, {"role": "user", "content": analysis.text}]

    def decide(self, analysis: QueryAnalysis, raw: str | None, error: str | None = None) -> RouteDecision:
        """The decision for the model's reply ``raw`` (or the rules' when it is unusable)."""
        try:
            if raw is None:
                raise RouterReplyError(error or "no reply")
            intent, entities, constraints = parse_reply(raw)
        except RouterReplyError as exc:
            rules = self.fallback.route(analysis)
            return RouteDecision(**{**rules.__dict__, "method": "llm-fallback", "notes": (f"llm: {exc}",)})
        e, i = entity_score(len(entities), len(constraints)), INTENT_DEPTH[intent]
        return RouteDecision(tier=tier_for(e + i, self.small_max, self.medium_max), intent=intent,
                             entity_score=e, intent_score=i, entities=tuple(entities),
                             constraints=tuple(constraints), method=self.name)

    def route(self, analysis: QueryAnalysis) -> RouteDecision:
        if self.chat is None:
            raise RuntimeError("LLMRouter.route needs a chat function; async callers use messages()/decide()")
        try:
            raw = self.chat(self.messages(analysis), PARAMS)
        except Exception as exc:  # noqa: BLE001 - any model failure falls back to the rules
            return self.decide(analysis, None, f"{type(exc).__name__}: {exc}")
        return self.decide(analysis, raw)
