"""A bilingual glossary for query translation: German and Chinese words → English glosses.

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

Lookups:
- ``german(word)``: the word as written, then in lower case and capitalised, then its lemma
  candidates (``german_lemmas``: case and plural endings, verb endings and the participle's
  ``ge-…-t``), then, for a compound the dictionary lacks, a split into known parts with the linking
  letters (``Fugen``) dropped, modifiers before the head (``german_compound``:
  ``Lebermetastasen`` → liver · metastases).
- ``chinese(text)``: a segmentation of a run of Chinese characters into dictionary words
  (``segment``: bidirectional maximum matching over the glossary), each with its glosses; function
  words and question particles (``CHINESE_FUNCTION_WORDS``) are kept as segments without glosses.
"""

from __future__ import annotations

import gzip
import logging
import pickle
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medgraph.lang.de.morphology import FUGEN
from medgraph.schemas import Entity
from medgraph.text.keys import norm_key

log = logging.getLogger(__name__)

FORMAT_VERSION = 2  # 2: medical senses read off the vocabulary's names (terminology_senses)
FILE_NAME = "glossary.pkl"
PIVOT = "en"  # the language every gloss is in: German and Chinese words are glossed in English
SOURCES = frozenset({"translation_pairs", "babelon", "ding", "cedict"})  # vocabulary source kinds it reads
MAX_ZH_WORD = 8  # longest dictionary word tried by the segmenter
MIN_DE_PART = 3  # shortest part of a German compound
REVERSE_GLOSSES = 2  # glosses of a word read backwards (English → German / Chinese)
REVERSE_WORDS = 3  # target-language words kept per English phrase
# Chinese words that only carry grammar or the question's form: no gloss (their English glosses,
# "exist", "be alive", "China", "what?", would only add noise to a search)
CHINESE_FUNCTION_WORDS = frozenset(
    "的 地 得 了 着 过 吗 呢 吧 啊 呀 么 是 在 有 和 与 及 或 等 对 于 把 被 为 以 而 中 之 其 这 那 该 此 后 前 "
    "会 能 可 要 将 就 也 都 又 还 再 很 更 最 并 且 但 则 从 向 由 给 让 使 用 到 上 下 内 里 时 "
    "是否 能否 可否 有无 有没有 会不会 是不是 能不能 可不可以 要不要 什么 哪些 哪个 哪种 如何 怎么 怎样 "
    "怎么样 多少 为什么 为何 还是 以及 并且 或者 而且 但是 因为 所以 如果 是的 一种 一个 一些 这种 这些 "
    "那些 其中 之间 方面 情况 问题 需要 应该 可以 可能 能够 进行 通过 作为 对于 关于 采用 出现".split()
)
_CJK_WORD = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]+")
# German lemma rules, tried in order after the word itself
_DE_CASE_ENDINGS = ("ern", "ens", "es", "en", "er", "em", "e", "s", "n")
_DE_VERB_ENDINGS = ("test", "tet", "ten", "te", "t", "st")
_DE_PARTICIPLE = re.compile(r"^(ge)(\w{3,}?)(?:t|te|ten|tem|ter|tes|et|ete|eten)$")


