"""Question decomposition: a multi-hop question as sub-queries with ``#N`` back-references.

A question whose answer joins two passages is planned as hops (``Plan``). A **bridge** question
describes an entity without naming it and then asks about it ("In pooled trials one anticoagulant
cut stroke risk by 62%. Among patients who bled while taking *this drug*, …"): hop 1 is the
description, hop 2 the question with the reference replaced by ``#1`` — filled, once hop 1 is
retrieved, with the entity its passages name (``medgraph.agent.hops``). A **comparison** asks the
same of two things ("…in X, and which in Y?"): one hop per side, neither refers to the other.
Everything else is ``single``: one hop, today's path.

Offline tier (``RulePlanner``): sentence and clause patterns plus reference words, from the
``plan`` section of the question's language pack (the pivot's for an unknown language). It is
deliberately conservative: a question it cannot split stays single-hop (the full question is
always retrieved as well, so a missed split costs nothing). Model tier
(``DSPyPlanner``): a DSPy program on a configured LLM engine, checked, with the rules as fallback.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from medgraph import lang
from medgraph.ingest.text import split_sentences
from medgraph.lang import LanguagePack
from medgraph.lang.sections.dialogue import PlanCues, listing

log = logging.getLogger(__name__)

REF = re.compile(r"#(\d+)")


@dataclass(frozen=True)
class SubQuery:
    text: str  # may hold #N: the sub-answer of hop N (1-based)

    @property
    def refs(self) -> tuple[int, ...]:
        return tuple(int(n) for n in REF.findall(self.text))

    def resolve(self, answers: dict[int, str]) -> str:
        """The text with each ``#N`` replaced by hop N's sub-answer (kept as is while unknown)."""
        return REF.sub(lambda m: answers.get(int(m.group(1)), m.group(0)), self.text)


@dataclass(frozen=True)
class Plan:
    kind: str  # single | bridge | comparison
    hops: tuple[SubQuery, ...]
    # hop N's sub-answer's entity category where the question says it ("this drug" -> Drug: the
    # pack's ``rewrite.kind_phrases``), by hop number; a hop it does not say is absent
    answer_kinds: tuple[tuple[int, str], ...] = ()

    @property
    def multi_hop(self) -> bool:
        return len(self.hops) > 1

    def answer_kind(self, number: int) -> str | None:
        """The entity category hop ``number``'s sub-answer must have, when the question says it."""
        return dict(self.answer_kinds).get(number)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind, "hops": [h.text for h in self.hops]}
        if self.answer_kinds:
            out["answer_kinds"] = {str(n): k for n, k in self.answer_kinds}
        return out


def single(question: str) -> Plan:
    return Plan("single", (SubQuery(question),))


# --- reference words ("this drug", "dieses Medikament", "该药物"; "there", "dort", "当地") and clause
# patterns: each language pack's ``plan`` section (medgraph.lang.sections.dialogue.PlanCues) ---------


@lru_cache(maxsize=8)
def _abbreviation_rx(abbreviations: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{'|'.join(abbreviations)})\.$", re.I) if abbreviations else re.compile(r"(?!)")


def _abbreviation() -> re.Pattern[str]:
    """An abbreviation that ends a piece of text ("vs.", "bzw."): those of every registered pack."""
    return _abbreviation_rx(tuple(dict.fromkeys(a for pack in lang.packs() for a in pack.plan.abbreviations)))


def _sentences(text: str) -> list[str]:
    """The text's sentences, a piece that ends in an abbreviation ("vs.", "bzw.") joined to the next."""
    abbreviation = _abbreviation()
    out: list[str] = []
    for piece in split_sentences(text):
        if out and abbreviation.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


class RulePlanner:
    """The offline planner: patterns over the question's sentences, from the language's pack."""

    def plan(self, question: str, language: str) -> Plan:
        pack = lang.get_or_pivot(language)
        text = " ".join(question.split())
        sentences = _sentences(text)
        return self._bridge(text, sentences, pack.plan, pack.rewrite.kind_phrases) \
            or self._comparison(text, sentences, pack.plan) or self._pair(sentences, pack) \
            or self._questions(sentences) or single(question)

    def _bridge(self, text: str, sentences: list[str], cues: PlanCues,
                kinds: Mapping[str, re.Pattern[str]]) -> Plan | None:
        # the first sentence after the first that refers back starts the question about #1
        for i in range(1, len(sentences)):
            hop2 = _refer(" ".join(sentences[i:]), cues, kinds)
            if hop2 is not None:
                return _bridge_plan(" ".join(sentences[:i]), *hop2)
        lead = cues.lead_clause.match(text) if cues.lead_clause is not None else None
        if lead is None:
            return None
        hop2 = _refer(lead.group("ask"), cues, kinds)
        return _bridge_plan(lead.group("desc"), *hop2) if hop2 is not None else None

    def _comparison(self, text: str, sentences: list[str], cues: PlanCues) -> Plan | None:
        ask = sentences[-1]
        compares = cues.comparison is not None and cues.comparison.search(text) is not None
        if cues.sides is None or (not compares and len(sentences) < 2):
            return None
        parts = [p.strip(" ,，") for p in cues.sides.split(ask, maxsplit=1)]
        if len(parts) != 2 or min(len(p) for p in parts) < 8:
            return None
        return _each_after(" ".join(sentences[:-1]), parts)

    def _pair(self, sentences: list[str], pack: LanguagePack) -> Plan | None:
        """One thing that meets two descriptions ("Which vitamin both corrected ... and stopped ...?"):
        the question word with each description."""
        pair = pack.plan.pair
        found = pair.match(sentences[-1]) if pair is not None else None
        if found is None or min(len(found.group("a")), len(found.group("b"))) < 8:
            return None
        head, join = found.group("head"), pack.text.word_separator
        return _each_after(" ".join(sentences[:-1]), [f"{head}{join}{found.group(side)}" for side in ("a", "b")])

    def _questions(self, sentences: list[str]) -> Plan | None:
        """Two or three questions in one text ("What did A find? And what did B find?", "…？…？"): one
        sub-query each, the text's other sentences (its context) before each."""
        asked = [s for s in sentences if s.endswith(QUESTION_MARKS)]
        if not 2 <= len(asked) <= 3 or min(len(s) for s in asked) < 8:
            return None
        return _each_after(" ".join(s for s in sentences if s not in asked), asked)


