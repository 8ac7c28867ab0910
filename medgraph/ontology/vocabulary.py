"""The MeSH vocabulary: descriptors (``Entity``), their surface forms, and lookup indices.

Input: built by ``medgraph.ontology.build.build_vocabulary`` or read with ``Vocabulary.load``.
Output: ``entities`` (MeSH ID → ``Entity`` with per-language names), ``terms`` (every surface form
with language, rank and mined count), and two lookup indices used by NER and linking:
``exact_index`` (``match_key`` → ranked MeSH IDs) and ``norm_index`` (``norm_key`` → ranked IDs),
plus ``surface_table`` (``match_key`` → acronym spellings, and whether a non-acronym surface
shares the key) which the gazetteer uses for case-sensitive acronyms, and per language whose pack
generates forms (``LexiconRules.inflections`` / ``spellings``; German) ``forms_index(language)``:
generated forms → MeSH IDs (inflected names of the language, its spellings of English Latin/Greek
names, ``medgraph.lang.de.morphology``; forms that are already keys, stop words or shared by two
descriptors are left out), which the gazetteer and the linker use for text in that language only.
Dictionary words (``RANK_DICTIONARY``) of such a language (the ``ding`` source) are in its forms
index only, with their inflections, never in the three shared lookups; those of a language whose
pack matches them on word boundaries (``LexiconRules.dictionary_words``: the ``cedict`` source) are in
``dictionary_words(language)`` only (derived from the terms on first use, not saved). The other
four are computed at build time and saved with the vocabulary (the forms index under the pack's
``vocabulary_name``), with ``general_words``: German everyday nouns of the same dictionary joined to
MeSH (Ratte → Rats), which only the linker reads, for German spans it is given.

On disk (``save(dir)``): ``vocab.pkl`` (one pickle holding entities, terms and both indices; loads
in about a second for the full MeSH) and ``manifest.json`` (sources, counts per language).
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medgraph import lang
from medgraph.ontology.glossary import Glossary
from medgraph.schemas import Entity
from medgraph.text.keys import match_key, norm_key

log = logging.getLogger(__name__)

RANK_NAME = 0
RANK_SYNONYM = 1
RANK_MINED = 2
# German words from a general German–English dictionary (``ding`` source): many are also English
# or everyday German words (Operation, Station, Port, Gang), so they are kept out of the indices
# every language shares and are matched and linked in German text only, through ``german_index``
RANK_DICTIONARY = 3
FORMAT_VERSION = 16  # bump when keys, indices or the pickle layout change (12: glossary.pkl beside it; 13: its medical senses; 14: Ding alternatives split outside brackets and slashes; 15: MeSH's inverted English terms read uninverted; a join of two bare nouns keeps their order; 16: a German word's Ding glosses ranked by how many of its senses give them)

# (surface, lang, mesh_id, rank, mined count)
Term = tuple[str, str, str, int, int]
Index = dict[str, tuple[str, ...]]
SurfaceTable = dict[str, tuple[tuple[str, ...], bool]]
_ACRONYM = re.compile(r"^(?=(?:.*[A-Z]){2})[A-Z0-9\-]{2,6}$")


def is_acronym(surface: str) -> bool:
    """Short all-caps forms (``ALL``, ``AIDS``, ``5-FU``) that must match case-sensitively."""
    return bool(_ACRONYM.match(surface))


def build_surface_table(terms: Iterable[Term]) -> SurfaceTable:
    """``match_key`` → (acronym spellings, any non-acronym surface) over all terms."""
    forms: dict[str, set[str]] = defaultdict(set)
    plain: set[str] = set()
    for surface, *_ in terms:
        key = match_key(surface)
        if not key:
            continue
        if is_acronym(surface):
            forms[key].add(surface)
        else:
            plain.add(key)
    return {k: (tuple(sorted(forms.get(k, ()))), k in plain) for k in plain | set(forms)}


MINED_PRECEDENCE = 2  # a form seen this often in annotated training text outranks names


def _rank_ids(candidates: dict[str, list[int]]) -> tuple[str, ...]:
    """Order the IDs sharing a key: forms attested ``MINED_PRECEDENCE``+ times in annotated
    corpora first (usage beats nomenclature), then preferred names, then synonyms; ties by mined
    count, then ID."""

    def order(kv: tuple[str, list[int]]) -> tuple[int, int, int, str]:
        rank, count = kv[1]
        return (0 if count >= MINED_PRECEDENCE else 1, min(rank, RANK_SYNONYM), -count, kv[0])

    ordered = sorted(candidates.items(), key=order)
    return tuple(mesh_id for mesh_id, _ in ordered)


def build_index(terms: Iterable[Term], key: Callable[[str], str]) -> Index:
    """Key → ranked MeSH IDs over all terms."""
    acc: dict[str, dict[str, list[int]]] = defaultdict(dict)
    for surface, _lang, mesh_id, rank, count in terms:
        k = key(surface)
        if not k:
            continue
        slot = acc[k].setdefault(mesh_id, [rank, 0])
        slot[0] = min(slot[0], rank)
        slot[1] += count
    return {k: _rank_ids(v) for k, v in acc.items()}


def build_forms_index(terms: Iterable[Term], exact: Index, language: str) -> Index:
    """Generated form → the IDs of the name it comes from, for text in ``language``: its pack's
    inflections of the language's names (and its dictionary words as they are) and its spellings of
    the pivot language's names (see the module docstring)."""
    lexicon = lang.get(language).lexicon
    stop = lang.pivot().lexicon.stop_words | lexicon.stop_words  # the source key: neither language's stop word
    never = lexicon.form_stop_words | lexicon.stop_words
    found: dict[str, set[str]] = defaultdict(set)
    readings: dict[str, tuple[str, ...]] = {}
    for surface, term_language, mesh_id, rank, _count in terms:
        if rank == RANK_MINED or is_acronym(surface):
            continue
        if term_language == language:
            generate = lexicon.inflections
        elif term_language == lang.PIVOT:
            generate = lexicon.spellings
        else:
            continue
        key = match_key(surface)
        ids = (mesh_id,) if rank == RANK_DICTIONARY else exact.get(key)
        if not ids or key in stop:
            continue
        own = [key] if rank == RANK_DICTIONARY else []
        for form in own + (generate(surface) if generate is not None else []):
            if form not in exact and form not in never:
                found[form].add(ids[0])
                readings.setdefault(form, ids)
    return {form: readings[form] for form, first in found.items() if len(first) == 1}