@dataclass
class Glossary:
    """``words[language][word]`` → English glosses, main sense first."""

    words: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return sum(len(w) for w in self.words.values())

    def languages(self) -> list[str]:
        return [lang for lang, words in self.words.items() if words]

    def lookup(self, word: str, language: str) -> tuple[str, ...]:
        """The word's glosses as listed (no lemma rules), or ()."""
        return self.words.get(language, {}).get(word, ())

    # --- German --------------------------------------------------------------------------------

    def german(self, word: str) -> list[tuple[str, ...]]:
        """Gloss groups of one German word: one group for a word the dictionary knows (as written or
        through a lemma), one per part for a compound of known parts, [] when it knows neither."""
        glosses = self._german_word(word)
        if glosses:
            return [glosses]
        return [g for part in german_compound(word, self._german_word) for g in [self._german_word(part)]]

    def _german_word(self, word: str) -> tuple[str, ...]:
        table = self.words.get("de", {})
        return _german_lookup(word, table) if table else ()

    # --- Chinese -------------------------------------------------------------------------------

    def chinese(self, text: str) -> list[tuple[str, tuple[str, ...]]]:
        """(segment, glosses) for each segment of ``text``'s runs of Chinese characters; function
        words and words the dictionary lacks have no glosses."""
        table = self.words.get("zh", {})
        out: list[tuple[str, tuple[str, ...]]] = []
        for run in _CJK_WORD.findall(text):
            for seg in segment(run, table):
                out.append((seg, () if seg in CHINESE_FUNCTION_WORDS else table.get(seg, ())))
        return out

    def chinese_boundaries(self, text: str) -> set[int]:
        """Character offsets in ``text`` where a word of the segmentation starts or ends (every
        offset outside runs of Chinese characters counts): a Chinese mention that starts or ends
        inside a word is a match inside another word (流感 "influenza" in 分流|感染)."""
        table = self.words.get("zh", {})
        out = set(range(len(text) + 1))
        for match in _CJK_WORD.finditer(text):
            out -= set(range(match.start() + 1, match.end()))
            pos = match.start()
            for seg in segment(match.group(), table):
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
        Words of several words and Chinese single characters are not read backwards."""
        table = self._reverse(language)
        return table.get(norm_key(phrase), ()) if table else ()

    def _reverse(self, language: str) -> dict[str, tuple[str, ...]]:
        cache = self.__dict__.setdefault("_reverse_tables", {})
        if language not in cache:
            ranked: dict[str, dict[str, tuple[int, int, int]]] = {}
            for word, glosses in self.words.get(language, {}).items():
                if (language == "zh" and len(word) < 2) or " " in word:
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
        tmp = out.with_suffix(".tmp")
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
    3. the general dictionaries (``ding``, ``cedict``): every word of either.
    Other kinds are not read. Terms of 1 and 2 also make the Chinese segmenter see a medical term as
    one word."""
    from medgraph.ontology.cedict import read_cedict_glosses
    from medgraph.ontology.ding import read_ding_glosses
    from medgraph.ontology.sources import read_babelon, read_translation_pairs

    entities = list(entities)
    dictionaries = {"ding": ("de", read_ding_glosses), "cedict": ("zh", read_cedict_glosses)}
    pairs = {"translation_pairs": read_translation_pairs, "babelon": read_babelon}
    tables: dict[str, dict[str, list[str]]] = {"de": {}, "zh": {}}
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
    general: dict[str, dict[str, tuple[str, ...]]] = {"de": {}, "zh": {}}  # the dictionaries' words alone
    for kind, path in sources:
        if kind in dictionaries:
            language, reader = dictionaries[kind]
            opener = gzip.open if str(path).endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8") as fh:
                for word, glosses in reader(fh):
                    add(language, word, glosses)
                    general[language].setdefault(word, tuple(glosses))
            counts[kind] = str(path)
    words = {lang: {w: tuple(g) for w, g in table.items() if g} for lang, table in tables.items()}
    medical = medical_terms(entities)
    senses = terminology_senses(entities, general["de"], medical=medical) if general["de"] else {}
    for word, found in senses.items():
        words["de"][word] = _with_senses(words["de"].get(word, ()), found, medical, per_word)
    counts["terminology_senses"] = len(senses)
    return Glossary(words, {**counts, "words": {lang: len(w) for lang, w in words.items()}})


def _with_senses(glosses: tuple[str, ...], senses: list[str], medical: set[str], per_word: int) -> tuple[str, ...]:
    """A word's glosses with its terminology senses: first where none of its own glosses is a medical
    term (Versorgung: care, then supply), else after them (Syndrom: syndrome, then disorder)."""
    new = [s for s in senses if s not in glosses][:per_word]
    if any(g.lower() in medical for g in glosses):
        return (*glosses[: per_word - len(new)], *new)
    return tuple([*new, *glosses])[:per_word]


