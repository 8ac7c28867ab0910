"""Multilingual gazetteer NER over the MeSH vocabulary (Aho-Corasick).

Input: a ``Vocabulary`` and ``NerConfig``; then ``find(text, language)`` per chunk.
Output: ``Mention`` records with offsets into the ORIGINAL text, the matched surface, and the
MeSH ID, category, method (``exact``, or ``normalised`` for a generated plural/singular variant or
British spelling) and score the dictionary match determines.

Matching: every surface form is folded (``match_key``) and stored once in an automaton; Latin
keys are padded with spaces, so with the scan text from ``fold_for_scan`` they only match on word
boundaries, while CJK keys match anywhere (Chinese has no spaces). Matches are reduced to the
longest-leftmost non-overlapping set. Precision guards: short all-caps acronyms (``ALL``,
``AIDS``) match case-sensitively only; a stop list drops common words that happen to be MeSH
terms (``lead``, ``men``, ``cat`` ...); keys shorter than ``min_term_chars`` (CJK:
``min_term_chars_zh``) are not indexed.

British spellings (``british_spellings``, on by default): MeSH spells the American way, so every
English key also gets its British spelling (``keys.british_spelling``: ``haemorrhage``,
``oesophageal``, ``anaemia``, ``hospitalisation``, ``tumour``, ``sulphonamides``) where no key has
that spelling already; ``keys.norm_key`` folds both spellings to one key, so the linker reads them for
given spans too.

German keys (``german_keys``, on by default; matched only when ``language="de"``, method
``normalised``; their automaton is built on the first German text, so a process that never sees
one does not pay for them): the inflected forms of every German name (``Nierenerkrankungen``, ``chronischen
Niereninsuffizienz``) and the German spellings of English Latin/Greek names with their inflections
(``Pneumonie``, ``Karzinome``, ``diabetische Nephropathie``; ``medgraph.lang.de.morphology``), unless the
form is already a key or two descriptors would share it; and the curated German clinical
abbreviations (``KHK``, ``pAVK``, ``HI``; ``medgraph.text.abbreviations.german_abbreviations``),
matched case-sensitively with method ``abbreviation``, before any other reading of the same letters
(``DM`` is diabetes mellitus in a German letter, myotonic dystrophy in the English vocabulary).
German nouns are capitalised, so in German text a one-word match written in lower case is dropped
(``tragen`` is no stretcher, ``nun`` no nun) unless it is a long ASCII word of the shared table (a
Latin or English term such as ``choledochus``).

Chinese keys (``chinese_words``: ``"queries"`` by default, i.e. in questions only, through
``for_queries``; ``true`` in every text; matched only when ``language="zh"``, method
``normalised``, built on the first Chinese text): the general dictionary's Chinese words
(``Vocabulary.chinese_words``, the ``cedict`` source) whose descriptor is anatomy, an organism, a
disease or a chemical (``CHINESE_WORD_TREES``). Chinese has no spaces, so a dictionary word also
matches inside longer words (``网膜`` inside ``大网膜``, ``尼龙`` inside ``甲泼尼龙``): such a match is
kept only when it starts and ends where jieba's segmentation puts word boundaries, and when it is
not directly followed by a bound head or suffix (``CHINESE_CONTINUATIONS``: ``卵黄`` in ``卵黄囊瘤``,
``血小板`` in ``血小板减少``), which makes it the modifier of a longer term; a chemical or drug
word is also dropped next to a character of Chinese chemical nomenclature or before a letter or
digit (``CHINESE_CHEMICAL_AFFIXES``: ``肾上腺素`` in ``去甲肾上腺素``, ``维生素`` in ``维生素A``).
The vocabulary's other Chinese names match as before, anywhere.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
import unicodedata
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import ahocorasick

from medgraph.config.models import NerConfig
from medgraph.schemas import Mention
from medgraph.text.keys import british_spelling, fold_for_scan, is_cjk, match_key, plural, singular
from medgraph.text.stopwords import STOP_DE, STOP_EN

if TYPE_CHECKING:
    from medgraph.ontology.vocabulary import Vocabulary

log = logging.getLogger(__name__)
MIN_ACRONYM_CHARS = 3
SCORE_EXACT = 1.0
SCORE_VARIANT = 0.95
SCORE_GERMAN_ABBREVIATION = 0.9


@dataclass
class _Key:
    key: str
    ids: tuple[str, ...]
    variant: bool = False
    case_forms: set[str] = field(default_factory=set)  # acronym spellings that must match exactly
    any_case: bool = False  # some non-acronym surface shares this key
    german: bool = False  # a generated German form: matched in German text only
    de_case: dict[str, str] = field(default_factory=dict)  # German abbreviation spelling -> MeSH ID
    chinese: bool = False  # a Chinese dictionary word: matched in Chinese text on word boundaries only
    chemical: bool = False  # (a Chinese dictionary word) its descriptor is a chemical or drug (tree D)


GERMAN_LOWERCASE_MIN_CHARS = 9
# Chinese dictionary words the gazetteer matches: anatomy, organisms, diseases, chemicals and drugs
# (the linker reads every joined word, for spans it is given: 医院 → Hospitals)
CHINESE_WORD_TREES = ("A", "B", "C", "D")
# Chinese compounds are right-headed: a word directly followed by one of these bound heads or
# suffixes is the modifier of a longer term (卵黄囊瘤 yolk sac tumour, 上皮样 epithelioid, 胆红素血症
# bilirubinaemia, 血小板减少 thrombocytopenia, 毛果芸香碱 pilocarpine, an alkaloid named after its plant)
CHINESE_CONTINUATIONS = (*"菌瘤炎癌病症素酶物剂疹性率囊样碱", "血症", "减少", "增多", "因子")
# Chinese chemical names are built from a parent name with substituent and salt characters around
# it (去甲肾上腺素 norepinephrine, 甲泼尼龙 methylprednisolone, 普鲁卡因胺 procainamide, 乳酸钠), and
# a letter or digit after a name completes it (维生素A, 补体C3): a chemical word next to one of
# these is part of a longer name
CHINESE_CHEMICAL_AFFIXES = frozenset("甲乙丙丁戊己基异去脱氧氢氯氟溴碘羟氨胺硝磺酰酯醇醛酮酸钠钾钙镁铋磷泼")
_segmenter_lock = threading.Lock()
_segmenter: Any = None


def chinese_word_bounds(text: str) -> set[int]:
    """The offsets where a word of ``text`` starts or ends, by jieba's segmentation."""
    global _segmenter
    if _segmenter is None:
        with _segmenter_lock:
            if _segmenter is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                tokenizer = jieba.Tokenizer()
                tokenizer.initialize()
                _segmenter = tokenizer
    bounds = {0, len(text)}
    for _word, start, end in _segmenter.tokenize(text):
        bounds.update((start, end))
    return bounds


