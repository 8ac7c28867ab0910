"""A bilingual glossary for query translation: words of every other language → pivot (English) glosses.

The vocabulary's names translate a question's *entities* (``medgraph.retrieve.translate``); the words
around them ("verschlechtert", "Prognose", "会不会", "复发", "盆腔") carry the rest of what is asked
and have no MeSH descriptor. The glossary gives every word of two general dictionaries its English
glosses, main sense first, so the lexical paths can search English passages with a German or
Chinese question:

- the vocabulary's own German and Chinese names, each glossed by its descriptor's English name;
- the medical term pairs of the vocabulary sources, joined to MeSH or not (CMeKG's Chinese–English
  pairs, the HPO translation tables);
- German: every one-word alternative of every entry of the Ding German–English dictionary, all parts
  of speech (``medgraph.ontology.ding.read_ding_glosses``; Debian's ``trans-de-en``, GPL-2+, the
  ``ding`` vocabulary source);
- Chinese: every entry of CC-CEDICT (``medgraph.ontology.cedict.read_cedict_glosses``; CC BY-SA 4.0,
  the ``cedict`` vocabulary source).

It is built with the vocabulary from the same configured files (``build_glossary``) and saved beside
it (``glossary.pkl``, with the tables ``from_english`` reads it backwards with); the vocabulary loads it on first use (``Vocabulary.glossary``), so only the
processes that translate questions (query analysis) hold it. Without either file it is empty and
translation falls back to the entity names.

Which dictionary glosses a language, and how its words are looked up, is the language pack's
(``lang.get(code).glossary``, ``medgraph.lang.sections.glossary.GlossaryRules``); the readers of
the dictionaries are registered here by vocabulary source kind (``dictionary_readers``).

Lookups:
- ``glosses(word, language)``: the word as written, then in lower case and capitalised, then its
  lemma candidates (``lemmas``: the pack's case and plural endings, verb endings and participle:
  German ``primären`` → primär, ``gestörte`` → stören), then, for a compound the dictionary lacks
  in a language whose pack splits compounds, a split into known parts with the linking letters
  (German ``Fugen``) dropped, modifiers before the head (``compound_parts``: ``Lebermetastasen`` →
  liver · metastases). ``german(word)``: the same for the language of the Ding dictionary.
- ``segments(text, language)``: for a language whose pack segments text (Chinese), each run of its
  characters cut into dictionary words (``segment``: bidirectional maximum matching over the
  glossary), each with its glosses; the pack's function words and question particles are kept as
  segments without glosses. ``chinese(text)``: the same for the language of CC-CEDICT.
"""

from __future__ import annotations

import gzip
import logging
import os
import pickle
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from medgraph import lang
from medgraph.lang.sections.glossary import GlossaryRules
from medgraph.schemas import Entity
from medgraph.text.keys import norm_key

log = logging.getLogger(__name__)

FORMAT_VERSION = 4  # 2: medical senses read off the vocabulary's names (terminology_senses); 3: Ding alternatives split outside brackets and abbreviation slashes; 4: a German word's Ding glosses ranked by how many of its senses give them
FILE_NAME = "glossary.pkl"
SOURCES = frozenset({"translation_pairs", "babelon", "ding", "cedict"})  # vocabulary source kinds it reads
REVERSE_GLOSSES = 2  # glosses of a word read backwards (English → German / Chinese)
REVERSE_WORDS = 3  # target-language words kept per English phrase
# the vocabulary source kinds of the two general dictionaries the German and Chinese entry points
# (``german``, ``chinese``, ...) name their language by: the pack whose ``glossary.dictionary`` it is
DING, CEDICT = "ding", "cedict"

DictionaryReader = Callable[[IO[str]], Iterable[tuple[str, tuple[str, ...]]]]


def dictionary_readers() -> dict[str, DictionaryReader]:
    """The general dictionaries' readers by vocabulary source kind: each yields ``(word, glosses)``
    of the language whose pack names that kind (``GlossaryRules.dictionary``)."""
    from medgraph.ontology.cedict import read_cedict_glosses
    from medgraph.ontology.ding import read_ding_glosses

    return {DING: read_ding_glosses, CEDICT: read_cedict_glosses}


def dictionary_language(kind: str) -> str:
    """The code of the language whose glosses come from the dictionary ``kind`` ("" when none)."""
    return next((pack.code for pack in lang.packs() if pack.glossary.dictionary == kind), "")


def glossed_languages() -> list[str]:
    """The languages glossed in the pivot: every registered one but the pivot, in registry order."""
    return [pack.code for pack in lang.packs() if pack.code != lang.PIVOT]


