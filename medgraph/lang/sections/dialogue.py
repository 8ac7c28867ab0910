"""Cues of the conversation stages: follow-up rewriting, multi-hop planning, routing.

``RewriteCues`` (``medgraph.agent.rewrite.RuleRewriter``): the anaphora and ellipsis of a follow-up
question ("What are its side effects?", "And in children?") that the rewriter resolves against the
last turns. ``PlanCues`` (``medgraph.agent.plan.RulePlanner``): the back-references and clause
patterns that split a multi-hop question into sub-queries with ``#N``. ``RouteCues``
(``medgraph.route.rules.RuleRouter``): the patient constraints, intent cues and drug-name stems the
rule router counts.

Patterns are compiled regular expressions, flags included (``cue`` compiles case-insensitive
alternatives); a pattern left ``None`` (or an empty table) means the language lacks that cue, and
the stage skips it. A minimal pack with all defaults rewrites, splits and routes nothing on its own
cues (routing still counts linked entities and the cues of script-specific packs).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


def cue(*patterns: str) -> re.Pattern[str]:
    """One case-insensitive pattern that matches any of ``patterns``."""
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def listing(items: Sequence[str]) -> str:
    """``items`` as an English list for a model prompt ("en, de or zh")."""
    items = list(items)
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} or {items[-1]}"


@dataclass(frozen=True)
class RewriteCues:
    """Anaphora and ellipsis of a follow-up question in one language.

    ``kind_phrases``: a phrase that refers to the latest entity of one category ("this drug" ->
    the latest drug); ``possessive``: a possessive determiner (group ``det``) and what it owns
    (group ``noun``), rewritten with ``possessive_phrase`` ("its side effects" -> "the side
    effects of metformin"); ``pronouns``: a pronoun and the text that replaces it, ``{e}`` being
    the entity's name ("davon" -> "von {e}"), unless ``expletive`` finds a use that refers to
    nothing ("Is it safe to ...", "Gibt es ..."). Ellipsis: a follow-up opened by
    ``ellipsis_lead`` and/or closed by ``ellipsis_tail`` ("What about ...", "...呢") is a fragment
    that either constrains the previous question (it starts with one of ``prepositions`` or names a
    patient constraint of the route cues: joined with ``constraint_join``) or replaces its focus
    entity ("What about ibuprofen?").
    """

    # category ("Drug", "Disease"; a disease phrase also takes a symptom) -> a phrase that refers to one
    kind_phrases: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    # a possessive determiner (group "det") and the noun phrase it owns (group "noun", may be empty)
    possessive: re.Pattern[str] | None = None
    # what replaces a possessive and its noun; {article}, {noun}, {name} (the entity's name)
    possessive_phrase: str = "{noun} {name}"
    # possessive determiner (lower case) -> the article of ``possessive_phrase`` ("seine" -> "die ")
    possessive_articles: Mapping[str, str] = field(default_factory=dict)
    # a possessive determiner capitalised inside the sentence is the polite address ("Ihre"), not a reference
    capitalised_possessive_is_address: bool = False
    # pronoun pattern -> its replacement ("{e}": the entity's name), tried in order
    pronouns: tuple[tuple[re.Pattern[str], str], ...] = ()
    # a pronoun use that refers to nothing ("it is ... to", "es gibt"): the question stays as it is
    expletive: re.Pattern[str] | None = None
    # what follows a pronoun that makes it part of another word ("it's"): the pronoun refers to nothing
    contraction: re.Pattern[str] | None = None
    # before a deictic phrase ("该药"), a clause break that shows the question names the referent itself
    clause_break: re.Pattern[str] | None = None
    # words that name no antecedent: two other words before a pronoun mean the question names its own
    function_words: frozenset[str] = frozenset()
    # what opens an elliptical follow-up ("what about", "und", "那")
    ellipsis_lead: re.Pattern[str] | None = None
    # what closes one ("呢", "... aus")
    ellipsis_tail: re.Pattern[str] | None = None
    # a fragment that starts with one is a constraint on the previous question ("in", "bei", "对于")
    prepositions: re.Pattern[str] | None = None
    # put before a constraint fragment that starts with no preposition ("in" children); "": none
    constraint_preposition: str = ""
    # removed from the start of a constraint fragment before it is joined ("对于")
    constraint_strip: re.Pattern[str] | None = None
    # the previous question with a constraint fragment: {question} (without its end mark), {fragment}
    constraint_join: str = "{question} {fragment}?"


@dataclass(frozen=True)
class PlanCues:
    """Back-references and clause patterns of a multi-hop question in one language.

    A bridge question describes something, then refers back to it: ``reference`` (a determiner and
    its noun, "this drug", or the determiner alone, "该") or ``reference_after_word`` (group 1,
    after a preposition or verb: "with that dye") is replaced by ``#1``; ``place`` ("there") by
    ``place_reference``. ``lead_clause`` splits one sentence into a description (group ``desc``)
    and a question (group ``ask``). A comparison (``comparison`` cues, or a question after context
    sentences) splits its last sentence at ``sides`` into one sub-query per side; an intersection
    (``pair``) into the question word with each description. Several questions in one text (a
    question sentence after a question sentence) are one sub-query each, in every language.
    """

    # a determiner and the noun it points back with ("this drug"), or a pointing determiner ("该")
    reference: re.Pattern[str] | None = None
    # a reference after a preposition or verb ("with that dye"): group 1 is replaced by #1
    reference_after_word: re.Pattern[str] | None = None
    # a place named only by reference ("there", "dort", "当地")
    place: re.Pattern[str] | None = None
    # what replaces ``place`` ("in #1")
    place_reference: str = "#1"
    # a leading description and the question about it in one sentence: groups "desc" and "ask"
    lead_clause: re.Pattern[str] | None = None
    # words that ask the same of two sides ("each", "respectively", "分别")
    comparison: re.Pattern[str] | None = None
    # where the two sides of a comparison question split (", and how ...")
    sides: re.Pattern[str] | None = None
    # one thing asked to meet two descriptions ("Which vitamin both corrected ... and stopped ...?"):
    # groups "head" (the question word and its noun), "a" and "b" (the two descriptions)
    pair: re.Pattern[str] | None = None
    # abbreviations ending in a period that end no sentence (regex fragments without the period: "z\.\s?B")
    abbreviations: tuple[str, ...] = ()


@dataclass(frozen=True)
class RouteCues:
    """The rule router's cues in one language (``medgraph.route.rules``).

    Each matching intent cue is one vote for that intent; a constraint cue counts a patient
    constraint; ``overview`` cues (with the cross-corpus intent's) switch on the community path;
    ``relation`` marks a binary relation ("between A and B": at least two entities); ``inn_stems``
    finds drug names by their WHO INN stem when the vocabulary does not know them.
    """

    # constraint kind (medgraph.route.types.CONSTRAINT_KINDS: "age", "sex", "renal", ...) -> its cue
    constraints: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    # intent (medgraph.route.types.Intent value: "PATIENT_FAQ", ...) -> its cue; each match is a vote
    intents: Mapping[str, re.Pattern[str]] = field(default_factory=dict)
    # a question about the whole corpus ("main themes", "overview")
    overview: re.Pattern[str] | None = None
    # a binary relation with two arguments ("between A and B")
    relation: re.Pattern[str] | None = None
    # a drug name by its INN stem (-pril, -statin; Chinese 普利, 他汀)
    inn_stems: re.Pattern[str] | None = None
    # the cues match only this pack's script, so they apply to questions in every language (a Chinese
    # phrase in an English question); False: only to questions in this language (German "man" is no man)
    script_specific: bool = False
