"""The aspect a question asks about an entity, and whether the evidence addresses it.

"What are the side effects of metformin?" asks for one aspect (adverse effects) of one entity
(metformin). A corpus can name the entity without saying anything about that aspect; a sentence
that merely names metformin is then no answer, and the honest reply says so. This module decides
that the same way for every asker and every answer engine:

- ``asked_aspects(question)``: the aspects a question asks for, by EN / DE / ZH cue words
  (``ASPECTS``): ``adverse_effects``, ``dosage``, ``contraindication`` (asked by name only),
  ``cost``. Broader kinds of question (risk, efficacy, duration, "when not to use ...") are not
  gated: their cues are ambiguous across languages ("多久一次" asks how often, not how long), and a
  gate that fires in one language and not in another would give the three askers different answers.
- ``addresses(sentence, aspect)``: whether a sentence states something of that aspect (its
  evidence cues, in English, German and Chinese: "irritation", "20 mg", "contraindicated",
  "$ 45,000").
- ``aspect_gap(analysis, evidence)``: for an aspect-gated question, ``AspectGap`` when no usable
  evidence passage addresses the aspect, with the question's entities that the evidence names (the
  reply names them; when it names none, the reply says only that the sources say nothing about the
  aspect: a passage on something else is no answer either, whatever its relevance); ``None`` when
  some usable passage addresses it.
- ``gap_answer(gap, analysis)``: the reply, in the asker's language, naming the entity by its name
  in that language: "Die indexierten Quellen nennen Metformin, beschreiben aber keine
  Nebenwirkungen." It is a refusal (``refused=True``): nothing is quoted as an answer.

The agent checks this before any tier generates (``medgraph.agent.graph.generate``), and the
extractive composer quotes, for such a question, only sentences that address the aspect.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from medgraph.generate.base import Answer, disclaimer
from medgraph.retrieve.types import Candidate, QueryAnalysis


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


@dataclass(frozen=True)
class Aspect:
    question: re.Pattern[str]  # the question asks for it
    evidence: re.Pattern[str]  # a sentence states something of it
    names: dict[str, str]  # what it is called in each language (the reply)


_AMOUNT = (r"\d[\d.,]*\s?(?:-|–|to|bis|至)?\s?\d*[\d.,]*\s?(?:mg|g|µg|mcg|ml|l|iu|units?|mmol|kcal|%|percent|teaspoons?"
           r"|tablets?|Tabletten|毫克|克|毫升|升|单位|片)\b")
ASPECTS: dict[str, Aspect] = {
    "adverse_effects": Aspect(
        _rx(r"side[- ]?effects?|adverse (?:effects?|events?|reactions?|drug)|harmful effects?|toxicit|nebenwirkung"
            r"|unerwünschte (?:wirkung|ereignis|arzneimittel)|副作用|不良反应|毒副"),
        _rx(r"adverse|side[- ]?effects?|toxicit|irritat|dermatitis|allerg|hypersensitiv|intoleran|tolerat"
            r"|nausea|vomit|diarrh|hypoglyc|\brash|dryness|nebenwirkung|unverträglich|reizung|allergi"
            r"|副作用|不良反应|刺激|过敏"),
        {"en": "adverse effects", "de": "Nebenwirkungen", "zh": "不良反应"}),
    "dosage": Aspect(
        # (not a multi-dose or single-dose vial, Mehrdosenbehältnis, 多剂量药瓶: a kind of container)
        _rx(r"(?<!multi-)(?<!single-)(?<!multi )\bdoses?\b|dosage|dosing|\bconcentration|how much .{0,40}\b(?:take"
            r"|give|use|contain)|\bdosis|dosierung|konzentration|wie ?viel .{0,40}(?:nehmen|geben|enthält|enthalten)"
            r"|(?<![多单])剂量|用量|浓度|含量"),
        _rx(_AMOUNT + r"|\bdoses?\b|dosage|concentration|per (?:day|kg)|\bdaily\b|\bdosis|dosierung|konzentration"
            r"|täglich|剂量|用量|浓度|每日|每天"),
        {"en": "dose or concentration", "de": "Dosierung oder Konzentration", "zh": "剂量或浓度"}),
    "contraindication": Aspect(
        _rx(r"contraindicat|kontraindi|gegenanzeige|禁忌"),
        _rx(r"contraindicat|should not|must not|not be used|\bavoid|not recommended|kontraindi|gegenanzeige"
            r"|nicht (?:an|ver)wende|nicht empfohlen|vermeid|禁忌|不宜|避免|不应|不得"),
        {"en": "contraindications", "de": "Gegenanzeigen", "zh": "禁忌"}),
    "cost": Aspect(
        _rx(r"\bcosts?\b|\bprices?\b|how much does .{0,60}\bcost|expensive|\bkosten|kostet|\bpreis|费用|成本|价格|多少钱"),
        _rx(r"\bcosts?\b|\bprices?\b|\$|US\s?\$|\bUSD\b|€|\bEUR\b|dollars?|euros?|expens|economic|saving|\bkosten"
            r"|\bpreis|费用|成本|价格|\d\s?元"),
        {"en": "cost", "de": "Kosten", "zh": "费用"}),
}


def asked_aspects(question: str) -> list[str]:
    """The gated aspects a question asks for (in ``ASPECTS`` order)."""
    return [name for name, aspect in ASPECTS.items() if aspect.question.search(question)]


def addresses(sentence: str, aspect: str) -> bool:
    return ASPECTS[aspect].evidence.search(sentence) is not None


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


def aspect_gap(analysis: QueryAnalysis, evidence: Sequence[Candidate], min_relevance: float = 0.0,
               top_k: int = 8) -> AspectGap | None:
    """``AspectGap`` when the question asks a gated aspect, no usable evidence passage addresses it,
    and some usable passage names one of the question's entities (see the module docstring)."""
    aspects = asked_aspects(analysis.text)
    if not aspects:
        return None
    usable = [c for c in evidence[:top_k] if c.chunk is not None and c.relevance >= min_relevance]
    if any(addresses(c.chunk.text, a) for c in usable if c.chunk is not None for a in aspects):
        return None
    named = [m for m in analysis.entity_ids
             if any(c.chunk is not None and _mentions(c.chunk.text, analysis, m) for c in usable)]
    return AspectGap(tuple(aspects), tuple(named))


