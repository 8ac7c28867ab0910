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
"""

from __future__ import annotations

import logging
import time
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import ahocorasick

from medgraph.config.models import NerConfig
from medgraph.extract.text import fold_for_scan, is_cjk, plural, singular
from medgraph.schemas import Mention

if TYPE_CHECKING:
    from medgraph.ontology.vocabulary import Vocabulary

log = logging.getLogger(__name__)
MIN_ACRONYM_CHARS = 3
SCORE_EXACT = 1.0
SCORE_VARIANT = 0.95
# Common or generic words that are also MeSH terms (folded keys). They are never matched as
# words (only as case-exact acronyms, e.g. "ALL"): either they are ordinary English ("lead",
# "men", "cat") or so generic that they would become hub nodes of the graph ("drug", "patients").
STOP_EN = frozenset(
    """
lead men man women woman cat cats dog dogs can may will set aim age aged time role report reports
case cases control controls method methods study studies group groups result results use rate
rates level levels effect effects association model models data risk analysis trial trials area
areas form forms face hand hands arm back head light sound heat fall rest work play energy power
need needs goal goals growth health life death weight body weight recurrence mice mouse rat rats
human humans male female patient patients child children adult adults persons population
drug drugs placebo placebos protein proteins disease diseases syndrome syndromes disorder disorders
acid acids solution solutions salt salts water tablet tablets suspension suspensions enzyme enzymes
ligand ligands antibody antibodies antigen antigens hormone hormones lipid lipids agent agents
compound compounds substance substances chemical chemicals medication medications medicine
medicines therapy therapeutics treatment prevention diagnosis signs symptoms pressure temperature
animals animal cell cells tissue tissues blood serum plasma
""".split()
)
STOP_DE = frozenset("art rat man die was hat war bad gut also fast not rest welt alter".split())


@dataclass
class _Key:
    key: str
    ids: tuple[str, ...]
    variant: bool = False
    case_forms: set[str] = field(default_factory=set)  # acronym spellings that must match exactly
    any_case: bool = False  # some non-acronym surface shares this key


class GazetteerNER:
    """Longest-leftmost dictionary matching with folding and offset mapping."""

    def __init__(self, vocab: Vocabulary, cfg: NerConfig | None = None) -> None:
        t0 = time.perf_counter()
        self.vocab = vocab
        self.cfg = cfg or NerConfig()
        self._keys: list[_Key] = []
        self._automaton = ahocorasick.Automaton()
        self._build()
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

    def _build(self) -> None:
        keys = self._collect()
        self._add_variants(keys)
        for key in sorted(keys):
            padded = (" " if not is_cjk(key[0]) else "") + key + (" " if not is_cjk(key[-1]) else "")
            self._automaton.add_word(padded, (len(self._keys), len(padded)))
            self._keys.append(keys[key])
        self._automaton.make_automaton()

    def _accept(self, entry: _Key, surface: str, language: str) -> bool:
        if entry.case_forms and unicodedata.normalize("NFKC", surface) in entry.case_forms:
            return True
        if not entry.any_case:
            return False
        if entry.key in STOP_EN or (language == "de" and entry.key in STOP_DE):
            return False
        return len(entry.key) >= self.cfg.min_term_chars or is_cjk(entry.key[0])

    def _spans(self, text: str) -> list[tuple[int, int, int]]:
        """Candidate (start, end, key index) spans on the original text."""
        scan, starts, ends = fold_for_scan(text)
        out = []
        for end_idx, (kid, length) in self._automaton.iter(scan):
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
        candidates = sorted(self._spans(text), key=lambda c: (c[0], c[0] - c[1]))
        mentions: list[Mention] = []
        last_end = -1
        for start, end, kid in candidates:
            if start < last_end:
                continue
            entry = self._keys[kid]
            surface = text[start:end]
            if not self._accept(entry, surface, language):
                continue
            mesh_id = entry.ids[0]
            mentions.append(
                Mention(
                    start,
                    end,
                    surface,
                    mesh_id,
                    self.vocab.category(mesh_id),
                    "normalised" if entry.variant else "exact",
                    SCORE_VARIANT if entry.variant else SCORE_EXACT,
                )
            )
            last_end = end
        return mentions
