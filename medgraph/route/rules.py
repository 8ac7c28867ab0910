"""The offline router: a transparent rule classifier over the question and its linked entities.

Input: a ``QueryAnalysis`` (question text, language, linked MeSH mentions with categories).
Output: a ``RouteDecision`` (tier, intent, E, I, and the entities, constraints and cue words that
decided it), so every routing decision can be explained.

- E counts distinct linked entities of clinical categories (drugs, diseases, symptoms,
  procedures, anatomy, genes) plus patient constraints: age, sex, renal function, hepatic
  function, pregnancy / lactation. A mention inside a constraint phrase ("renal impairment",
  "Schwangerschaft") counts once, as the constraint.
- I is the depth of the intent. Each intent has cue patterns in each language pack (its
  ``route`` section); each matching pattern is one vote. Constraints vote for CLINICAL_DECISION,
  two or more drugs for DRUG_INTERACTION. The most votes win; ties go to the deeper intent (routing up when in
  doubt costs compute, routing down costs answer quality); no votes means PATIENT_FAQ.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from medgraph import lang
from medgraph.lang import LanguagePack
from medgraph.retrieve.types import QueryAnalysis
from medgraph.route.types import CONSTRAINT_KINDS, INTENT_DEPTH, Intent, RouteDecision, entity_score, tier_for

COUNTED_CATEGORIES = frozenset({"Disease", "Symptom", "Drug", "Gene", "Procedure", "Anatomy", "Physiology", ""})
# question-framing descriptors that say what is asked, not what it is about
FRAMING_IDS = frozenset({
    "D064420",  # Drug-Related Side Effects and Adverse Reactions ("side effects", "副作用")
    "D012307",  # Risk Factors
    "D013812",  # Therapeutics
    "D003933",  # Diagnosis
    "D006801",  # Humans
})


# The cue patterns are each language pack's ``route`` section (medgraph.lang.sections.dialogue.RouteCues):
# the patterns of the question's language apply (German "man" is not a man), and those of every
# script-specific pack (Chinese, matched as substrings) apply to questions in any language.


@dataclass(frozen=True)
class Cues:
    """The route cues that apply to questions in one language: its pack's, then the script-specific ones."""

    constraints: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]  # per kind of CONSTRAINT_KINDS
    intents: tuple[tuple[Intent, tuple[re.Pattern[str], ...]], ...]  # per intent, in Intent's order
    overview: tuple[re.Pattern[str], ...]
    relation: tuple[re.Pattern[str], ...]
    inn_stems: tuple[re.Pattern[str], ...]

    def intent(self, intent: Intent) -> tuple[re.Pattern[str], ...]:
        return next((patterns for i, patterns in self.intents if i == intent), ())


def _present(patterns: Iterable[re.Pattern[str] | None]) -> tuple[re.Pattern[str], ...]:
    return tuple(p for p in patterns if p is not None)


@lru_cache(maxsize=64)
def _gather(own: LanguagePack, registered: tuple[LanguagePack, ...]) -> Cues:
    cues = [own.route, *(p.route for p in registered if p.route.script_specific and p is not own)]
    return Cues(
        constraints=tuple((kind, _present(c.constraints.get(kind) for c in cues)) for kind in CONSTRAINT_KINDS),
        intents=tuple((intent, _present(c.intents.get(intent.value) for c in cues)) for intent in Intent),
        overview=_present(c.overview for c in cues),
        relation=_present(c.relation for c in cues),
        inn_stems=_present(c.inn_stems for c in cues),
    )


def cues_for(language: str | None) -> Cues:
    """The route cues that apply to a question in ``language`` (the pivot's for an unknown one)."""
    return _gather(lang.get_or_pivot(language), lang.packs())