def _forms_packs() -> list[lang.LanguagePack]:
    """The packs whose text gets generated forms, built-ins first."""
    return [p for p in lang.packs() if p.lexicon.generates_forms]


@dataclass
class Vocabulary:
    entities: dict[str, Entity]
    terms: list[Term]
    manifest: dict[str, Any] = field(default_factory=dict)
    _exact: Index | None = field(default=None, repr=False)
    _norm: Index | None = field(default=None, repr=False)
    _surfaces: SurfaceTable | None = field(default=None, repr=False)
    # language -> its generated forms (``forms_index``); replaced, never changed in place, when one is added
    _forms: dict[str, Index] = field(default_factory=dict, repr=False)
    directory: str = ""  # where it was loaded from ("" when built in memory): derived caches go there
    # German everyday words from a general dictionary (``match_key`` → descriptor): read only by the
    # linker, for a German span it is given (``Linker.general``), never by the gazetteer
    general_words: Index = field(default_factory=dict, repr=False)
    # language -> its dictionary words (``dictionary_words``), replaced like ``_forms``
    _words: dict[str, Index] = field(default_factory=dict, repr=False)
    _glossary: Glossary | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.entities)

    def __contains__(self, mesh_id: object) -> bool:
        return mesh_id in self.entities

    def get(self, mesh_id: str) -> Entity | None:
        return self.entities.get(mesh_id)

    def category(self, mesh_id: str) -> str:
        entity = self.entities.get(mesh_id)
        return entity.category if entity else ""

    @property
    def exact_index(self) -> Index:
        if self._exact is None:
            self._exact = build_index(self.shared_terms(), match_key)
        return self._exact

    @property
    def norm_index(self) -> Index:
        if self._norm is None:
            self._norm = build_index(self.shared_terms(), norm_key)
        return self._norm

    def shared_terms(self) -> list[Term]:
        """The terms every language's lookups use: all but the dictionary words (read in text of
        their own language only)."""
        return [t for t in self.terms if t[3] != RANK_DICTIONARY]

    @property
    def surface_table(self) -> SurfaceTable:
        if self._surfaces is None:
            self._surfaces = build_surface_table(self.shared_terms())
        return self._surfaces

    def forms_index(self, language: str) -> Index:
        """The generated forms for text in ``language`` (empty when its pack generates none)."""
        if language not in self._forms:
            index = build_forms_index(self.terms, self.exact_index, language) if (
                lang.is_known(language) and lang.get(language).lexicon.generates_forms) else {}
            self._forms = {**self._forms, language: index}
        return self._forms[language]

    def dictionary_words(self, language: str) -> Index:
        """The dictionary words of ``language`` (``match_key`` → descriptor) for a pack that indexes
        them on their own (``LexiconRules.dictionary_words``; the ``cedict`` source): linked in spans
        of that language and matched by the gazetteer in its text on word boundaries only."""
        if language not in self._words:
            words = [t for t in self.terms if t[3] == RANK_DICTIONARY and t[1] == language]
            self._words = {**self._words, language: build_index(words, match_key)}
        return self._words[language]

    @property
    def german_index(self) -> Index:
        """The generated forms of the first pack that has them (German)."""
        packs = _forms_packs()
        return self.forms_index(packs[0].code) if packs else {}

    @property
    def chinese_words(self) -> Index:
        """The dictionary words of the first pack that indexes them on their own (Chinese)."""
        code = next((p.code for p in lang.packs() if p.lexicon.dictionary_words is not None), None)
        return self.dictionary_words(code) if code is not None else {}

    @property
    def glossary(self) -> Glossary:
        """The word glossary for query translation (``medgraph.ontology.glossary``):
        built with the vocabulary, read from its directory on first use (empty without one)."""
        if self._glossary is None:
            self._glossary = Glossary.load(self.directory) if self.directory else Glossary()
        return self._glossary

    def without_mined(self) -> Vocabulary:
        """The same vocabulary minus surface forms mined from annotated corpora (for baselines)."""
        terms = [t for t in self.terms if t[3] != RANK_MINED]
        return Vocabulary(self.entities, terms, dict(self.manifest, mined_removed=True), directory=self.directory,
                          general_words=self.general_words, _glossary=self._glossary)

    def save(self, directory: str | Path) -> Path:
        """Write ``vocab.pkl`` and ``manifest.json`` into ``directory``; returns the directory."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        state = {
            "version": FORMAT_VERSION,
            "entities": [
                (e.mesh_id, e.name, e.category, e.tree_numbers, e.names) for e in self.entities.values()
            ],
            "terms": self.terms,
            "exact": self.exact_index,
            "norm": self.norm_index,
            "surfaces": self.surface_table,
            **{p.lexicon.vocabulary_name: self.forms_index(p.code) for p in _forms_packs() if p.lexicon.vocabulary_name},
            "general": self.general_words,
        }
        tmp = out / f"vocab.pkl.{os.getpid()}.tmp"  # one per process: two builds never share a file
        with open(tmp, "wb") as fh:
            pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(out / "vocab.pkl")
        manifest = out / f"manifest.json.{os.getpid()}.tmp"
        manifest.write_text(json.dumps(self.manifest, indent=2, ensure_ascii=False))
        manifest.replace(out / "manifest.json")
        if self._glossary is not None:
            self._glossary.save(out)
        return out

    @classmethod
    def load(cls, directory: str | Path) -> Vocabulary:
        """Read a vocabulary written by ``save``."""
        t0 = time.perf_counter()
        src = Path(directory)
        with open(src / "vocab.pkl", "rb") as fh:
            state = pickle.load(fh)  # noqa: S301 - our own file
        if state.get("version") != FORMAT_VERSION:
            raise ValueError(f"{src}: vocabulary format {state.get('version')} != {FORMAT_VERSION}")
        entities = {
            row[0]: Entity(mesh_id=row[0], name=row[1], category=row[2], tree_numbers=row[3], names=row[4])
            for row in state["entities"]
        }
        manifest_path = src / "manifest.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
        forms = {p.code: state[p.lexicon.vocabulary_name] for p in _forms_packs()
                 if p.lexicon.vocabulary_name and p.lexicon.vocabulary_name in state}
        vocab = cls(
            entities, state["terms"], manifest, _exact=state["exact"], _norm=state["norm"], _surfaces=state["surfaces"],
            _forms=forms, directory=str(src), general_words=state["general"],
        )  # the dictionary words are derived from the terms on first use
        log.info("loaded vocabulary %s: %d entities in %.2fs", src, len(entities), time.perf_counter() - t0)
        return vocab

    @staticmethod
    def exists(directory: str | Path) -> bool:
        return (Path(directory) / "vocab.pkl").is_file()
