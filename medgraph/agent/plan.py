"""Question decomposition: a multi-hop question as sub-queries with ``#N`` back-references.

A question whose answer joins two passages is planned as hops (``Plan``). A **bridge** question
describes an entity without naming it and then asks about it ("In pooled trials one anticoagulant
cut stroke risk by 62%. Among patients who bled while taking *this drug*, …"): hop 1 is the
description, hop 2 the question with the reference replaced by ``#1`` — filled, once hop 1 is
retrieved, with the entity its passages name (``medgraph.agent.hops``). A **comparison** asks the
same of two things ("…in X, and which in Y?"): one hop per side, neither refers to the other.
Everything else is ``single``: one hop, today's path.

Offline tier (``RulePlanner``): sentence and clause patterns plus reference words in English,
German and Chinese. It is deliberately conservative: a question it cannot split stays single-hop
(the full question is always retrieved as well, so a missed split costs nothing). Model tier
(``DSPyPlanner``): a DSPy program on a configured LLM engine, checked, with the rules as fallback.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from medgraph.ingest.text import split_sentences

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

    @property
    def multi_hop(self) -> bool:
        return len(self.hops) > 1

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "hops": [h.text for h in self.hops]}


def single(question: str) -> Plan:
    return Plan("single", (SubQuery(question),))


# --- reference words: "this drug", "dieses Medikament", "该药物"; "there", "dort", "当地" ----------

_EN_DET = r"(?:this|these|such an?|such)"
_DE_DET = r"(?:dies(?:e[mnrs]?)?|derselben?|dieselben?|dasselbe|demselben|denselben|desselben|jene[mnrs]?)"
_REFERENCE = {
    # determiner + the noun it points back with ("this drug", "the same combination")
    "en": re.compile(rf"\b{_EN_DET}\s+(?!is\b|was\b|study\b|trial\b|review\b|work\b)([A-Za-z][\w-]*)", re.I),
    "de": re.compile(rf"\b{_DE_DET}\s+(?!ist\b|war\b|Studie\b)([A-Za-zÄÖÜäöüß][\w-]*)"),
    "zh": re.compile(r"(?:(?<!应)该|这(?=第)|这种|这一|这类|此种|(?<![因如彼从由据为])此|上述|同一|同种|这些)"),
}
# English "that" and "the same" refer back only after a preposition or verb ("with that dye", "given
# the same combination"; not "the drug that …", "are they the same procedure?")
_AFTER_WORD = {"en": re.compile(
    r"\b(?:in|with|of|for|by|to|on|from|at|given|using|taking|receiving|about|after|under|than|into|among)\s+"
    r"((?:that|that same|the same)\s+(?!is\b|was\b|study\b|trial\b)[A-Za-z][\w-]*)", re.I)}
# a place named only by reference, at the end of a clause ("… audited there?")
_THERE = {
    "en": re.compile(r"\bthere(?=\s*[,.;:?!])", re.I),
    "de": re.compile(r"\bdort\b"),
    "zh": re.compile(r"(?:当地|那里|该地)"),
}
_IN_PLACE = {"en": "in #1", "de": "in #1", "zh": "#1"}

# "In the country where …, which …?" / "In dem Land, in dem …: Welche …?" / "在…的国家，…？"
_LEAD_CLAUSE = {
    "en": re.compile(r"^(?P<desc>(?:In|For|Among|At)\s+the\s+[\w -]{2,40}?\s+(?:where|that|which|whose|in which)\b.+?),\s+"
                     r"(?P<ask>(?:what|which|how|who|did|does|do|was|were|is|are)\b.+)$", re.I),
    "de": re.compile(r"^(?P<desc>.{20,}?)[:;]\s+(?P<ask>[A-ZÄÖÜ].+)$"),
    "zh": re.compile(r"^(?P<desc>.{8,}?)[：；]\s*(?P<ask>.+)$"),
}

# comparison: the same thing asked of two sides
_COMPARE = {
    "en": re.compile(r"\b(?:each|respectively|the former|the latter)\b", re.I),
    "de": re.compile(r"\b(?:jeweils|bzw\.|beziehungsweise|Ersteren|Letzteren|ersteren|letzteren)"),
    "zh": re.compile(r"(?:分别|各自|前者|后者)"),
}
# where the two sides of a comparison question split: ", and how …" / ", und welches …" / "，…"
_SIDES = {
    "en": re.compile(r",?\s+and\s+(?=(?:what|which|how|who|did|does|do|was|were|is|are|in|of|for|among)\b)", re.I),
    "de": re.compile(r",?\s+(?:und|bzw\.)\s+(?=(?:was|welche[mnrs]?|wie|wer|war|waren|ist|sind|in|bei|für|unter)\b)", re.I),
    "zh": re.compile(r"[，,]\s*(?:以及|而|和)?(?=(?:在|对|其|另一|后者|第二))"),
}


_ABBREVIATION = re.compile(r"\b(?:vs|e\.g|i\.e|cf|bzw|z\.\s?B|ca|Dr|Prof|Abb|vgl|etc)\.$", re.I)


def _sentences(text: str) -> list[str]:
    """The text's sentences, a piece that ends in an abbreviation ("vs.", "bzw.") joined to the next."""
    out: list[str] = []
    for piece in split_sentences(text):
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


