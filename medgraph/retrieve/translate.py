"""Query translation by ontology term substitution and dictionary glosses (offline tier of
cross-lingual retrieval).

Input: a ``QueryAnalysis`` (question text, language, linked mentions with character offsets) and
a target language. Output: a ``Translation``: the question word by word in the target language as
gloss groups (one group per linked entity or source word, each holding its alternatives with their
weights; ``medgraph.embed.base.GlossGroups``) and a readable text (each group's first alternative),
or ``None`` when nothing was translated.

    "Verschlechtert eine Strahlentherapie die Prognose?" --en--> impaired radiation treatment prognosis
    "心肌梗死后如何治疗"                                --en--> Myocardial Infarction treat

Every linked mention becomes the names of its MeSH entity in the target language (up to
``names_per_entity``: the preferred name first, then synonyms, inverted forms such as "Infarction,
Myocardial" skipped), sharing one unit of weight like a word's glosses. The words around the
entities (the residue) depend on the two languages:

- German / Chinese → English: each word gets the English glosses of the vocabulary's glossary
  (``medgraph.ontology.glossary``: the Ding and CC-CEDICT dictionaries; German lemmas and compounds,
  Chinese segmentation), at most ``glosses_per_word``, sharing one unit of weight (a word with four
  glosses gives each a quarter, so no gloss of one word outweighs a whole entity name). A German word
  the glossary lacks keeps its English loan-word spellings (``respell``: ``Fasziitis`` → fasciitis,
  ``nekrotisierende`` → necrotizing) at full weight; they match nothing when they are not English.
  Chinese function words and question particles have no gloss; Latin-script words and numbers
  (acronyms, drug names, doses) stay as written.
- English → German / Chinese, German ↔ Chinese: through English: an English question's words and
  phrases (up to three words), or a German or Chinese word's English glosses, are read backwards in
  the glossary (``Glossary.from_english``: prognosis → Prognose, 预后); a word with no target word stays
  as written where it can match the target's text (Latin letters and digits: drug names and
  acronyms appear so in Chinese text too). Without a glossary the residue stays as written, each
  word at weight 1 (Chinese words dropped from a German target).

The lexical paths search the groups with their weights (``Embedder.embed_query_glossed``); the
multilingual dense path carries the question's meaning by itself.

A model tier (an LLM translator behind the same ``translate`` signature) can replace this class.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from medgraph.embed.base import GlossGroups
from medgraph.lang.de.morphology import DE_FUNCTION_WORDS, loan_spellings
from medgraph.ontology.glossary import PIVOT, Glossary
from medgraph.retrieve.types import QueryAnalysis
from medgraph.schemas import Entity, Mention
from medgraph.text.keys import fold

_CJK_RUN = re.compile("[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")
_IDEOGRAPHS = re.compile("([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)")
_WORD = re.compile(r"[^\W_]+")  # letters and digits
_CJK_OR_WORD = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[^\\W_]+")  # in text order
_LATIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+-]*")
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
GLOSSES_PER_WORD = 4  # glosses of one source word (best first)
# English words that only carry the question's form (no German or Chinese word stands for them)
EN_QUESTION_WORDS = frozenset(
    "a an the of in on at to for with by from and or is are was were be been do does did can could will would "
    "should shall may might must has have had what which who whom whose when where why how it its this that "
    "these those there any some not no".split()
)
# German words that only carry the question's form: no gloss
DE_QUESTION_WORDS = frozenset(
    "ist sind war waren wird werden wurde wurden hat haben hatte hatten kann können konnte könnte "
    "könnten muss müssen soll sollte sollten darf dürfen gibt gab es sich man welche welcher welches "
    "welchen welchem was wer wie wann wo warum wieso weshalb ob dass als auch noch nur schon etwa bzw "
    "nicht kein keine keinen keiner eigentlich tatsächlich überhaupt wirklich denn doch sowie beziehungsweise".split()
)
@dataclass(frozen=True)
class Translation:
    """A question in another language: its gloss groups (searched) and a readable text."""

    text: str
    groups: GlossGroups


class OntologyTranslator:
    name = "ontology"

    def __init__(
        self, entity_lookup: Callable[[str], Entity | None], names_per_entity: int = 2, respell: bool = True,
        glossary: Glossary | None = None, glosses_per_word: int = GLOSSES_PER_WORD,
    ) -> None:
        self.entity_lookup = entity_lookup
        self.names_per_entity = names_per_entity
        self.respell = respell
        self.glossary = glossary or Glossary()
        self.glosses_per_word = glosses_per_word

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

    def translate(self, analysis: QueryAnalysis, target: str) -> Translation | None:
        if target == analysis.language:
            return None
        text, groups, last, changed = analysis.text, [], 0, False
        for m in _non_overlapping(analysis.mentions):
            names = self.names(m.mesh_id, target) if m.mesh_id else []
            if not names:
                continue
            residue, glossed = self.residue(text[last : m.start], analysis.language, target)
            groups += residue
            groups.append(tuple((name, 1.0 / len(names)) for name in names))
            last, changed = m.end, True
        residue, glossed = self.residue(text[last:], analysis.language, target)
        groups += residue
        if not groups or not (changed or glossed):
            return None  # nothing linked, glossed or respelled
        readable = " ".join(dict.fromkeys(group[0][0] for group in groups))
        return Translation(readable, tuple(groups))

    def respells(self, source: str, target: str) -> bool:
        """Whether residue words get their English loan-word spellings (German → English)."""
        return self.respell and source == "de" and target == "en"

    def residue(self, text: str, source: str, target: str) -> tuple[list[tuple[tuple[str, float], ...]], bool]:
        """The words between linked mentions as gloss groups in ``target`` (see the module
        docstring), and whether any of them was translated (glossed or respelled)."""
        if target == PIVOT and source == "zh":
            return self._chinese_residue(text)
        if target == PIVOT and source == "de":
            return self._german_residue(text)
        if target in self.glossary.languages() and (source == PIVOT or source in self.glossary.languages()):
            return self._through_english(text, source, target)
        words = _CJK_OR_WORD.findall(text) if target == "zh" else _WORD.findall(_CJK_RUN.sub(" ", text))
        return [((w, 1.0),) for w in words], False

    def _through_english(self, text: str, source: str, target: str) -> tuple[list[tuple[tuple[str, float], ...]], bool]:
        """Residue into German or Chinese through English: an English question's words and phrases
        (up to three words, the longest first), or a German or Chinese word's English glosses, read
        backwards in the glossary (``Glossary.from_english``: prognosis → 预后, Prognose). A word with
        no target word stays as written when it can match the target's text (Latin letters, digits)."""
        if source == PIVOT:
            english = self._english_phrases(text)
        else:
            english, _ = self._chinese_residue(text) if source == "zh" else self._german_residue(text)
        groups: list[tuple[tuple[str, float], ...]] = []
        glossed = False
        for group in english:
            words = list(dict.fromkeys(w for alt, _ in group[:2] for w in self.glossary.from_english(alt, target)))
            words = words[: self.glosses_per_word]
            if words:
                groups.append(tuple((w, 1.0 / len(words)) for w in words))
                glossed = True
            elif source != "zh" or _LATIN.fullmatch(group[0][0]):
                kept = group[0][0]
                if target != "zh" or _LATIN.fullmatch(kept):
                    groups.append(((kept, 1.0),))
        return groups, glossed

    def _english_phrases(self, text: str) -> list[tuple[tuple[str, float], ...]]:
        """An English residue's words, the longest glossary phrases (up to three words) joined."""
        words = [w for w in _WORD.findall(_CJK_RUN.sub(" ", text)) if w.lower() not in EN_QUESTION_WORDS]
        out: list[tuple[tuple[str, float], ...]] = []
        i = 0
        while i < len(words):
            for n in (3, 2):
                phrase = " ".join(words[i : i + n])
                if i + n <= len(words) and any(self.glossary.from_english(phrase, t) for t in ("de", "zh")):
                    out.append(((phrase, 1.0),))
                    i += n
                    break
            else:
                out.append(((words[i], 1.0),))
                i += 1
        return out

    def _share(self, glosses: tuple[str, ...]) -> tuple[tuple[str, float], ...]:
        kept = glosses[: self.glosses_per_word]
        return tuple((g, 1.0 / len(kept)) for g in kept)

    def _chinese_residue(self, text: str) -> tuple[list[tuple[tuple[str, float], ...]], bool]:
        groups: list[tuple[tuple[str, float], ...]] = []
        glossed = False
        for piece in _IDEOGRAPHS.split(text):
            if not piece:
                continue
            if _IDEOGRAPHS.fullmatch(piece):
                for _segment, glosses in self.glossary.chinese(piece):
                    if glosses:
                        groups.append(self._share(glosses))
                        glossed = True
            else:
                groups += [((w, 1.0),) for w in _LATIN.findall(piece)]
        return groups, glossed

    def _german_residue(self, text: str) -> tuple[list[tuple[tuple[str, float], ...]], bool]:
        groups: list[tuple[tuple[str, float], ...]] = []
        glossed = False
        for word in _WORD.findall(_CJK_RUN.sub(" ", text)):
            lower = word.lower()
            if fold(lower) in DE_FUNCTION_WORDS or lower in DE_QUESTION_WORDS:
                continue
            found = self.glossary.german(word) if word.isalpha() and len(word) > 2 else []
            if found:
                groups += [self._share(g) for g in found]
                glossed = True
                continue
            spellings = english_spellings(word) if self.respell else []
            groups.append(tuple((w, 1.0) for w in [word, *spellings]))
            glossed = glossed or bool(spellings)
        return groups, glossed


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
