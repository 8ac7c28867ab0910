"""The MeSH vocabulary: descriptors (``Entity``), their surface forms, and lookup indices.

Input: built by ``medgraph.ontology.build.build_vocabulary`` or read with ``Vocabulary.load``.
Output: ``entities`` (MeSH ID → ``Entity`` with per-language names), ``terms`` (every surface form
with language, rank and mined count), and two lookup indices used by NER and linking:
``exact_index`` (``match_key`` → ranked MeSH IDs) and ``norm_index`` (``norm_key`` → ranked IDs),
plus ``surface_table`` (``match_key`` → acronym spellings, and whether a non-acronym surface
shares the key) which the gazetteer uses for case-sensitive acronyms, and ``german_index``
(generated German forms → MeSH IDs: inflected German names and German spellings of English
Latin/Greek names, ``medgraph.lang.de.morphology``; forms that are already keys, stop words or shared by
two descriptors are left out), which the gazetteer and the linker use for German text only. German
dictionary words (``RANK_DICTIONARY``, the ``ding`` source) are in ``german_index`` only, with their
inflections, never in the three shared lookups; Chinese ones (the ``cedict`` source) are in
``chinese_words`` only (derived from the terms on first use, not saved). The other four are computed
at build time and saved with the vocabulary, with ``general_words``: German everyday nouns of the
same dictionary joined to MeSH (Ratte → Rats), which only the linker reads, for German spans it is
given.

On disk (``save(dir)``): ``vocab.pkl`` (one pickle holding entities, terms and both indices; loads
in about a second for the full MeSH) and ``manifest.json`` (sources, counts per language).
"""

from __future__ import annotations

import json
import logging
import pickle
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
FORMAT_VERSION = 13  # bump when keys, indices or the pickle layout change (12: glossary.pkl beside it; 13: its medical senses)

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


# German forms never generated: generic words that are also MeSH names (the gazetteer's English
# stop list covers the English spellings they come from), and false friends, whose German
# spelling means something else in a clinical letter (Ambulanz: outpatient clinic, not ambulance;
# Kultur: a microbial culture, not MeSH Culture; Plastik: a surgical repair; Projektion: an imaging
# projection, not the defence mechanism)
GERMAN_FORM_STOP = frozenset(
    "patienten patient therapie therapien diagnose diagnosen analyse analysen methode methoden studie "
    "studien kontrolle kontrollen gruppe gruppen rate raten risiko form formen art arten rat "
    "ambulanz ambulanzen kultur kulturen plastik plastiken projektion projektionen".split()
)


def build_german_index(terms: Iterable[Term], exact: Index) -> Index:
    """Generated German form → the IDs of the name it comes from (see the module docstring)."""
    from medgraph.lang.de.morphology import german_inflections, german_spellings
    from medgraph.text.stopwords import STOP_DE, STOP_EN

    found: dict[str, set[str]] = defaultdict(set)
    readings: dict[str, tuple[str, ...]] = {}
    for surface, lang, mesh_id, rank, _count in terms:
        if rank == RANK_MINED or lang not in ("de", "en") or is_acronym(surface):
            continue
        key = match_key(surface)
        ids = (mesh_id,) if rank == RANK_DICTIONARY else exact.get(key)
        if not ids or key in STOP_EN or key in STOP_DE:
            continue
        own = [key] if rank == RANK_DICTIONARY else []
        for form in own + (german_inflections(surface) if lang == "de" else german_spellings(surface)):
            if form not in exact and form not in GERMAN_FORM_STOP and form not in STOP_DE:
                found[form].add(ids[0])
                readings.setdefault(form, ids)
    return {form: readings[form] for form, first in found.items() if len(first) == 1}


@dataclass
class Vocabulary:
    entities: dict[str, Entity]
    terms: list[Term]
    manifest: dict[str, Any] = field(default_factory=dict)
    _exact: Index | None = field(default=None, repr=False)
    _norm: Index | None = field(default=None, repr=False)
    _surfaces: SurfaceTable | None = field(default=None, repr=False)
    _german: Index | None = field(default=None, repr=False)
    directory: str = ""  # where it was loaded from ("" when built in memory): derived caches go there
    # German everyday words from a general dictionary (``match_key`` → descriptor): read only by the
    # linker, for a German span it is given (``Linker.general``), never by the gazetteer
    general_words: Index = field(default_factory=dict, repr=False)
    _chinese: Index | None = field(default=None, repr=False)
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
        """The terms every language's lookups use: all but the dictionary words (German and Chinese
        text only)."""
        return [t for t in self.terms if t[3] != RANK_DICTIONARY]

    @property
    def surface_table(self) -> SurfaceTable:
        if self._surfaces is None:
            self._surfaces = build_surface_table(self.shared_terms())
        return self._surfaces

    @property
    def german_index(self) -> Index:
        if self._german is None:
            self._german = build_german_index(self.terms, self.exact_index)
        return self._german

    @property
    def chinese_words(self) -> Index:
        """Chinese dictionary words (``cedict``; ``match_key`` → descriptor): linked in Chinese spans
        and matched by the gazetteer in Chinese text on word boundaries only."""
        if self._chinese is None:
            words = [t for t in self.terms if t[3] == RANK_DICTIONARY and t[1] == "zh"]
            self._chinese = build_index(words, match_key)
        return self._chinese

    @property
    def glossary(self) -> Glossary:
        """The German and Chinese word glossary for query translation (``medgraph.ontology.glossary``):
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
            "german": self.german_index,
            "general": self.general_words,
        }
        tmp = out / "vocab.pkl.tmp"
        with open(tmp, "wb") as fh:
            pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(out / "vocab.pkl")
        (out / "manifest.json").write_text(json.dumps(self.manifest, indent=2, ensure_ascii=False))
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
        vocab = cls(
            entities, state["terms"], manifest, state["exact"], state["norm"], state["surfaces"], state["german"], str(src),
            state["general"],
        )  # chinese_words is derived from the terms on first use
        log.info("loaded vocabulary %s: %d entities in %.2fs", src, len(entities), time.perf_counter() - t0)
        return vocab

    @staticmethod
    def exists(directory: str | Path) -> bool:
        return (Path(directory) / "vocab.pkl").is_file()
