"""Multilingual gazetteer NER over the MeSH vocabulary (Aho-Corasick).

Input: a ``Vocabulary`` and ``NerConfig``; then ``find(text, language)`` per chunk.
Output: ``Mention`` records with offsets into the ORIGINAL text, the matched surface, and the
MeSH ID, category, method (``exact``, or ``normalised`` for a generated plural/singular variant or
British spelling) and score the dictionary match determines.

Matching: every surface form is folded (``match_key``) and stored once in an automaton; Latin
keys are padded with spaces, so with the scan text from ``fold_for_scan`` they only match on word
boundaries, while CJK keys match anywhere (Chinese has no spaces). Matches are reduced to the
longest-leftmost non-overlapping set. Precision guards: short all-caps acronyms (``ALL``,
``AIDS``) match case-sensitively only; the entity stop words of the language packs
(``LanguagePack.lexicon.stop_words``: the pivot's in every text, a pack's own in its text) drop common
words that happen to be MeSH terms (``lead``, ``men``, ``cat`` ...); keys shorter than
``min_term_chars`` (CJK: ``min_term_chars_zh``) are not indexed.

British spellings (``british_spellings``, on by default): MeSH spells the American way, so every
English key also gets its British spelling (``keys.british_spelling``: ``haemorrhage``,
``oesophageal``, ``anaemia``, ``hospitalisation``, ``tumour``, ``sulphonamides``) where no key has
that spelling already; ``keys.norm_key`` folds both spellings to one key, so the linker reads them for
given spans too.

Language-only keys: text in a language whose pack has them gets the shared keys plus its own, in
an automaton built on the first text in that language (most processes never see one, and the
generated forms triple the build time):

Generated forms (``german_keys``, on by default; a pack that generates forms, ``lexicon.inflections``
/ ``spellings``: German; method ``normalised``): the inflected forms of every German name
(``Nierenerkrankungen``, ``chronischen Niereninsuffizienz``) and the German spellings of English
Latin/Greek names with their inflections (``Pneumonie``, ``Karzinome``, ``diabetische Nephropathie``;
``medgraph.lang.de.morphology``), unless the form is already a key or two descriptors would share
it; and the pack's curated clinical abbreviations (``lexicon.abbreviations``: ``KHK``, ``pAVK``,
``HI``; ``medgraph.lang.de.abbreviations.german_abbreviations``), matched case-sensitively with
method ``abbreviation``, before any other reading of the same letters (``DM`` is diabetes mellitus in
a German letter, myotonic dystrophy in the English vocabulary). Where nouns are capitalised
(``lexicon.capitalised_nouns``: German), a one-word match written in lower case is dropped
(``tragen`` is no stretcher, ``nun`` no nun) unless it is a long ASCII word of the shared table (a
Latin or English term such as ``choledochus``).

Dictionary words (``chinese_words``: ``"queries"`` by default, i.e. in questions only, through
``for_queries``; ``true`` in every text; a pack that indexes them, ``lexicon.dictionary_words``:
Chinese; method ``normalised``): the general dictionary's words of the language
(``Vocabulary.dictionary_words``, the ``cedict`` source) whose descriptor is in one of the pack's MeSH
trees (``WordMatching.trees``: anatomy, organisms, diseases, chemicals). Chinese has no spaces, so a
dictionary word also matches inside longer words (``网膜`` inside ``大网膜``, ``尼龙`` inside
``甲泼尼龙``): such a match is kept only when it starts and ends where the pack's segmenter puts
word boundaries (jieba), and when it is not directly followed by a bound head or suffix
(``WordMatching.continuations``: ``卵黄`` in ``卵黄囊瘤``, ``血小板`` in ``血小板减少``), which makes it
the modifier of a longer term; a chemical or drug word is also dropped next to a character of
chemical nomenclature or before a letter or digit (``WordMatching.chemical_affixes``: ``肾上腺素`` in
``去甲肾上腺素``, ``维生素`` in ``维生素A``). The vocabulary's other Chinese names match as before,
anywhere.

The shared keys' table and automaton depend only on the vocabulary, four NER settings and this code,
and take ~5 s to derive: they are kept beside a saved vocabulary (``medgraph.ontology.derived``:
``gazetteer-<digest>.pkl``, with this module's and ``medgraph.text.keys``'s source in the digest),
and every later process (each build's extract actor, each analyzer replica) reads them in under a
second. A built-in language's table (~5 s for German's generated forms) is kept the same way
(``gazetteer-<code>-<digest>.pkl``, every file of ``medgraph/lang`` in its digest); a pack registered
from elsewhere derives its own.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import ahocorasick

from medgraph import lang
from medgraph.config.models import NerConfig
from medgraph.lang import LanguagePack
from medgraph.lang.sections.lexicon import WordMatching
from medgraph.ontology.derived import derived, lang_sources
from medgraph.schemas import Mention
from medgraph.text import keys as keys_module
from medgraph.text.keys import british_spelling, fold_for_scan, is_cjk, match_key, plural, singular

if TYPE_CHECKING:
    from medgraph.ontology.vocabulary import Vocabulary

log = logging.getLogger(__name__)
MIN_ACRONYM_CHARS = 3
SCORE_EXACT = 1.0
SCORE_VARIANT = 0.95
SCORE_GERMAN_ABBREVIATION = 0.9  # a short form of a pack's curated abbreviation table
TABLE_FORMAT = 1  # of the tables kept beside the vocabulary (this module's source is in their digest too)


@dataclass
class _Key:
    key: str
    ids: tuple[str, ...]
    variant: bool = False
    case_forms: set[str] = field(default_factory=set)  # acronym spellings that must match exactly
    any_case: bool = False  # some non-acronym surface shares this key
    generated: bool = False  # a generated form of its table's language: in that language's table only
    abbreviations: dict[str, str] = field(default_factory=dict)  # curated short-form spelling -> MeSH ID
    word: bool = False  # a dictionary word of its table's language: matched on word boundaries only
    chemical: bool = False  # (a dictionary word) its descriptor is a chemical or drug (tree D)

    @property
    def german(self) -> bool:
        """``generated`` under its older name (German is the language with generated forms)."""
        return self.generated

    @property
    def de_case(self) -> dict[str, str]:
        """``abbreviations`` under its older name."""
        return self.abbreviations


_FLAGS = ("variant", "any_case", "generated", "word", "chemical")


class _Table:
    """A compiled key table, column by column: quick to save and to read back (a list of 260k
    ``_Key`` objects takes ~3 s to unpickle, the columns ~1 s). Entry ``i`` becomes a ``_Key``
    when a match asks for it."""

    def __init__(self, entries: list[_Key]) -> None:
        self.keys = [e.key for e in entries]
        self.ids = [e.ids for e in entries]
        self.flags = bytes(sum(1 << bit for bit, name in enumerate(_FLAGS) if getattr(e, name)) for e in entries)
        self.case_forms = {i: frozenset(e.case_forms) for i, e in enumerate(entries) if e.case_forms}
        self.abbreviations = {i: e.abbreviations for i, e in enumerate(entries) if e.abbreviations}

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, i: int) -> _Key:
        f = self.flags[i]
        return _Key(self.keys[i], self.ids[i], variant=bool(f & 1), case_forms=set(self.case_forms.get(i, ())),
                    any_case=bool(f & 2), generated=bool(f & 4), abbreviations=self.abbreviations.get(i, {}),
                    word=bool(f & 8), chemical=bool(f & 16))

    def __iter__(self) -> Iterator[_Key]:
        return (self[i] for i in range(len(self.keys)))


GAZETTEER_SOURCES = (__file__, keys_module.__file__)  # the code that derives the tables


LOWERCASE_MIN_CHARS = 9  # (capitalised-noun languages) a lower-case shared ASCII word this long stays


def _word_fits(text: str, start: int, end: int, bounds: set[int], chemical: bool, rules: WordMatching) -> bool:
    """A dictionary word stands alone: it starts and ends on word boundaries, is not the modifier of
    a longer term and (a chemical) not part of a longer chemical name."""
    if start not in bounds or end not in bounds or text.startswith(rules.continuations, end):
        return False
    if not chemical:
        return True
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    return not (before in rules.chemical_affixes or after in rules.chemical_affixes
                or (after.isascii() and after.isalnum()) or "α" <= after <= "ω")


def _lowercase_word(surface: str, generated: bool) -> bool:
    """A one-word mention in lower case in a language that capitalises its nouns is no noun (German
    ``tragen``, ``angesichts``, ``nun``, ``gen``); long ASCII words of the shared table stay (Latin and
    English terms: ``choledochus``, ``hypertensive``)."""
    if not surface[:1].islower() or any(c in surface for c in " -\n"):
        return False
    return generated or not (surface.isascii() and len(surface) >= LOWERCASE_MIN_CHARS)


class GazetteerNER:
    """Longest-leftmost dictionary matching with folding and offset mapping."""

    def __init__(self, vocab: Vocabulary, cfg: NerConfig | None = None, german_keys: bool = True) -> None:
        t0 = time.perf_counter()
        self.vocab = vocab
        self.cfg = cfg or NerConfig()
        self.german_keys = german_keys
        self.chinese_words = self.cfg.chinese_words is True
        # read from beside the vocabulary when a process saved it there (medgraph.ontology.derived)
        compiled, self.loaded = derived(vocab, "gazetteer", self._settings(), GAZETTEER_SOURCES, self._derive)
        self._keys, self._automaton = compiled
        # text in a language with language-only keys (generated forms, curated abbreviations,
        # dictionary words): the same keys plus its own, built on the first text in that language
        # (most processes never see one, and the generated forms triple the build time)
        self._by_language: dict[str, tuple[_Table, ahocorasick.Automaton]] = {}
        self._language_lock = threading.Lock()
        log.info("gazetteer: %d keys in %.1fs (%s)", len(self._keys), time.perf_counter() - t0,
                 "read" if self.loaded else "derived")

    def _settings(self) -> list[object]:
        """What the shared table depends on besides the vocabulary and the code."""
        cfg = self.cfg
        return [TABLE_FORMAT, cfg.min_term_chars, cfg.min_term_chars_zh, cfg.plural_variants, cfg.british_spellings]

    def _derive(self) -> tuple[_Table, ahocorasick.Automaton]:
        keys = self._collect()
        self._add_variants(keys)
        self._add_british(keys)
        return self._compile(keys)

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

    def _add_forms(self, keys: dict[str, _Key], pack: LanguagePack) -> None:
        """The language's generated forms: inflected names, its spellings of English names (see the
        module docstring)."""
        stop = pack.lexicon.stop_words | lang.pivot().lexicon.stop_words
        for form, ids in self.vocab.forms_index(pack.code).items():
            if form not in keys and form not in stop and len(form) >= self.cfg.min_term_chars:
                keys[form] = _Key(form, ids, variant=True, any_case=True, generated=True)

    def _add_abbreviations(self, keys: dict[str, _Key], pack: LanguagePack) -> None:
        """The short forms of the language's curated clinical abbreviation table."""
        table = pack.lexicon.abbreviations
        for short, row in (table.read() if table is not None else {}).items():
            if row.mesh_id not in self.vocab:
                continue
            key = match_key(short)
            entry = keys.get(key)
            # a copy of an existing key: the shared table's entries are shared, never changed
            entry = (_Key(key, (row.mesh_id,), generated=True) if entry is None
                     else replace(entry, abbreviations=dict(entry.abbreviations)))
            entry.abbreviations[unicodedata.normalize("NFKC", short)] = row.mesh_id
            keys[key] = entry

    @staticmethod
    def _compile(keys: dict[str, _Key]) -> tuple[_Table, ahocorasick.Automaton]:
        """The key table (sorted by key) and its automaton (value: table index, padded length)."""
        table: list[_Key] = []
        automaton = ahocorasick.Automaton()
        for key in sorted(keys):
            padded = (" " if not is_cjk(key[0]) else "") + key + (" " if not is_cjk(key[-1]) else "")
            automaton.add_word(padded, (len(table), len(padded)))
            table.append(keys[key])
        automaton.make_automaton()
        return _Table(table), automaton

    def _add_words(self, keys: dict[str, _Key], pack: LanguagePack) -> None:
        """The language's dictionary words in its pack's MeSH trees (see the module docstring)."""
        rules = pack.lexicon.dictionary_words
        if rules is None:
            return
        for key, ids in self.vocab.dictionary_words(pack.code).items():
            entity = self.vocab.get(ids[0])
            if key in keys or entity is None or not self._long_enough(key):
                continue
            if any(t.startswith(rules.trees) for t in entity.tree_numbers):
                chemical = any(t.startswith("D") for t in entity.tree_numbers)
                keys[key] = _Key(key, ids, variant=True, any_case=True, word=True, chemical=chemical)

    def _extensions(self, pack: LanguagePack) -> list[Callable[[dict[str, _Key], LanguagePack], None]]:
        """The additions to the shared keys for text in ``pack``'s language, in order."""
        out: list[Callable[[dict[str, _Key], LanguagePack], None]] = []
        if self.german_keys and pack.lexicon.generates_forms:
            out.append(self._add_forms)
        if self.german_keys and pack.lexicon.abbreviations is not None:
            out.append(self._add_abbreviations)
        if self.chinese_words and pack.lexicon.dictionary_words is not None and self.vocab.dictionary_words(pack.code):
            out.append(self._add_words)
        return out

    def _table(self, language: str) -> tuple[_Table, ahocorasick.Automaton]:
        """The keys and automaton for text in ``language`` (with language-only keys: built on first use)."""
        pack = lang.get_or_pivot(language)
        extensions = self._extensions(pack)
        if not extensions:
            return self._keys, self._automaton
        if language not in self._by_language:
            with self._language_lock:
                if language not in self._by_language:
                    t0 = time.perf_counter()

                    def derive() -> tuple[_Table, ahocorasick.Automaton]:
                        keys = {entry.key: entry for entry in self._keys}  # the shared table, plus:
                        for extend in extensions:
                            extend(keys, pack)
                        return self._compile(keys)

                    if lang.is_builtin(pack):  # its rules are files of medgraph/lang: kept beside the vocabulary
                        settings = [*self._settings(), self.german_keys, self.chinese_words, len(extensions)]
                        compiled, _ = derived(self.vocab, f"gazetteer-{pack.code}", settings,
                                              [*GAZETTEER_SOURCES, *lang_sources()], derive)
                    else:  # a pack registered from elsewhere: its own, every time
                        compiled = derive()
                    self._by_language[language] = compiled
                    log.info("gazetteer, %s keys: %d in %.1fs", language, len(compiled[0]), time.perf_counter() - t0)
        return self._by_language[language]

    def for_queries(self) -> GazetteerNER:
        """This gazetteer as question analysis uses it: with the dictionary words (Chinese) when
        ``chinese_words`` is ``"queries"`` (a copy sharing every table but those of the languages
        with dictionary words), else itself."""
        if self.cfg.chinese_words != "queries" or self.chinese_words:
            return self
        twin = copy.copy(self)
        twin.chinese_words = True
        twin._by_language = {code: table for code, table in self._by_language.items()
                             if lang.get_or_pivot(code).lexicon.dictionary_words is None}
        twin._language_lock = threading.Lock()
        return twin

    def _reading(self, entry: _Key, surface: str, pack: LanguagePack) -> tuple[str, str, float] | None:
        """(MeSH ID, method, score) of a matched key in text of ``pack``'s language, or None when the
        match is not accepted (a table holds only its own language's language-only keys)."""
        if entry.abbreviations:
            mesh_id = entry.abbreviations.get(unicodedata.normalize("NFKC", surface))
            if mesh_id is not None:
                return mesh_id, "abbreviation", SCORE_GERMAN_ABBREVIATION
        if not entry.ids or not self._accept(entry, surface, pack):
            return None
        if pack.lexicon.capitalised_nouns and _lowercase_word(surface, entry.generated):
            return None
        if entry.variant:
            return entry.ids[0], "normalised", SCORE_VARIANT
        return entry.ids[0], "exact", SCORE_EXACT

    def _accept(self, entry: _Key, surface: str, pack: LanguagePack) -> bool:
        if entry.case_forms and unicodedata.normalize("NFKC", surface) in entry.case_forms:
            return True
        if not entry.any_case:
            return False
        if entry.key in lang.pivot().lexicon.stop_words or entry.key in pack.lexicon.stop_words:
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

    def find(self, text: str, language: str = lang.PIVOT) -> list[Mention]:
        """Longest-leftmost non-overlapping dictionary mentions in ``text``."""
        table, automaton = self._table(language)
        pack = lang.get_or_pivot(language)
        words = pack.lexicon.dictionary_words
        candidates = sorted(self._spans(text, automaton), key=lambda c: (c[0], c[0] - c[1]))
        mentions: list[Mention] = []
        last_end = -1
        bounds: set[int] | None = None
        for start, end, kid in candidates:
            if start < last_end:
                continue
            surface = text[start:end]
            entry = table[kid]
            reading = self._reading(entry, surface, pack)
            if reading is None:
                continue
            if entry.word and words is not None:
                bounds = words.boundaries(text) if bounds is None else bounds
                if not _word_fits(text, start, end, bounds, entry.chemical, words):
                    continue
            mesh_id, method, score = reading
            mentions.append(
                Mention(start, end, surface, mesh_id, self.vocab.category(mesh_id), method, score)
            )
            last_end = end
        return mentions