def _chinese_word_fits(text: str, start: int, end: int, bounds: set[int], chemical: bool) -> bool:
    """A Chinese dictionary word stands alone: it starts and ends on word boundaries, is not the
    modifier of a longer term and (a chemical) not part of a longer chemical name."""
    if start not in bounds or end not in bounds or text.startswith(CHINESE_CONTINUATIONS, end):
        return False
    if not chemical:
        return True
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    return not (before in CHINESE_CHEMICAL_AFFIXES or after in CHINESE_CHEMICAL_AFFIXES
                or (after.isascii() and after.isalnum()) or "α" <= after <= "ω")


def _lowercase_word(surface: str, german_key: bool) -> bool:
    """A one-word German mention in lower case is no German noun (``tragen``, ``angesichts``,
    ``nun``, ``gen``); long ASCII words of the shared table stay (Latin and English terms:
    ``choledochus``, ``hypertensive``)."""
    if not surface[:1].islower() or any(c in surface for c in " -\n"):
        return False
    return german_key or not (surface.isascii() and len(surface) >= GERMAN_LOWERCASE_MIN_CHARS)


class GazetteerNER:
    """Longest-leftmost dictionary matching with folding and offset mapping."""

    def __init__(self, vocab: Vocabulary, cfg: NerConfig | None = None, german_keys: bool = True) -> None:
        t0 = time.perf_counter()
        self.vocab = vocab
        self.cfg = cfg or NerConfig()
        self.german_keys = german_keys
        self.chinese_words = self.cfg.chinese_words is True
        keys = self._collect()
        self._add_variants(keys)
        self._add_british(keys)
        self._keys, self._automaton = self._compile(keys)
        # German / Chinese text: the same keys plus the German forms / Chinese dictionary words, built
        # on the first text in that language (most processes never see one, and the German forms
        # triple the build time)
        self._by_language: dict[str, tuple[list[_Key], ahocorasick.Automaton]] = {}
        self._language_lock = threading.Lock()
        log.info("gazetteer: %d keys in %.1fs", len(self._keys), time.perf_counter() - t0)

    def _long_enough(self, key: str) -> bool:
        limit = self.cfg.min_term_chars_zh if is_cjk(key[0]) else self.cfg.min_term_chars
        return len(key) >= limit

    def _collect(self) -> dict[str, _Key]:
        index = self.vocab.exact_index
        keys: dict[str, _Key] = {}
        for key, (case_forms, any_case) in self.vocab.surface_table.items():
            if key not in index:
                continue
            if self._long_enough(key) or (case_forms and len(key) >= MIN_ACRONYM_CHARS):
                keys[key] = _Key(key, index[key], False, set(case_forms), any_case)
        return keys

    def _add_variants(self, keys: dict[str, _Key]) -> None:
        if not self.cfg.plural_variants:
            return
        for key, entry in list(keys.items()):
            if not entry.any_case or not key.isascii() or len(key) < 5:
                continue
            head, _, last = key.rpartition(" ")
            sing = singular(last)
            other = plural(last) if sing == last else sing
            variant = f"{head} {other}".strip()
            if variant not in keys and len(variant) >= self.cfg.min_term_chars:
                keys[variant] = _Key(variant, entry.ids, variant=True, any_case=True)

    def _add_british(self, keys: dict[str, _Key]) -> None:
        """The British spelling of every English key (``keys.british_spelling``: haemorrhage,
        oesophagus, anaemia, hospitalisation, tumour), where no key has that spelling already."""
        if not self.cfg.british_spellings:
            return
        for key, entry in list(keys.items()):
            if not entry.any_case or not key.isascii():
                continue
            british = british_spelling(key)
            if british != key and british not in keys:
                keys[british] = _Key(british, entry.ids, variant=True, any_case=True)

    def _add_german(self, keys: dict[str, _Key]) -> None:
        """German-only keys: inflected German names, German spellings of English names, and the
        curated German clinical abbreviations (see the module docstring)."""
        from medgraph.lang.de.abbreviations import german_abbreviations

        for form, ids in self.vocab.german_index.items():
            if (
                form not in keys
                and form not in STOP_DE
                and form not in STOP_EN
                and len(form) >= self.cfg.min_term_chars
            ):
                keys[form] = _Key(form, ids, variant=True, any_case=True, german=True)
        for short, row in german_abbreviations().items():
            if row.mesh_id not in self.vocab:
                continue
            key = match_key(short)
            entry = keys.get(key)
            # a copy of an existing key: the English table's entries are shared, never changed
            entry = _Key(key, (row.mesh_id,), german=True) if entry is None else replace(entry, de_case=dict(entry.de_case))
            entry.de_case[unicodedata.normalize("NFKC", short)] = row.mesh_id
            keys[key] = entry

    @staticmethod
    def _compile(keys: dict[str, _Key]) -> tuple[list[_Key], ahocorasick.Automaton]:
        """The key table (sorted by key) and its automaton (value: table index, padded length)."""
        table: list[_Key] = []
        automaton = ahocorasick.Automaton()
        for key in sorted(keys):
            padded = (" " if not is_cjk(key[0]) else "") + key + (" " if not is_cjk(key[-1]) else "")
            automaton.add_word(padded, (len(table), len(padded)))
            table.append(keys[key])
        automaton.make_automaton()
        return table, automaton

    def _add_chinese(self, keys: dict[str, _Key]) -> None:
        """Chinese-only keys: the dictionary words of ``CHINESE_WORD_TREES`` (see the module docstring)."""
        for key, ids in self.vocab.chinese_words.items():
            entity = self.vocab.get(ids[0])
            if key in keys or entity is None or not self._long_enough(key):
                continue
            if any(t.startswith(CHINESE_WORD_TREES) for t in entity.tree_numbers):
                chemical = any(t.startswith("D") for t in entity.tree_numbers)
                keys[key] = _Key(key, ids, variant=True, any_case=True, chinese=True, chemical=chemical)

    def _table(self, language: str) -> tuple[list[_Key], ahocorasick.Automaton]:
        """The keys and automaton for text in ``language`` (German, Chinese: built on first use)."""
        add = {"de": self._add_german if self.german_keys else None,
               "zh": self._add_chinese if self.chinese_words and self.vocab.chinese_words else None}
        extend = add.get(language)
        if extend is None:
            return self._keys, self._automaton
        if language not in self._by_language:
            with self._language_lock:
                if language not in self._by_language:
                    t0 = time.perf_counter()
                    keys = {entry.key: entry for entry in self._keys}  # the shared table, plus:
                    extend(keys)
                    self._by_language[language] = self._compile(keys)
                    log.info("gazetteer, %s keys: %d in %.1fs", language, len(self._by_language[language][0]),
                             time.perf_counter() - t0)
        return self._by_language[language]

    def for_queries(self) -> GazetteerNER:
        """This gazetteer as question analysis uses it: with the Chinese dictionary words when
        ``chinese_words`` is ``"queries"`` (a copy sharing every table but the Chinese one), else
        itself."""
        if self.cfg.chinese_words != "queries" or self.chinese_words:
            return self
        twin = copy.copy(self)
        twin.chinese_words = True
        twin._by_language = {lang: table for lang, table in self._by_language.items() if lang != "zh"}
        twin._language_lock = threading.Lock()
        return twin

    def _reading(self, entry: _Key, surface: str, language: str) -> tuple[str, str, float] | None:
        """(MeSH ID, method, score) of a matched key, or None when the match is not accepted."""
        if entry.de_case and language == "de":
            mesh_id = entry.de_case.get(unicodedata.normalize("NFKC", surface))
            if mesh_id is not None:
                return mesh_id, "abbreviation", SCORE_GERMAN_ABBREVIATION
        if (entry.german and language != "de") or (entry.chinese and language != "zh"):
            return None  # a German form in other text, a Chinese dictionary word in other text
        if not entry.ids or not self._accept(entry, surface, language):
            return None
        if language == "de" and _lowercase_word(surface, entry.german):
            return None
        if entry.variant:
            return entry.ids[0], "normalised", SCORE_VARIANT
        return entry.ids[0], "exact", SCORE_EXACT

    def _accept(self, entry: _Key, surface: str, language: str) -> bool:
        if entry.case_forms and unicodedata.normalize("NFKC", surface) in entry.case_forms:
            return True
        if not entry.any_case:
            return False
        if entry.key in STOP_EN or (language == "de" and entry.key in STOP_DE):
            return False
        return len(entry.key) >= self.cfg.min_term_chars or is_cjk(entry.key[0])

    def _spans(self, text: str, automaton: ahocorasick.Automaton) -> list[tuple[int, int, int]]:
        """Candidate (start, end, key index) spans on the original text."""
        scan, starts, ends = fold_for_scan(text)
        out = []
        for end_idx, (kid, length) in automaton.iter(scan):
            s, e = end_idx - length + 1, end_idx + 1
            if scan[s] == " ":
                s += 1
            if scan[e - 1] == " ":
                e -= 1
            if starts is None or ends is None:
                out.append((s - 1, e - 1, kid))
            else:
                out.append((starts[s], ends[e - 1], kid))
        return out

    def find(self, text: str, language: str = "en") -> list[Mention]:
        """Longest-leftmost non-overlapping dictionary mentions in ``text``."""
        table, automaton = self._table(language)
        candidates = sorted(self._spans(text, automaton), key=lambda c: (c[0], c[0] - c[1]))
        mentions: list[Mention] = []
        last_end = -1
        bounds: set[int] | None = None
        for start, end, kid in candidates:
            if start < last_end:
                continue
            surface = text[start:end]
            reading = self._reading(table[kid], surface, language)
            if reading is None:
                continue
            if table[kid].chinese:
                bounds = chinese_word_bounds(text) if bounds is None else bounds
                if not _chinese_word_fits(text, start, end, bounds, table[kid].chemical):
                    continue
            mesh_id, method, score = reading
            mentions.append(
                Mention(start, end, surface, mesh_id, self.vocab.category(mesh_id), method, score)
            )
            last_end = end
        return mentions
