"""The aspect a question asks about an entity, and whether the evidence addresses it.

"What are the side effects of metformin?" asks for one aspect (adverse effects) of one entity
(metformin). A corpus can name the entity without saying anything about that aspect; a sentence
that merely names metformin is then no answer, and the honest reply says so. This module decides
that the same way for every asker and every answer engine:

- ``asked_aspects(question)``: the aspects a question asks for (``ASPECTS``), by the cue words
  of every registered language pack (``AnswerStrings.aspect_questions``): ``adverse_effects``,
  ``dosage``, ``contraindication`` (asked by name only), ``cost``. Broader kinds of question
  (risk, efficacy, duration, "when not to use ...") are not gated: their cues are ambiguous across
  languages ("多久一次" asks how often, not how long), and a gate that fires in one language and not
  in another would give askers in different languages different answers.
- ``addresses(sentence, aspect)``: whether a sentence states something of that aspect (its
  evidence cues: an amount, a currency, and each pack's ``aspect_evidence``: "irritation",
  "20 mg", "contraindicated", "$ 45,000").
- ``aspect_gap(analysis, evidence)``: for an aspect-gated question, ``AspectGap`` when no usable
  evidence passage addresses the aspect, with the question's entities that the evidence names (the
  reply names them; when it names none, the reply says only that the sources say nothing about the
  aspect: a passage on something else is no answer either, whatever its relevance); ``None`` when
  some usable passage addresses it.
- ``gap_answer(gap, analysis)``: the reply, in the asker's language (its pack's ``gap_with_entities``
  / ``gap_without`` and ``aspect_names``), naming the entity by its name in that language: "Die
  indexierten Quellen nennen Metformin, sagen aber nichts über Nebenwirkungen." It is a refusal
  (``refused=True``): nothing is quoted as an answer.

The agent checks this before any tier generates (``medgraph.agent.graph.generate``), and the
extractive composer quotes, for such a question, only sentences that address the aspect.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from medgraph import lang
from medgraph.generate.base import Answer, disclaimer
from medgraph.lang import LanguagePack
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.schemas import Chunk


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


@dataclass(frozen=True)
class Aspect:
    """An aspect's cues in no particular language; each pack adds its words (``AnswerStrings``)."""

    question: str = ""  # fragment: the question asks for it
    evidence: str = ""  # fragment: a sentence states something of it
    amount: bool = False  # an amount (a number and a unit) states something of it


ASPECTS: dict[str, Aspect] = {
    "adverse_effects": Aspect(),
    "dosage": Aspect(amount=True),
    "contraindication": Aspect(),
    "cost": Aspect(evidence=r"\$|US\s?\$|\bUSD\b|€|\bEUR\b"),
}
_UNITS = r"mg|g|µg|mcg|ml|l|iu|mmol|kcal|%"  # units of an amount, in no particular language


def _either(fragments: Iterable[str]) -> re.Pattern[str]:
    """One case-insensitive pattern matching any of ``fragments``; one that never matches when none."""
    kept = [f for f in fragments if f]
    return _rx("|".join(kept) if kept else "(?!)")


def _amount(packs: tuple[LanguagePack, ...]) -> str:
    """An amount: a number, or a range of two ("20-40", "20 to 40"), and a unit of any pack."""
    ranges = "|".join(["-|–", *(p.answer.range_words for p in packs if p.answer.range_words)])
    units = "|".join([_UNITS, *(p.answer.amount_units for p in packs if p.answer.amount_units)])
    return rf"\d[\d.,]*\s?(?:{ranges})?\s?\d*[\d.,]*\s?(?:{units})\b"


@lru_cache(maxsize=8)
def _cues(packs: tuple[LanguagePack, ...]) -> dict[str, tuple[re.Pattern[str], re.Pattern[str]]]:
    """Aspect -> (question cues, evidence cues): its neutral ones and those of every pack."""
    out = {}
    for name, aspect in ASPECTS.items():
        question = _either([aspect.question, *(p.answer.aspect_questions.get(name, "") for p in packs)])
        evidence = _either([_amount(packs) if aspect.amount else "", aspect.evidence,
                            *(p.answer.aspect_evidence.get(name, "") for p in packs)])
        out[name] = (question, evidence)
    return out