def medical_terms(entities: Iterable[Entity]) -> set[str]:
    """The vocabulary's English names and synonyms, lower-cased: what counts as a medical term."""
    return {name.lower() for e in entities for name in e.names.get(PIVOT, [e.name])}


def terminology_senses(entities: Iterable[Entity], general: dict[str, tuple[str, ...]],
                       min_support: int = 2, medical: set[str] | None = None) -> dict[str, list[str]]:
    """German words whose medical sense the general dictionary lists only inside compounds, read off
    German–English pairs of phrases: the vocabulary's German and English names of one descriptor and
    the dictionary's own compounds glossed by a vocabulary name (a medical term). A German phrase's words and compound
    parts line up with the English phrase's words (``Patienten·versorgung`` ↔ patient care,
    ``Gesundheits·versorgung`` ↔ health care); where every part but one has its English word among
    its dictionary glosses, the remaining part, the head, means the remaining word (Versorgung →
    care, where the dictionary's own entry has only "supply"). Kept when ``min_support`` phrases say so; the
    dictionary's entry word (``general``'s key) → its new glosses, best supported first.
    ``medical``: ``medical_terms(entities)``, when the caller has it."""
    import Stemmer

    stem = Stemmer.Stemmer("english").stemWord
    entities = list(entities)

    def lookup(word: str) -> tuple[str, ...]:
        return _german_lookup(word, general)

    def parts_of(phrase: str) -> list[str]:
        return [part for word in re.split(r"[\s-]+", phrase) if word
                for part in (german_compound(word, lookup) or [word])]

    pairs = [(de, en) for e in entities for de in e.names.get("de", [])
             for en in e.names.get(PIVOT, [e.name]) if "," not in en]
    medical = medical_terms(entities) if medical is None else medical
    # the dictionary's compounds whose gloss is a vocabulary name (a medical term: patient care)
    pairs += [(word, gloss) for word, glosses in general.items() if " " not in word
              for gloss in glosses if " " in gloss and gloss.lower() in medical]
    support: dict[tuple[str, str], set[str]] = {}
    for de, en in pairs:
        en_words = en.lower().split()
        parts = parts_of(de)
        if len(parts) < 2 or len(en_words) < 2:
            continue
        glossed = [{stem(w)[:5] for g in lookup(part) for w in g.lower().split()} for part in parts]
        en_stems = {stem(w)[:5] for w in en_words[:-1]}  # a stem's first letters: primary ~ primarily
        head, word = parts[-1], en_words[-1]
        # the head means the English head noun when the dictionary explains every modifier by one of
        # the English modifiers and the head by none of the English words
        if stem(word)[:5] in glossed[-1] or glossed[-1] & en_stems or not all(g & en_stems for g in glossed[:-1]):
            continue
        key = _german_key(head, general)
        if key and len(word) >= 3 and word.isalpha():
            support.setdefault((key, word), set()).add(de.lower())
    senses: dict[str, list[tuple[int, str]]] = {}
    for (key, word), phrases in support.items():
        if len(phrases) >= min_support:
            senses.setdefault(key, []).append((-len(phrases), word))
    return {key: [word for _, word in sorted(found)] for key, found in senses.items()}


# --- German lookups -------------------------------------------------------------------------------


