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
Myocardial" skipped), sharing one unit of weight like a word's glosses; into English, a mention
that is one dictionary word also keeps its glosses in that group ("Fett" links to Fat Body, and
"fat" stays beside it), so a narrow or wrong link does not take the word's meaning away. The words around the
entities (the residue) depend on the two languages and on their packs' glossary rules
(``lang.get(code).glossary``: how words are found, which are function words, lemmas, compounds):

- German / Chinese → English (any registered language → the pivot): each word gets the English
  glosses of the vocabulary's glossary (``medgraph.ontology.glossary``: the Ding and CC-CEDICT
  dictionaries; German lemmas and compounds, Chinese segmentation), at most ``glosses_per_word``,
  sharing one unit of weight (a word with four glosses gives each a quarter, so no gloss of one word
  outweighs a whole entity name). A word the glossary lacks keeps its English loan-word spellings
  where its pack has a ``respell`` rule (German: ``Fasziitis`` → fasciitis, ``nekrotisierende`` →
  necrotizing) at full weight; they match nothing when they are not English. Function words and
  question particles have no gloss; in a segmented language (Chinese) Latin-script words and numbers
  (acronyms, drug names, doses) stay as written. A language without a dictionary keeps its words as
  written: only its entity names are translated.
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

from medgraph import lang
from medgraph.embed.base import GlossGroups
from medgraph.lang.sections.glossary import GlossaryRules
from medgraph.ontology.glossary import Glossary
from medgraph.retrieve.types import QueryAnalysis
from medgraph.schemas import Entity, Mention
from medgraph.text.keys import fold

_LATIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+-]*")
MIN_GLOSSED = 3  # shorter words of a spaced language are not looked up
# a hyphenated compound of a spaced language ("Mund-Nasen-Schutz"): glossed whole where the glossary
# knows it (surgical mask), before its parts (mouth, nose, protection) are
HYPHENATED = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)+")
GLOSSES_PER_WORD = 4  # glosses of one source word (best first)
Groups = list[tuple[tuple[str, float], ...]]


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
        """The entity's names in ``language`` (the pivot: the preferred name first), inverted forms skipped."""
        entity = self.entity_lookup(mesh_id)
        if entity is None:
            return []
        names = list(entity.names.get(language, []))
        if language == lang.PIVOT and entity.name:
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
        whole = self._known_compounds(text, analysis.language, target)
        for m in _non_overlapping(analysis.mentions):
            if any(start <= m.start and m.end <= end for start, end in whole):
                continue  # a part of a compound the glossary knows whole: glossed with it (residue)
            names = self.names(m.mesh_id, target) if m.mesh_id else []
            if not names:
                continue
            residue, glossed = self.residue(text[last : m.start], analysis.language, target)
            groups += residue
            alternatives = [*names, *self._word_glosses(text[m.start : m.end], analysis.language, target, names)]
            groups.append(tuple((alt, 1.0 / len(alternatives)) for alt in alternatives))
            last, changed = m.end, True
        residue, glossed = self.residue(text[last:], analysis.language, target)
        groups += residue
        if not groups or not (changed or glossed):
            return None  # nothing linked, glossed or respelled
        readable = " ".join(dict.fromkeys(group[0][0] for group in groups))
        return Translation(readable, tuple(groups))

    def _word_glosses(self, surface: str, source: str, target: str, names: list[str]) -> list[str]:
        """The dictionary glosses of a linked mention that is one word of ``source`` (into the pivot
        only), those not already among the entity's ``names``: the link may be to a narrower or
        wrong sense ("Fett" → Fat Body, "Gewicht" → Body Weight, where the text says "fat",
        "weight"), and the word's everyday glosses keep the question's meaning beside it."""
        if target != lang.PIVOT or source == lang.PIVOT or not lang.is_known(source):
            return []
        rules = lang.get(source).glossary
        if rules.segment is not None:
            glosses = self.glossary.lookup(surface, source) if rules.segment.fullmatch(surface) else ()
        else:
            glosses = self.glossary.word_glosses(surface, source) if surface.isalpha() else ()
        have = {fold(n.lower()) for n in names}
        return [g for g in dict.fromkeys(glosses[: self.glosses_per_word]) if fold(g.lower()) not in have]

    def _known_compounds(self, text: str, source: str, target: str) -> list[tuple[int, int]]:
        """Spans of the hyphenated compounds of a spaced ``source`` that the glossary glosses whole
        (into the pivot only)."""
        if target != lang.PIVOT or source == lang.PIVOT or not lang.is_known(source):
            return []
        if lang.get(source).glossary.segment is not None:
            return []
        return [m.span() for m in HYPHENATED.finditer(text) if self.glossary.word_glosses(m.group(), source)]

    def respells(self, source: str, target: str) -> bool:
        """Whether residue words get their English loan-word spellings (into the pivot, from a
        language whose pack has a ``respell`` rule: German)."""
        return (self.respell and target == lang.PIVOT and lang.is_known(source)
                and lang.get(source).glossary.respell is not None)

    def residue(self, text: str, source: str, target: str) -> tuple[Groups, bool]:
        """The words between linked mentions as gloss groups in ``target`` (see the module
        docstring), and whether any of them was translated (glossed or respelled)."""
        if target == lang.PIVOT and source != lang.PIVOT and lang.is_known(source):
            return self._to_pivot(text, source)
        languages = self.glossary.languages()
        if target in languages and (source == lang.PIVOT or source in languages):
            return self._through_pivot(text, source, target)
        return [((w, 1.0),) for w in lang.get_or_pivot(target).glossary.words.findall(text)], False

    def _to_pivot(self, text: str, source: str) -> tuple[Groups, bool]:
        """Residue of a ``source`` question into the pivot: segmented or spaced words glossed."""
        rules = lang.get_or_pivot(source).glossary
        if rules.segment is not None:
            return self._segmented_residue(text, source, rules.segment)
        return self._spaced_residue(text, source, rules)

    def _through_pivot(self, text: str, source: str, target: str) -> tuple[Groups, bool]:
        """Residue into German or Chinese through English: an English question's words and phrases
        (up to three words, the longest first), or a German or Chinese word's English glosses, read
        backwards in the glossary (``Glossary.from_english``: prognosis → 预后, Prognose). A word with
        no target word stays as written when it can match the target's text (Latin letters, digits;
        in a spaced target, any word of a spaced source)."""
        source_segmented = lang.get_or_pivot(source).glossary.segment is not None
        target_segmented = lang.get_or_pivot(target).glossary.segment is not None
        if source == lang.PIVOT:
            english = self._english_phrases(text)
        else:
            english, _ = self._to_pivot(text, source)
        groups: Groups = []
        glossed = False
        for group in english:
            words = list(dict.fromkeys(w for alt, _ in group[:2] for w in self.glossary.from_english(alt, target)))
            words = words[: self.glosses_per_word]
            if words:
                groups.append(tuple((w, 1.0 / len(words)) for w in words))
                glossed = True
            elif not source_segmented or _LATIN.fullmatch(group[0][0]):
                kept = group[0][0]
                if not target_segmented or _LATIN.fullmatch(kept):
                    groups.append(((kept, 1.0),))
        return groups, glossed

    def _english_phrases(self, text: str) -> Groups:
        """An English residue's words, the longest glossary phrases (up to three words) joined."""
        rules = lang.pivot().glossary
        words = [w for w in rules.words.findall(text) if not _dropped(w, rules)]
        targets = [pack.code for pack in lang.packs() if pack.code != lang.PIVOT]
        out: Groups = []
        i = 0
        while i < len(words):
            for n in (3, 2):
                phrase = " ".join(words[i : i + n])
                if i + n <= len(words) and any(self.glossary.from_english(phrase, t) for t in targets):
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

    def _segmented_residue(self, text: str, source: str, runs: re.Pattern[str]) -> tuple[Groups, bool]:
        """Runs of the segmented script cut into glossed dictionary words (function words and
        unknown words dropped); Latin-script words and numbers between them kept as written."""
        groups: Groups = []
        glossed = False
        last = 0
        for run in runs.finditer(text):
            groups += [((w, 1.0),) for w in _LATIN.findall(text, last, run.start())]
            for _segment, glosses in self.glossary.segments(run.group(), source):
                if glosses:
                    groups.append(self._share(glosses))
                    glossed = True
            last = run.end()
        groups += [((w, 1.0),) for w in _LATIN.findall(text, last)]
        return groups, glossed

    def _spaced_residue(self, text: str, source: str, rules: GlossaryRules) -> tuple[Groups, bool]:
        """Words glossed (a hyphenated compound the glossary knows whole as one word; lemmas,
        compounds), function and question words dropped; a word the glossary lacks kept as written
        with its pivot respellings (``rules.respell``)."""
        groups: Groups = []
        glossed, last = False, 0
        for m in HYPHENATED.finditer(text):
            found = self.glossary.word_glosses(m.group(), source)
            if found:
                before, was_glossed = self._spaced_words(text[last : m.start()], source, rules)
                groups += [*before, self._share(found)]
                glossed, last = True, m.end()
        rest, was_glossed = self._spaced_words(text[last:], source, rules)
        return groups + rest, glossed or was_glossed

    def _spaced_words(self, text: str, source: str, rules: GlossaryRules) -> tuple[Groups, bool]:
        """``_spaced_residue`` of text without a hyphenated compound the glossary knows whole."""
        groups: Groups = []
        glossed = False
        for word in rules.words.findall(text):
            if _dropped(word, rules):
                continue
            found = self.glossary.glosses(word, source) if word.isalpha() and len(word) >= MIN_GLOSSED else []
            if found:
                groups += [self._share(g) for g in found]
                glossed = True
                continue
            spellings = rules.respell(word) if self.respell and rules.respell is not None else []
            groups.append(tuple((w, 1.0) for w in [word, *spellings]))
            glossed = glossed or bool(spellings)
        return groups, glossed


def _dropped(word: str, rules: GlossaryRules) -> bool:
    """Whether ``word`` only carries grammar or the question's form (the pack's function words,
    folded, and question words, in lower case)."""
    lower = word.lower()
    return fold(lower) in rules.function_words or lower in rules.question_words


def _non_overlapping(mentions: tuple[Mention, ...]) -> list[Mention]:
    """Linked mentions by start offset; of two overlapping ones the longer wins."""
    chosen: list[Mention] = []
    for m in sorted(mentions, key=lambda m: (m.start, -(m.end - m.start))):
        if m.mesh_id and (not chosen or m.start >= chosen[-1].end):
            chosen.append(m)
    return chosen
