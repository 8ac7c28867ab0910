"""Query translation by ontology term substitution (offline tier of cross-lingual retrieval).

Input: a ``QueryAnalysis`` (question text, language, linked mentions with character offsets) and
a target language. Output: the question with every linked mention replaced by the names of its
MeSH entity in the target language (up to ``names_per_entity``: the preferred name first, then
synonyms, inverted forms such as "Infarction, Myocardial" skipped), or ``None`` when nothing was
translated.

    "Welche Behandlung nach Herzinfarkt?" --en--> "Welche Behandlung nach Myocardial Infarction?"
    "心肌梗死后如何治疗"                  --en--> "Myocardial Infarction"

The words around the entities (the residue) are not translated word by word: the target-language
search matches on the entity names, and the multilingual dense path carries the rest of the
meaning. What happens to the residue depends on the two languages:

- Chinese → English / German: Chinese words are dropped (they cannot match Latin-script text and
  would only dilute term-overlap scores); Latin-script words and numbers (acronyms, drug names)
  stay.
- German → English (``respell``): each German word is followed by its English spellings as a
  Latin/Greek loan word (``Fasziitis`` → fasciitis, ``nekrotisierende`` → necrotizing,
  ``hepatozellulären`` → hepatocellular, ``Patienten`` → patient).
  Medical German is full of such words the linker does not link; a spelling that is not an
  English word matches no English chunk and costs nothing. A German question gets an English
  translation when a word has such a spelling, even when nothing in it was linked.
- anything → Chinese, English → German: the residue stays as written (drug names are often
  written in Latin letters in Chinese text).

A model tier (an LLM translator behind the same ``translate`` signature) can replace this class.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from medgraph.retrieve.types import QueryAnalysis
from medgraph.schemas import Entity, Mention
from medgraph.text.keys import fold
from medgraph.text.variants import DE_FUNCTION_WORDS, loan_spellings

_CJK_RUN = re.compile("[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")
_LETTERS = re.compile(r"[^\W\d_]+")  # a word's letter runs (hyphenated parts and digits split off)
MIN_RESPELLED = 4  # shorter German words are left as they are
# German derivational endings → English ones (first match wins), applied before the loan-word rules
_DE_SUFFIXES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), english)
    for pattern, english in (
        (r"isierend(?:e[nmrs]?)?$", "izing"),  # nekrotisierende → necrotizing
        (r"fizierung(?:en)?$", "fication"),  # Identifizierung → identification
        (r"isierung(?:en)?$", "ization"),  # Somatisierung → somatization
        (r"ierung(?:en)?$", "ation"),  # Implantierung → implantation
        (r"iert(?:e[nmrs]?)?$", "ated"),  # aktiviert → activated
        (r"ität(?:en)?$", "ity"),  # Kapazität → capacity
        (r"är(?:e[nmrs]?)?$", "ar"),  # hepatozellulären → hepatocellular
        (r"iv(?:e[nmrs]?)?$", "ive"),  # invasiven → invasive
        (r"ik(?:en)?$", "ics"),  # Diagnostik → diagnostics
    )
)


class OntologyTranslator:
    name = "ontology"

    def __init__(
        self, entity_lookup: Callable[[str], Entity | None], names_per_entity: int = 2, respell: bool = True
    ) -> None:
        self.entity_lookup = entity_lookup
        self.names_per_entity = names_per_entity
        self.respell = respell

    def names(self, mesh_id: str, language: str) -> list[str]:
        """The entity's names in ``language`` (English: the preferred name first), inverted forms skipped."""
        entity = self.entity_lookup(mesh_id)
        if entity is None:
            return []
        names = list(entity.names.get(language, []))
        if language == "en" and entity.name:
            names = [entity.name, *names]
        out: list[str] = []
        for name in names:
            if "," not in name and name not in out:
                out.append(name)
        return out[: self.names_per_entity]

    def translate(self, analysis: QueryAnalysis, target: str) -> str | None:
        if target == analysis.language:
            return None
        text, pieces, last, changed = analysis.text, [], 0, False
        for m in _non_overlapping(analysis.mentions):
            names = self.names(m.mesh_id, target) if m.mesh_id else []
            if not names:
                continue
            pieces.append(self.residue(text[last : m.start], analysis.language, target))
            pieces.append(" " + " ".join(names) + " ")
            last, changed = m.end, True
        pieces.append(self.residue(text[last:], analysis.language, target))
        out = " ".join("".join(pieces).split())
        if not changed and not (self.respells(analysis.language, target) and out != " ".join(text.split())):
            return None  # nothing linked and no word respelled
        return out

    def respells(self, source: str, target: str) -> bool:
        """Whether residue words get their English loan-word spellings (German → English)."""
        return self.respell and source == "de" and target == "en"

    def residue(self, text: str, source: str, target: str) -> str:
        """The words between linked mentions, as searched in ``target`` (see the module docstring)."""
        if target == "zh":
            return text
        text = _CJK_RUN.sub(" ", text)
        if self.respells(source, target):
            return _LETTERS.sub(lambda m: " ".join([m.group(), *english_spellings(m.group())]), text)
        return text


def english_spellings(word: str) -> list[str]:
    """English spellings of a German word read as a Latin/Greek loan word (the linker's loan-word
    rules, after the word's derivational ending is put into English).

    ``Fasziitis`` → [fasciitis, ...]; ``nekrotisierende`` → [..., necrotizing]. Function words and
    short words give none; the word's own folded form is not repeated. Most spellings are not
    English words; they match nothing.
    """
    lower = word.lower()
    own = fold(lower)
    if len(lower) < MIN_RESPELLED or own in DE_FUNCTION_WORDS:
        return []
    # the ending rules run before the loan-word rules (``-ären`` is gone once ``ä`` is folded) and
    # after them (``-isierend`` becomes ``-izing`` only after ``z`` → ``c`` ran on the stem)
    spellings = [s for form in (lower, *_derived(lower)) for s in loan_spellings(form)]
    spellings += [d for s in spellings for d in _derived(s)]
    return list(dict.fromkeys(s for s in spellings if s != own and len(s) >= MIN_RESPELLED))


def _derived(word: str) -> list[str]:
    """``word`` with its German derivational ending in English (the first rule that fits), or []."""
    for pattern, english in _DE_SUFFIXES:
        if pattern.search(word):
            return [pattern.sub(english, word)]
    return []


def _non_overlapping(mentions: tuple[Mention, ...]) -> list[Mention]:
    """Linked mentions by start offset; of two overlapping ones the longer wins."""
    chosen: list[Mention] = []
    for m in sorted(mentions, key=lambda m: (m.start, -(m.end - m.start))):
        if m.mesh_id and (not chosen or m.start >= chosen[-1].end):
            chosen.append(m)
    return chosen