def german_lemmas(word: str) -> list[str]:
    """Forms of a German word to look up, best first: the word in lower case and capitalised, without
    a case or plural ending (``primären`` → primär, ``Rektumkarzinoms`` → Rektumkarzinom), as an
    infinitive (``verschlechtert`` → verschlechtern, ``behandelt`` → behandeln) and a participle's
    infinitive (``gestörte`` → stören)."""
    lower = word.lower()
    bases = [lower]
    bases += [lower[: -len(e)] for e in _DE_CASE_ENDINGS if lower.endswith(e) and len(lower) - len(e) >= 3]
    for ending in _DE_VERB_ENDINGS:
        if lower.endswith(ending) and len(lower) - len(ending) >= 3:
            stem = lower[: -len(ending)]
            bases += [stem + "en", stem + "n"]
    match = _DE_PARTICIPLE.match(lower)
    if match:
        bases += [match.group(2) + "en", match.group(2) + "n"]
    out: list[str] = []
    for base in bases:
        for form in (base, base[:1].upper() + base[1:]):
            if form not in out:
                out.append(form)
    return out


def _german_key(word: str, table: dict[str, tuple[str, ...]]) -> str | None:
    """The entry of ``table`` for ``word``: the word as written, else its first lemma candidate
    that ``table`` has; None when it has neither."""
    return next((form for form in (word, *german_lemmas(word)) if form in table), None)


def _german_lookup(word: str, table: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    key = _german_key(word, table)
    return table[key] if key is not None else ()


def german_compound(word: str, known: Any, max_parts: int = 3) -> list[str]:
    """The parts of a German compound that ``known(part)`` glosses, modifiers first and the head last
    (the longest known head is tried first; a modifier may drop a linking ``s``/``n``/``en``/``es``/
    ``e``), or [] when the word does not split so. ``known``: part → glosses (truthy when known)."""
    lower = word.lower()
    if len(lower) < 2 * MIN_DE_PART:
        return []
    for cut in range(MIN_DE_PART, len(lower) - MIN_DE_PART + 1):
        head = lower[cut:]
        if not known(head):
            continue
        modifier = lower[:cut]
        for fuge in ("", *FUGEN):
            if fuge and not modifier.endswith(fuge):
                continue
            stem = modifier[: len(modifier) - len(fuge)] if fuge else modifier
            if len(stem) < MIN_DE_PART:
                continue
            if known(stem):
                return [stem, head]
            if max_parts > 2:
                inner = german_compound(stem, known, max_parts - 1)
                if inner:
                    return [*inner, head]
    return []


# --- Chinese segmentation -------------------------------------------------------------------------


def segment(run: str, table: dict[str, tuple[str, ...]] | frozenset[str] | set[str]) -> list[str]:
    """A run of Chinese characters cut into dictionary words by bidirectional maximum matching: the
    forward and the backward longest-match cuts, the one with fewer words kept (then the one with
    fewer single characters; the backward one on a tie, which is right more often for Chinese:
    ``巨细胞`` → 巨 · 细胞 "giant cell", not 巨细 · 胞). Function words count as words."""
    forward, backward = list(_max_match(run, table)), _backward_match(run, table)
    def cost(cut: list[str]) -> tuple[int, int]:
        return len(cut), sum(len(w) == 1 for w in cut)
    return forward if cost(forward) < cost(backward) else backward


def _known(word: str, table: dict[str, tuple[str, ...]] | frozenset[str] | set[str]) -> bool:
    return word in table or word in CHINESE_FUNCTION_WORDS


def _max_match(text: str, table: dict[str, tuple[str, ...]] | frozenset[str] | set[str]) -> Iterator[str]:
    i = 0
    while i < len(text):
        for j in range(min(len(text), i + MAX_ZH_WORD), i, -1):
            if j - i == 1 or _known(text[i:j], table):
                yield text[i:j]
                i = j
                break


def _backward_match(text: str, table: dict[str, tuple[str, ...]] | frozenset[str] | set[str]) -> list[str]:
    out: list[str] = []
    j = len(text)
    while j > 0:
        for i in range(max(0, j - MAX_ZH_WORD), j):
            if j - i == 1 or _known(text[i:j], table):
                out.append(text[i:j])
                j = i
                break
    return out[::-1]