QUESTION_MARKS = ("?", "？")


def _each_after(context: str, parts: list[str]) -> Plan:
    """A comparison: one sub-query per part, each after the question's context sentences."""
    return Plan("comparison", tuple(SubQuery(" ".join(x for x in (context, p) if x)) for p in parts))


def _bridge_plan(desc: str, hop2: str, kind: str | None) -> Plan | None:
    if len(desc) < 12:
        return None
    return Plan("bridge", (SubQuery(desc), SubQuery(hop2)), ((1, kind),) if kind else ())


def _refer(ask: str, cues: PlanCues, kinds: Mapping[str, re.Pattern[str]]) -> tuple[str, str | None] | None:
    """``ask`` with its first back-reference replaced by ``#1``, and the category the reference
    names where it is a kind phrase ("this drug": Drug); None when it has no back-reference."""
    there = cues.place.search(ask) if cues.place is not None else None
    ref = cues.reference.search(ask) if cues.reference is not None else None
    prep = cues.reference_after_word.search(ask) if cues.reference_after_word is not None else None
    if prep is not None and (ref is None or prep.start() < ref.start()):  # "with that dye" -> "with #1"
        return ask[: prep.start(1)] + "#1" + ask[prep.end():], _kind_at(ask, prep.start(1), kinds)
    if ref is not None:
        # a determiner and its noun ("this drug" -> "#1"), or the determiner alone ("该药物" -> "#1药物")
        return ask[: ref.start()] + "#1" + ask[ref.end():], _kind_at(ask, ref.start(), kinds)
    if there is not None:
        return ask[: there.start()] + cues.place_reference + ask[there.end():], None
    return None


def _kind_at(text: str, start: int, kinds: Mapping[str, re.Pattern[str]]) -> str | None:
    """The category whose kind phrase starts at ``start`` ("this drug", "dieses Medikaments", "该药")."""
    return next((kind for kind, rx in kinds.items() if rx.match(text, start)), None)


class DSPyPlanner:
    """The model tier: a DSPy program over ``lm`` (any DSPy LM, e.g. ``medgraph.llm.dspy_bridge.chat_lm``)
    writes the sub-queries. Its plan is used only when it is well formed — a known kind, one to
    four non-empty sub-queries, every ``#N`` pointing to an earlier hop, a single-hop plan with
    exactly one — else, and when the call fails, ``fallback`` (default: ``RulePlanner``) plans."""

    def __init__(self, lm: object, fallback: RulePlanner | None = None) -> None:
        self.lm = lm
        self.fallback = fallback if fallback is not None else RulePlanner()
        self.program = _program()

    def plan(self, question: str, language: str) -> Plan:
        import dspy

        try:
            with dspy.context(lm=self.lm):
                out = self.program(question=question, language=language)
            plan = checked_plan(str(out.kind), [str(q) for q in out.sub_queries], question)
        except Exception as exc:  # noqa: BLE001 - the rules stand in for a failed call
            log.warning("dspy planner failed (%s); using the rules", exc)
            return self.fallback.plan(question, language)
        if plan is None:
            log.warning("dspy planner returned no usable plan; using the rules")
            return self.fallback.plan(question, language)
        return plan


def checked_plan(kind: str, sub_queries: list[str], question: str) -> Plan | None:
    """A model's plan when it is well formed (see ``DSPyPlanner``), else None."""
    kind = kind.strip().lower()
    texts = [" ".join(q.split()) for q in sub_queries]
    if kind not in ("single", "bridge", "comparison") or not texts or len(texts) > 4 or not all(texts):
        return None
    if kind == "single":
        return single(question) if len(texts) == 1 else None
    hops = tuple(SubQuery(t) for t in texts)
    if len(hops) < 2 or any(n < 1 or n >= i for i, h in enumerate(hops, 1) for n in h.refs):
        return None
    return Plan(kind, hops)


def _program() -> Any:
    import dspy

    class Decompose(dspy.Signature):  # type: ignore[misc]
        """Split a medical question whose answer needs two or more passages into sub-queries, in the
        question's language. bridge: the question describes something without naming it, then asks
        about it: first a sub-query that finds it, then the question with the reference replaced by
        #1 (the first sub-query's answer). comparison: the same thing asked of two sides: one
        sub-query per side. single: the question needs one passage: return it as the only sub-query."""

        question: str = dspy.InputField()
        language: str = dspy.InputField(desc=f"the question's language: {listing(lang.codes())}")
        kind: str = dspy.OutputField(desc="single, bridge or comparison")
        sub_queries: list[str] = dspy.OutputField(desc="in order; #N refers to the answer of sub-query N")

    return dspy.Predict(Decompose)