def _rules(language: str) -> GlossaryRules:
    return lang.get_or_pivot(language).glossary


@dataclass
class Glossary:
    """``words[language][word]`` → English glosses, main sense first."""

    words: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return sum(len(w) for w in self.words.values())

    def languages(self) -> list[str]:
        return [language for language, words in self.words.items() if words]

    def lookup(self, word: str, language: str) -> tuple[str, ...]:
        """The word's glosses as listed (no lemma rules), or ()."""
        return self.words.get(language, {}).get(word, ())

    # --- words of a spaced language ------------------------------------------------------------

    def word_glosses(self, word: str, language: str) -> tuple[str, ...]:
        """The glosses of one word as written or through a lemma, never split; () when unknown."""
        table = self.words.get(language, {})
        return _lookup(word, table, _rules(language)) if table else ()

    def glosses(self, word: str, language: str) -> list[tuple[str, ...]]:
        """Gloss groups of one word: one group for a word the dictionary knows (as written or
        through a lemma), one per part for a compound of known parts, [] when it knows neither."""
        found = self.word_glosses(word, language)
        if found:
            return [found]

        def known(part: str) -> tuple[str, ...]:
            return self.word_glosses(part, language)

        return [known(part) for part in compound_parts(word, known, _rules(language))]

    # --- text of a segmented language ---------------------------------------------------------

    def segments(self, text: str, language: str) -> list[tuple[str, tuple[str, ...]]]:
        """(segment, glosses) for each segment of ``text``'s runs of the characters ``language``'s
        pack segments (``GlossaryRules.segment``; none for a spaced language); function words and
        words the dictionary lacks have no glosses."""
        rules = _rules(language)
        if rules.segment is None:
            return []
        table = self.words.get(language, {})
        out: list[tuple[str, tuple[str, ...]]] = []
        for run in rules.segment.findall(text):
            for seg in segment(run, table, rules):
                out.append((seg, () if seg in rules.function_words else table.get(seg, ())))
        return out

    def boundaries(self, text: str, language: str) -> set[int]:
        """Character offsets in ``text`` where a word of the segmentation starts or ends (every
        offset outside the runs ``language``'s pack segments counts, every offset of a spaced
        language): a mention that starts or ends inside a word is a match inside another word
        (流感 "influenza" in 分流|感染)."""
        rules = _rules(language)
        out = set(range(len(text) + 1))
        if rules.segment is None:
            return out
        table = self.words.get(language, {})
        for match in rules.segment.finditer(text):
            out -= set(range(match.start() + 1, match.end()))
            pos = match.start()
            for seg in segment(match.group(), table, rules):
                pos += len(seg)
                out.add(pos)
        return out

    # --- from English -------------------------------------------------------------------------

    def from_english(self, phrase: str, language: str) -> tuple[str, ...]:
        """Words of ``language`` (German or Chinese) that the glossary glosses as the English
        ``phrase`` among their first ``REVERSE_GLOSSES`` glosses (``prognosis`` → 预后; word order,
        plurals and spellings folded): the glossary read backwards, for a question translated into
        that language. Those whose first gloss it is come first, then words with fewer glosses (a
        specific word before a word of many senses), then shorter ones; at most ``REVERSE_WORDS``.
        Words of several words and words shorter than the pack's ``min_reverse`` (a Chinese single
        character) are not read backwards."""
        table = self._reverse(language)
        return table.get(norm_key(phrase), ()) if table else ()

    def _reverse(self, language: str) -> dict[str, tuple[str, ...]]:
        cache = self.__dict__.setdefault("_reverse_tables", {})
        if language not in cache:
            min_length = _rules(language).min_reverse
            ranked: dict[str, dict[str, tuple[int, int, int]]] = {}
            for word, glosses in self.words.get(language, {}).items():
                if len(word) < min_length or " " in word:
                    continue  # one character has too many readings to stand for an English word
                for rank, gloss in enumerate(glosses[:REVERSE_GLOSSES]):
                    order = (rank, len(glosses), len(word))  # its main sense, a specific word, a short one
                    words = ranked.setdefault(norm_key(gloss), {})
                    words[word] = min(words.get(word, order), order)
            cache[language] = {key: tuple(sorted(words, key=lambda w: (words[w], w))[:REVERSE_WORDS])
                               for key, words in ranked.items() if key}
        table: dict[str, tuple[str, ...]] = cache[language]
        return table

    # --- files ---------------------------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        out = Path(directory) / FILE_NAME
        tmp = out.with_suffix(f".{os.getpid()}.tmp")  # one per process: two builds never share a file
        # the tables read backwards are saved too: built on load they cost every analyzer replica ~5-9 s
        reverse = {language: self._reverse(language) for language in self.languages()}
        with gzip.open(tmp, "wb", compresslevel=3) as fh:
            pickle.dump({"version": FORMAT_VERSION, "words": self.words, "manifest": self.manifest,
                         "reverse": reverse}, fh, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(out)
        return out

    @classmethod
    def load(cls, directory: str | Path) -> Glossary:
        """The glossary saved in ``directory``, or an empty one when there is none (or it is stale)."""
        path = Path(directory) / FILE_NAME
        if not path.is_file():
            return cls()
        t0 = time.perf_counter()
        with gzip.open(path, "rb") as fh:
            state = pickle.load(fh)  # noqa: S301 - our own file
        if state.get("version") != FORMAT_VERSION:
            log.warning("%s: glossary format %s != %s; query translation uses entity names only",
                        path, state.get("version"), FORMAT_VERSION)
            return cls()
        glossary = cls(state["words"], state.get("manifest", {}))
        if "reverse" in state:  # absent from files saved before it was: built on first use then
            glossary.__dict__["_reverse_tables"] = state["reverse"]
        log.info("loaded glossary %s: %s in %.2fs", path, {k: len(v) for k, v in glossary.words.items()},
                 time.perf_counter() - t0)
        return glossary


def build_glossary(sources: Iterable[tuple[str, Path]], entities: Iterable[Entity] = (), per_word: int = 6) -> Glossary:
    """The glossary of ``sources`` (``(kind, path)``), a word's glosses in this order:

    1. the vocabulary's names (``entities``): a German or Chinese name of a descriptor → its English
       preferred name (``Herzinfarkt`` → Myocardial Infarction, ``骨质疏松`` → Osteoporosis);
    2. term pairs, joined to MeSH or not (``translation_pairs``: CMeKG; ``babelon``: the HPO tables):
       a Chinese or German medical term → its English term (``单纯性肥胖`` → simple obesity);
    3. the general dictionaries (``ding``, ``cedict``): every word of either, in the language whose
       pack names the kind (``GlossaryRules.dictionary``).
    Other kinds are not read. Every registered language but the pivot gets a table. Terms of 1 and 2
    also make the Chinese segmenter see a medical term as one word. In a language whose pack splits
    compounds, words get the medical senses read off the vocabulary's names (``terminology_senses``)."""
    from medgraph.ontology.sources import read_babelon, read_translation_pairs

    entities = list(entities)
    readers = dictionary_readers()
    pairs = {"translation_pairs": read_translation_pairs, "babelon": read_babelon}
    tables: dict[str, dict[str, list[str]]] = {language: {} for language in glossed_languages()}
    counts: dict[str, Any] = {"names": 0, "term_pairs": 0}

    def add(language: str, word: str, glosses: Iterable[str]) -> None:
        have = tables[language].setdefault(word, [])
        for gloss in glosses:
            if gloss and gloss not in have and len(have) < per_word:
                have.append(gloss)

    for entity in entities:
        for language in tables:
            for name in entity.names.get(language, []):
                add(language, name, [entity.name])
                counts["names"] += 1
    sources = list(sources)
    for kind, path in sources:
        if kind in pairs:
            for row in pairs[kind](path):
                if row.lang in tables and row.en:
                    add(row.lang, row.value, [row.en])
                    counts["term_pairs"] += 1
    general: dict[str, dict[str, tuple[str, ...]]] = {language: {} for language in tables}  # the dictionaries' words
    for kind, path in sources:
        language = dictionary_language(kind) if kind in readers else ""
        if language in tables:
            opener = gzip.open if str(path).endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8") as fh:
                for word, glosses in readers[kind](fh):
                    add(language, word, glosses)
                    general[language].setdefault(word, tuple(glosses))
            counts[kind] = str(path)
    words = {language: {w: tuple(g) for w, g in table.items() if g} for language, table in tables.items()}
    medical = medical_terms(entities)
    n_senses = 0
    for language in tables:
        if _rules(language).compound_linking is None or not general[language]:
            continue
        senses = terminology_senses(entities, general[language], medical=medical, language=language)
        for word, found in senses.items():
            words[language][word] = _with_senses(words[language].get(word, ()), found, medical, per_word)
        n_senses += len(senses)
    counts["terminology_senses"] = n_senses
    return Glossary(words, {**counts, "words": {language: len(w) for language, w in words.items()}})


def _with_senses(glosses: tuple[str, ...], senses: list[str], medical: set[str], per_word: int) -> tuple[str, ...]:
    """A word's glosses with its terminology senses: first where none of its own glosses is a medical
    term (Versorgung: care, then supply), else after them (Syndrom: syndrome, then disorder)."""
    new = [s for s in senses if s not in glosses][:per_word]
    if any(g.lower() in medical for g in glosses):
        return (*glosses[: per_word - len(new)], *new)
    return tuple([*new, *glosses])[:per_word]


def medical_terms(entities: Iterable[Entity]) -> set[str]:
    """The vocabulary's English names and synonyms, lower-cased: what counts as a medical term."""
    return {name.lower() for e in entities for name in e.names.get(lang.PIVOT, [e.name])}


def terminology_senses(entities: Iterable[Entity], general: dict[str, tuple[str, ...]],
                       min_support: int = 2, medical: set[str] | None = None,
                       language: str | None = None) -> dict[str, list[str]]:
    """Words whose medical sense the general dictionary lists only inside compounds, read off
    pairs of phrases in ``language`` (by default the language of the Ding dictionary, German) and
    English: the vocabulary's names of one descriptor in both and the dictionary's own compounds
    glossed by a vocabulary name (a medical term). A phrase's words and compound parts (the pack's
    compound rules) line up with the English phrase's words (``Patienten·versorgung`` ↔ patient care,
    ``Gesundheits·versorgung`` ↔ health care); where every part but one has its English word among
    its dictionary glosses, the remaining part, the head, means the remaining word (Versorgung →
    care, where the dictionary's own entry has only "supply"). Kept when ``min_support`` phrases say so; the
    dictionary's entry word (``general``'s key) → its new glosses, best supported first.
    ``medical``: ``medical_terms(entities)``, when the caller has it."""
    import Stemmer

    stem = Stemmer.Stemmer("english").stemWord
    entities = list(entities)
    language = language or dictionary_language(DING)
    rules = _rules(language)

    def lookup(word: str) -> tuple[str, ...]:
        return _lookup(word, general, rules)

    def parts_of(phrase: str) -> list[str]:
        return [part for word in re.split(r"[\s-]+", phrase) if word
                for part in (compound_parts(word, lookup, rules) or [word])]

    pairs = [(name, en) for e in entities for name in e.names.get(language, [])
             for en in e.names.get(lang.PIVOT, [e.name]) if "," not in en]
    medical = medical_terms(entities) if medical is None else medical
    # the dictionary's compounds whose gloss is a vocabulary name (a medical term: patient care)
    pairs += [(word, gloss) for word, glosses in general.items() if " " not in word
              for gloss in glosses if " " in gloss and gloss.lower() in medical]
    support: dict[tuple[str, str], set[str]] = {}
    for phrase, en in pairs:
        en_words = en.lower().split()
        parts = parts_of(phrase)
        if len(parts) < 2 or len(en_words) < 2:
            continue
        glossed = [{stem(w)[:5] for g in lookup(part) for w in g.lower().split()} for part in parts]
        en_stems = {stem(w)[:5] for w in en_words[:-1]}  # a stem's first letters: primary ~ primarily
        head, word = parts[-1], en_words[-1]
        # the head means the English head noun when the dictionary explains every modifier by one of
        # the English modifiers and the head by none of the English words
        if stem(word)[:5] in glossed[-1] or glossed[-1] & en_stems or not all(g & en_stems for g in glossed[:-1]):
            continue
        key = _key(head, general, rules)
        if key and len(word) >= 3 and word.isalpha():
            support.setdefault((key, word), set()).add(phrase.lower())
    senses: dict[str, list[tuple[int, str]]] = {}
    for (key, word), phrases in support.items():
        if len(phrases) >= min_support:
            senses.setdefault(key, []).append((-len(phrases), word))
    return {key: [word for _, word in sorted(found)] for key, found in senses.items()}


# --- lookups of a word: lemmas and compounds ------------------------------------------------------


def lemmas(word: str, rules: GlossaryRules) -> list[str]:
    """Forms of a word to look up, best first: the word in lower case and capitalised, without one of
    the pack's case or plural endings (German ``primären`` → primär, ``Rektumkarzinoms`` →
    Rektumkarzinom), as an infinitive (``verschlechtert`` → verschlechtern, ``behandelt`` →
    behandeln) and a participle's infinitive (``gestörte`` → stören). In a language that
    capitalises its nouns (``rules.capitalised_nouns``) a word written in lower case tries every
    lower-case form before a capitalised one."""
    lower = word.lower()
    bases = [lower]
    bases += [lower[: -len(e)] for e in rules.case_endings
              if lower.endswith(e) and len(lower) - len(e) >= rules.min_stem]
    for ending in rules.verb_endings:
        if lower.endswith(ending) and len(lower) - len(ending) >= rules.min_stem:
            stem = lower[: -len(ending)]
            bases += [stem + infinitive for infinitive in rules.infinitive_endings]
    match = rules.participle.match(lower) if rules.participle is not None else None
    if match:
        bases += [match.group(2) + infinitive for infinitive in rules.infinitive_endings]
    out: list[str] = []
    for base in bases:
        for form in (base, base[:1].upper() + base[1:]):
            if form not in out:
                out.append(form)
    if rules.capitalised_nouns and word[:1].islower():
        out.sort(key=lambda form: form[:1].isupper())  # stable: lower-case forms first, in order
    return out


def _key(word: str, table: dict[str, tuple[str, ...]], rules: GlossaryRules) -> str | None:
    """The entry of ``table`` for ``word``: the word as written, else its first lemma candidate
    that ``table`` has; None when it has neither."""
    return next((form for form in (word, *lemmas(word, rules)) if form in table), None)


def _lookup(word: str, table: dict[str, tuple[str, ...]], rules: GlossaryRules) -> tuple[str, ...]:
    key = _key(word, table, rules)
    return table[key] if key is not None else ()


def compound_parts(word: str, known: Callable[[str], object], rules: GlossaryRules, max_parts: int = 3) -> list[str]:
    """The parts of a compound that ``known(part)`` glosses, modifiers first and the head last (the
    longest known head is tried first; a modifier may drop one of the pack's linking elements, German
    ``s``/``n``/``en``/``es``/``e``), or [] when the word does not split so or the pack splits no
    compounds. ``known``: part → glosses (truthy when known)."""
    if rules.compound_linking is None:
        return []
    lower = word.lower()
    min_part = rules.min_part
    if len(lower) < 2 * min_part:
        return []
    for cut in range(min_part, len(lower) - min_part + 1):
        head = lower[cut:]
        if not known(head):
            continue
        modifier = lower[:cut]
        for linking in ("", *rules.compound_linking):
            if linking and not modifier.endswith(linking):
                continue
            stem = modifier[: len(modifier) - len(linking)] if linking else modifier
            if len(stem) < min_part:
                continue
            if known(stem):
                return [stem, head]
            if max_parts > 2:
                inner = compound_parts(stem, known, rules, max_parts - 1)
                if inner:
                    return [*inner, head]
    return []


# --- segmentation ---------------------------------------------------------------------------------

Words = dict[str, tuple[str, ...]] | frozenset[str] | set[str]


def segment(run: str, table: Words, rules: GlossaryRules | None = None) -> list[str]:
    """A run of characters of a segmented language cut into dictionary words by bidirectional
    maximum matching: the forward and the backward longest-match cuts, the one with fewer words kept
    (then the one with fewer single characters; the backward one on a tie, which is right more often
    for Chinese: ``巨细胞`` → 巨 · 细胞 "giant cell", not 巨细 · 胞). The pack's function words count as
    words. ``rules``: the language's (by default that of CC-CEDICT, Chinese)."""
    rules = rules if rules is not None else _rules(dictionary_language(CEDICT))
    forward, backward = list(_max_match(run, table, rules)), _backward_match(run, table, rules)
    def cost(cut: list[str]) -> tuple[int, int]:
        return len(cut), sum(len(w) == 1 for w in cut)
    return forward if cost(forward) < cost(backward) else backward


def _known(word: str, table: Words, rules: GlossaryRules) -> bool:
    return word in table or word in rules.function_words


def _max_match(text: str, table: Words, rules: GlossaryRules) -> Iterator[str]:
    i = 0
    while i < len(text):
        for j in range(min(len(text), i + rules.max_segment), i, -1):
            if j - i == 1 or _known(text[i:j], table, rules):
                yield text[i:j]
                i = j
                break


def _backward_match(text: str, table: Words, rules: GlossaryRules) -> list[str]:
    out: list[str] = []
    j = len(text)
    while j > 0:
        for i in range(max(0, j - rules.max_segment), j):
            if j - i == 1 or _known(text[i:j], table, rules):
                out.append(text[i:j])
                j = i
                break
    return out[::-1]