class RulePlanner:
    """The offline planner: patterns over the question's sentences, per language."""

    def plan(self, question: str, language: str) -> Plan:
        lang = language if language in _REFERENCE else "en"
        text = " ".join(question.split())
        return self._bridge(text, lang) or self._comparison(text, lang) or single(question)

    def _bridge(self, text: str, lang: str) -> Plan | None:
        sentences = _sentences(text)
        # the first sentence after the first that refers back starts the question about #1
        for i in range(1, len(sentences)):
            hop2 = _refer(" ".join(sentences[i:]), lang)
            if hop2 is not None:
                return _bridge_plan(" ".join(sentences[:i]), hop2)
        lead = _LEAD_CLAUSE[lang].match(text)
        if lead is None:
            return None
        hop2 = _refer(lead.group("ask"), lang)
        return _bridge_plan(lead.group("desc"), hop2) if hop2 is not None else None

    def _comparison(self, text: str, lang: str) -> Plan | None:
        sentences = _sentences(text)
        ask = sentences[-1]
        context = " ".join(sentences[:-1])
        if not _COMPARE[lang].search(text) and len(sentences) < 2:
            return None
        parts = [p.strip(" ,，") for p in _SIDES[lang].split(ask, maxsplit=1)]
        if len(parts) != 2 or min(len(p) for p in parts) < 8:
            return None
        hops = tuple(SubQuery(" ".join(x for x in (context, p) if x)) for p in parts)
        return Plan("comparison", hops)


def _bridge_plan(desc: str, hop2: str) -> Plan | None:
    return Plan("bridge", (SubQuery(desc), SubQuery(hop2))) if len(desc) >= 12 else None


def _refer(ask: str, lang: str) -> str | None:
    """``ask`` with its first back-reference replaced by ``#1`` (None when it has none)."""
    there = _THERE[lang].search(ask)
    ref = _REFERENCE[lang].search(ask)
    after = _AFTER_WORD.get(lang)
    prep = after.search(ask) if after is not None else None
    if prep is not None and (ref is None or prep.start() < ref.start()):  # "with that dye" -> "with #1"
        return ask[: prep.start(1)] + "#1" + ask[prep.end():]
    if ref is not None:
        # English and German: determiner and noun ("this drug" -> "#1"); Chinese: the determiner
        # ("该药物" -> "#1药物")
        return ask[: ref.start()] + "#1" + ask[ref.end():]
    if there is not None:
        return ask[: there.start()] + _IN_PLACE[lang] + ask[there.end():]
    return None


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
        language: str = dspy.InputField(desc="the question's language: en, de or zh")
        kind: str = dspy.OutputField(desc="single, bridge or comparison")
        sub_queries: list[str] = dspy.OutputField(desc="in order; #N refers to the answer of sub-query N")

    return dspy.Predict(Decompose)
