"""Multilingual gazetteer NER over the MeSH vocabulary (Aho-Corasick).

Input: a ``Vocabulary`` and ``NerConfig``; then ``find(text, language)`` per chunk.
Output: ``Mention`` records with offsets into the ORIGINAL text, the matched surface, and the
MeSH ID, category, method (``exact``, or ``normalised`` for a generated plural/singular variant)
and score the dictionary match determines.

Matching: every surface form is folded (``match_key``) and stored once in an automaton; Latin
keys are padded with spaces, so with the scan text from ``fold_for_scan`` they only match on word
boundaries, while CJK keys match anywhere (Chinese has no spaces). Matches are reduced to the
longest-leftmost non-overlapping set. Precision guards: short all-caps acronyms (``ALL``,
``AIDS``) match case-sensitively only; a stop list drops common words that happen to be MeSH
terms (``lead``, ``men``, ``cat`` ...); keys shorter than ``min_term_chars`` (CJK:
``min_term_chars_zh``) are not indexed.

German keys (``german_keys``, on by default; matched only when ``language="de"``, method
``normalised``; their automaton is built on the first German text, so a process that never sees
one does not pay for them): the inflected forms of every German name (``Nierenerkrankungen``, ``chronischen
Niereninsuffizienz``) and the German spellings of English Latin/Greek names with their inflections
(``Pneumonie``, ``Karzinome``, ``diabetische Nephropathie``; ``medgraph.text.variants``), unless the
form is already a key or two descriptors would share it; and the curated German clinical
abbreviations (``KHK``, ``pAVK``, ``HI``; ``medgraph.text.abbreviations.german_abbreviations``),
matched case-sensitively with method ``abbreviation``, before any other reading of the same letters
(``DM`` is diabetes mellitus in a German letter, myotonic dystrophy in the English vocabulary).
German nouns are capitalised, so in German text a one-word match written in lower case is dropped
(``tragen`` is no stretcher, ``nun`` no nun) unless it is a long ASCII word of the shared table (a
Latin or English term such as ``choledochus``).
"""

from __future__ import annotations

import logging
import threading
import time
import unicodedata
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import ahocorasick

from medgraph.config.models import NerConfig
from medgraph.schemas import Mention
from medgraph.text.keys import fold_for_scan, is_cjk, match_key, plural, singular
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


GERMAN_LOWERCASE_MIN_CHARS = 9


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
        keys = self._collect()
        self._add_variants(keys)
        self._keys, self._automaton = self._compile(keys)
        # German text: the same keys plus the German forms, built on the first German text (most
        # processes never see one, and the forms triple the build time)
        self._german: tuple[list[_Key], ahocorasick.Automaton] | None = None
        self._german_lock = threading.Lock()
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

    def _add_german(self, keys: dict[str, _Key]) -> None:
        """German-only keys: inflected German names, German spellings of English names, and the
        curated German clinical abbreviations (see the module docstring)."""
        from medgraph.text.abbreviations import german_abbreviations

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

    def _table(self, language: str) -> tuple[list[_Key], ahocorasick.Automaton]:
        """The keys and automaton for text in ``language`` (German: built on first use)."""
        if language != "de" or not self.german_keys:
            return self._keys, self._automaton
        if self._german is None:
            with self._german_lock:
                if self._german is None:
                    t0 = time.perf_counter()
                    keys = {entry.key: entry for entry in self._keys}  # the English table, plus:
                    self._add_german(keys)
                    self._german = self._compile(keys)
                    log.info("gazetteer, German forms: %d keys in %.1fs", len(self._german[0]),
                             time.perf_counter() - t0)
        return self._german

    def _reading(self, entry: _Key, surface: str, language: str) -> tuple[str, str, float] | None:
        """(MeSH ID, method, score) of a matched key, or None when the match is not accepted."""
        if entry.de_case and language == "de":
            mesh_id = entry.de_case.get(unicodedata.normalize("NFKC", surface))
            if mesh_id is not None:
                return mesh_id, "abbreviation", SCORE_GERMAN_ABBREVIATION
        if (entry.german and language != "de") or not entry.ids or not self._accept(entry, surface, language):
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
        for start, end, kid in candidates:
            if start < last_end:
                continue
            surface = text[start:end]
            reading = self._reading(table[kid], surface, language)
            if reading is None:
                continue
            mesh_id, method, score = reading
            mentions.append(
                Mention(start, end, surface, mesh_id, self.vocab.category(mesh_id), method, score)
            )
            last_end = end
        return mentions