def find_constraints(text: str, language: str = lang.PIVOT) -> dict[str, list[tuple[int, int]]]:
    """Constraint kind → the character spans that matched it."""
    found: dict[str, list[tuple[int, int]]] = {}
    for kind, patterns in cues_for(language).constraints:
        spans = [m.span() for p in patterns for m in p.finditer(text)]
        if spans:
            found[kind] = spans
    return found


def _overlaps(start: int, end: int, spans: Iterable[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in spans)


def counted_entities(analysis: QueryAnalysis, constraint_spans: list[tuple[int, int]]) -> dict[str, str]:
    """Entity key → category of the entities counted in E (see the module docstring).

    Keys are MeSH IDs, and ``inn:<name>`` for drug names found by their INN stem only.
    """
    out: dict[str, str] = {}
    linked: list[tuple[int, int]] = []
    for m in analysis.mentions:
        if not m.mesh_id or m.category not in COUNTED_CATEGORIES:
            continue  # unlinked, or "Other" (no tree number): the INN stems below may still name a drug
        linked.append((m.start, m.end))
        if m.mesh_id not in FRAMING_IDS and not _overlaps(m.start, m.end, constraint_spans):
            out.setdefault(m.mesh_id, m.category)
    for pattern in cues_for(analysis.language).inn_stems:
        for hit in pattern.finditer(analysis.text):
            if not _overlaps(*hit.span(), linked + constraint_spans):
                out.setdefault(f"inn:{hit.group(0).lower()}", "Drug")
    return out


def intent_votes(text: str, n_drugs: int, n_constraints: int, language: str = lang.PIVOT) -> dict[Intent, list[str]]:
    """Intent → the cue words (and structural cues) that voted for it."""
    votes: dict[Intent, list[str]] = {}
    for intent, patterns in cues_for(language).intents:
        hits = [m.group(0).lower() for p in patterns for m in p.finditer(text)]
        if hits:
            votes[intent] = hits
    if n_constraints:
        votes.setdefault(Intent.CLINICAL_DECISION, []).append(f"<{n_constraints} constraint(s)>")
    if n_drugs >= 2:
        votes.setdefault(Intent.DRUG_INTERACTION, []).append(f"<{n_drugs} drugs>")
    return votes


def choose_intent(votes: dict[Intent, list[str]]) -> Intent:
    if not votes:
        return Intent.PATIENT_FAQ
    return max(votes, key=lambda i: (len(votes[i]), INTENT_DEPTH[i]))


def wants_overview(analysis: QueryAnalysis) -> bool:
    """True for overview and cross-corpus questions: those the community summaries serve."""
    cues = cues_for(analysis.language)
    return any(p.search(analysis.text) for p in (*cues.overview, *cues.intent(Intent.CROSS_CORPUS)))


class RuleRouter:
    """Transparent complexity router (the offline tier). Thread-safe and stateless."""

    name = "rules"

    def __init__(self, small_max: int = 3, medium_max: int = 4) -> None:
        self.small_max, self.medium_max = small_max, medium_max

    def route(self, analysis: QueryAnalysis) -> RouteDecision:
        text = analysis.text
        constraints = find_constraints(text, analysis.language)
        spans = [s for v in constraints.values() for s in v]
        entities = counted_entities(analysis, spans)
        n_drugs = sum(1 for c in entities.values() if c == "Drug")
        votes = intent_votes(text, n_drugs, len(constraints), analysis.language)
        intent = choose_intent(votes)
        notes: tuple[str, ...] = ()
        n_entities = len(entities)
        if n_entities < 2 and any(p.search(text) for p in cues_for(analysis.language).relation):
            n_entities, notes = 2, ("binary relation: at least two entities",)
        e, i = entity_score(n_entities, len(constraints)), INTENT_DEPTH[intent]
        return RouteDecision(
            tier=tier_for(e + i, self.small_max, self.medium_max), intent=intent, entity_score=e,
            intent_score=i, entities=tuple(entities), constraints=tuple(constraints),
            cues=tuple(votes.get(intent, ())), method=self.name, notes=notes,
        )
