"""Linking rules: the morphology and stop words the NER, linker and vocabulary use per language.

Every field has an empty default: a language without a feature (no compounds, no curated
abbreviations, no generated forms) leaves it unset and the consumers skip that step, so a minimal
pack still links and matches its vocabulary names exactly.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class AbbreviationRow(Protocol):
    """One row of a curated abbreviation table: the descriptor its short form names."""

    @property
    def mesh_id(self) -> str: ...


@dataclass(frozen=True)
class AbbreviationTable:
    """Clinical short forms that texts of a language use without defining them: read case-sensitively
    in text of that language only (``HI`` is Herzinsuffizienz, ``hi`` is nothing)."""

    path: Path  # the table file: its size is part of the vocabulary's fingerprint
    read: Callable[[], Mapping[str, AbbreviationRow]]  # short form -> its row (cached by the reader)
    source: str  # where the table's rows come from (the vocabulary manifest)
    licence: str  # the table's licence (the vocabulary manifest)


class CompoundKey(Protocol):
    """A key that splits compounds into parts the language's names know (``GermanLexicon``)."""

    def key(self, term: str) -> str: ...


@dataclass(frozen=True)
class WordMatching:
    """How the gazetteer matches the words of a general dictionary in unspaced text: a word stands
    alone only between word boundaries and not before a bound head, suffix or affix."""

    boundaries: Callable[[str], set[int]]  # offsets where a word of a text starts or ends (a segmenter)
    trees: tuple[str, ...] = ()  # MeSH tree prefixes of the descriptors whose words the gazetteer matches
    continuations: tuple[str, ...] = ()  # bound heads/suffixes: a word directly before one is a modifier
    chemical_affixes: frozenset[str] = frozenset()  # substituent characters around a chemical name


@dataclass(frozen=True)
class ComposeRules:
    """How a term the dictionary lacks is glossed part by part into the pivot language's names.

    A spaced language is cut into words, each a known part or a compound of two or three parts (only
    one-word names become parts); an unspaced one is segmented into known parts as a whole (every
    name becomes a part but the general dictionary's words, which would tie with the morphemes)."""

    morphemes: Mapping[str, tuple[str, ...]]  # word-formation elements -> pivot-language glosses
    part_key: Callable[[str], str]  # the key a name or part is looked up by
    dropped: frozenset[str] = frozenset()  # particles a segmentation skips (adjectival 性 / 的 / 型)
    linking_elements: tuple[str, ...] = ()  # between the parts of a compound (German Fugen: s, n, en)
    loan_spellings: Callable[[str], list[str]] | None = None  # pivot/Latin spellings of a loan word
    aside: re.Pattern[str] | None = None  # bracketed asides removed before segmenting
    run: re.Pattern[str] | None = None  # runs of the script the extractor segments into candidates
    min_candidate: int = 8  # shortest word the extractor tries as a compound (spaced languages)
    min_part: int = 3  # shortest compound part


@dataclass(frozen=True)
class LexiconRules:
    """Stop words and morphology hooks of one language for the gazetteer, the linker and the
    vocabulary build (see the module docstring: every hook is optional)."""

    stop_words: frozenset[str] = frozenset()  # folded keys never matched as entities (the pivot's: in all text)
    function_words: frozenset[str] = frozenset()  # folded words that are no part of a term
    capitalised_nouns: bool = False  # nouns are capitalised: a lower-case one-word match is no noun
    script: Callable[[str], bool] | None = None  # a surface in the language's own script (read in any text)
    forms: Callable[[str], list[str]] | None = None  # spelling variants tried when the dictionary misses
    fuzzy_forms: int = 0  # how many of ``forms`` the character n-gram step also searches
    inflections: Callable[[str], list[str]] | None = None  # generated forms of a name in this language
    spellings: Callable[[str], list[str]] | None = None  # generated spellings of a pivot-language name
    form_stop_words: frozenset[str] = frozenset()  # generated forms never kept (false friends)
    vocabulary_name: str = ""  # the saved vocabulary's name of its generated forms ("german": german_forms)
    compounds: Callable[[Iterable[str], bool], CompoundKey] | None = None  # from names; bool: full stemming
    abbreviations: AbbreviationTable | None = None  # curated short forms, read in this language's text
    base_forms: Callable[[str], list[str]] | None = None  # forms a general word's inflected key may come from
    general_words: bool = False  # the vocabulary's general-dictionary words are in this language
    dictionary_words: WordMatching | None = None  # its dictionary words: an index of their own, word-bounded
    exact_join: bool = False  # dictionary words join a descriptor by exact pivot-language matches only
    source_kinds: frozenset[str] = frozenset()  # vocabulary source kinds in this language unless they say
    conjunctions: re.Pattern[str] | None = None  # "X and Y": the first conjunct and the rest
    disease_endings: tuple[str, ...] = ()  # last-word endings of a disease name (dense re-scoring)
    compose: ComposeRules | None = None  # glossing part by part into the pivot's names

    @property
    def generates_forms(self) -> bool:
        """Whether the vocabulary generates forms for text in this language."""
        return self.inflections is not None or self.spellings is not None