def asked_aspects(question: str) -> list[str]:
    """The gated aspects a question asks for (in ``ASPECTS`` order)."""
    return [name for name, (cue, _) in _cues(lang.packs()).items() if cue.search(question)]


def addresses(sentence: str, aspect: str) -> bool:
    return _cues(lang.packs())[aspect][1].search(sentence) is not None


@dataclass(frozen=True)
class AspectGap:
    aspects: tuple[str, ...]
    entities: tuple[str, ...]  # the question's MeSH IDs the evidence names


def name_pattern(name: str) -> re.Pattern[str] | None:
    """A pattern finding an entity's name in text: as a whole word, case-insensitively; a Chinese
    name anywhere (no word boundaries); None for a name under two characters."""
    name = " ".join(name.split())
    if len(name) < 2:
        return None
    if re.search(r"[\u3400-\u9fff]", name):  # Chinese: no word boundaries
        return re.compile(re.escape(name))
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)


def _mentions(text: str, analysis: QueryAnalysis, mesh_id: str) -> bool:
    return any(p.search(text) for name in analysis.names_of(mesh_id) if (p := name_pattern(name)))


def subjects(analysis: QueryAnalysis) -> list[str]:
    """The question's entities an aspect is asked of: its linked entities but those whose mention is
    itself an aspect's cue ("Nebenwirkungen", "不良反应" link to *Drug-Related Side Effects and Adverse
    Reactions*: they name what is asked, not what it is asked of)."""
    cues = _cues(lang.packs())
    aspect_ids = {m.mesh_id for m in analysis.mentions
                  if m.mesh_id and any(question.search(m.surface) for question, _ in cues.values())}
    return [m for m in analysis.entity_ids if m not in aspect_ids]


def aspect_gap(analysis: QueryAnalysis, evidence: Sequence[Candidate], min_relevance: float = 0.0,
               top_k: int = 8) -> AspectGap | None:
    """``AspectGap`` when the question asks a gated aspect and no usable evidence passage states it
    of the question's subject (a passage naming one of ``subjects`` and addressing the aspect; any
    passage addressing it when the question has no subject); ``entities``: the subjects some usable
    passage names (see the module docstring)."""
    aspects = asked_aspects(analysis.text)
    if not aspects:
        return None
    usable = [c for c in evidence[:top_k] if c.chunk is not None and c.relevance >= min_relevance]
    asked_of = subjects(analysis)

    def context(chunk: Chunk) -> str:  # where a passage names what it is about: its title and section
        return f"{chunk.title}\n{chunk.parent_text or chunk.text}"

    def answers(chunk: Chunk) -> bool:
        return (any(addresses(chunk.text, a) for a in aspects)
                and (not asked_of or any(_mentions(context(chunk), analysis, m) for m in asked_of)))

    if any(answers(c.chunk) for c in usable if c.chunk is not None):
        return None
    named = [m for m in asked_of
             if any(c.chunk is not None and _mentions(context(c.chunk), analysis, m) for c in usable)]
    return AspectGap(tuple(aspects), tuple(named))


def gap_answer(gap: AspectGap, analysis: QueryAnalysis, model: str = "aspect") -> Answer:
    """The reply to a question whose aspect the corpus does not address, in the asker's language."""
    pack = lang.get_or_pivot(analysis.language)
    strings, code = pack.answer, pack.code
    names = [(analysis.names_of(m, code) or analysis.names_of(m, lang.PIVOT) or analysis.names_of(m) or [m])[0]
             for m in gap.entities]
    pivot_names = lang.pivot().answer.aspect_names
    aspect = strings.conjunction_or.join(strings.aspect_names.get(a) or pivot_names.get(a, a) for a in gap.aspects)
    text = (strings.gap_with_entities.format(entities=strings.conjunction_and.join(names), aspect=aspect) if names
            else strings.gap_without.format(aspect=aspect))
    return Answer(text, refused=True, language=code, model_used=model, disclaimer=disclaimer(code))