REPLIES = {
    "en": ("The indexed sources mention {entities} but say nothing about {aspect}.",
           "The indexed sources say nothing about {aspect} here."),
    "de": ("Die indexierten Quellen nennen {entities}, sagen aber nichts über {aspect}.",
           "Die indexierten Quellen sagen dazu nichts über {aspect}."),
    "zh": ("已索引的文献提到了{entities}，但没有关于{aspect}的内容。",
           "已索引的文献中没有关于{aspect}的内容。"),
}
_AND = {"en": " and ", "de": " und ", "zh": "和"}
_ASPECT_JOIN = {"en": " or ", "de": " oder ", "zh": "或"}


def gap_answer(gap: AspectGap, analysis: QueryAnalysis, model: str = "aspect") -> Answer:
    """The reply to a question whose aspect the corpus does not address, in the asker's language."""
    lang = analysis.language if analysis.language in REPLIES else "en"
    names = [(analysis.names_of(m, lang) or analysis.names_of(m, "en") or analysis.names_of(m) or [m])[0]
             for m in gap.entities]
    aspect = _ASPECT_JOIN[lang].join(ASPECTS[a].names[lang] for a in gap.aspects)
    with_entities, without = REPLIES[lang]
    text = with_entities.format(entities=_AND[lang].join(names), aspect=aspect) if names else without.format(aspect=aspect)
    return Answer(text, refused=True, language=lang, model_used=model, disclaimer=disclaimer(lang))
