"""Build the vocabulary from the configured sources.

Input: ``VocabularyConfig`` (ordered ``sources``; see ``medgraph.ontology.sources`` for kinds).
Output: a ``Vocabulary`` whose ``manifest`` records each source (files, rows, loaded/skipped),
counts per language (MeSH IDs with at least one name in that language), per category, and the
build time. ``build_summary`` returns that manifest as a flat dict for CLIs.

Merging: descriptors are the union of IDs that received a name from any source; tree numbers are
merged; a descriptor's ``name`` is its English preferred name (first source wins). Surface forms
mined from PubTator training files are kept only for known descriptors and do not enter
``Entity.names`` (they are corpus annotations, not vocabulary names).

Translation pairs (``translation_pairs``, ``babelon``: a German or Chinese term with its English
name) are joined after every source is read: the English name's ``match_key``, else its
``norm_key``, must point to exactly one descriptor through its English names and entry terms;
the manifest's ``translation_join`` says how many pairs and terms were joined per language.

Dictionary pairs (``ding``: a German word with one English translation and a rank; ``cedict``: a
Chinese word with the English of its primary sense, joined by exact English matches only) are joined
after that, by the same English lookup, more strictly: an exact English match reads before a
normalised one, the descriptor must sit in a medical branch of MeSH (``_DICTIONARY_TREES``), a
German word takes only the descriptor of its best-ranked joined reading (a tie between two
descriptors drops the word), and never a word that an earlier source already gave another
descriptor in that language. ``dictionary_join`` counts pairs, unmatched pairs, pairs outside
medicine's branches, ambiguous and conflicting words, and the terms and IDs added. The words enter
with ``RANK_DICTIONARY``: matched and linked in German (Chinese) text only
(``medgraph.ontology.vocabulary``);
the source's entry in the manifest keeps the file's header (version, licence) as ``provenance``.
The nouns of Ding's other entries (``general``: everyday words, Ratte → rat, Frau → woman; each word
from its first entry) are joined the same way but by exact English matches only, into
``Vocabulary.general_words``, not into any name table: only the linker reads them, for a German span
it is given (``general_join`` counts them; a word that a source names or a medical entry reads is
left out).

Languages with generated forms or a curated abbreviation table (their packs' ``lexicon``: German):
the manifest's ``<vocabulary_name>_forms`` (``german_forms``) counts the generated forms of
``Vocabulary.forms_index`` (inflected German names, German spellings of English names;
``medgraph.ontology.vocabulary``) and ``<vocabulary_name>_abbreviations`` (``german_abbreviations``)
records the curated clinical abbreviation table (source, licence, rows, rows whose MeSH ID is in the
vocabulary); each table's size is part of the fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from medgraph import lang
from medgraph.config.models import MedGraphConfig, VocabularyConfig, VocabularySource
from medgraph.ontology.categories import category_from_trees
from medgraph.ontology.cedict import PACKAGE_PATH as CEDICT_PATH
from medgraph.ontology.cedict import provenance as cedict_provenance
from medgraph.ontology.ding import provenance as ding_provenance
from medgraph.ontology.glossary import SOURCES as GLOSSARY_SOURCES
from medgraph.ontology.glossary import build_glossary
from medgraph.ontology.sources import Row, read_source, resolve_paths
from medgraph.ontology.vocabulary import (
    FORMAT_VERSION,
    RANK_DICTIONARY,
    RANK_MINED,
    RANK_NAME,
    RANK_SYNONYM,
    Index,
    Term,
    Vocabulary,
)
from medgraph.schemas import Entity
from medgraph.text.keys import match_key, norm_key

log = logging.getLogger(__name__)

DING_PATH = "/usr/share/trans/de-en"  # Debian's trans-de-en (installed by `make system-deps`)


Pairs = list[tuple[str, str, str, int]]  # (lang, term, English translation, rank)


@dataclass
class _Acc:
    """Accumulates rows from all sources before entities are assembled."""

    names: dict[str, dict[str, dict[str, int]]] = field(default_factory=lambda: defaultdict(dict))
    preferred: dict[str, str] = field(default_factory=dict)
    trees: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    mined: Counter[tuple[str, str]] = field(default_factory=Counter)
    via_en: list[tuple[str, str, str]] = field(default_factory=list)  # (lang, term, English name)
    dictionary: Pairs = field(default_factory=list)
    general: Pairs = field(default_factory=list)

    def add(self, row: Row) -> None:
        if row.kind == "via_en":
            self.via_en.append((row.lang, row.value, row.en))
        elif row.kind == "dictionary":
            self.dictionary.append((row.lang, row.value, row.en, row.n))
        elif row.kind == "general":
            self.general.append((row.lang, row.value, row.en, row.n))
        elif row.kind == "tree":
            if row.value not in self.trees[row.mesh_id]:
                self.trees[row.mesh_id].append(row.value)
        elif row.kind == "mined":
            self.mined[(row.value, row.mesh_id)] += row.n
        else:
            rank = RANK_NAME if row.kind == "name" else RANK_SYNONYM
            per_lang = self.names[row.mesh_id].setdefault(row.lang, {})
            # an English heading or entry term in MeSH's inverted form ("Body, Fat") is read as it is
            # written in text ("Fat Body"): read literally it is another phrase ("body fat")
            term = uninvert(row.value) if row.lang == lang.PIVOT else row.value
            per_lang[term] = min(rank, per_lang.get(term, rank))
            if rank == RANK_NAME and row.lang == lang.PIVOT:
                self.preferred.setdefault(row.mesh_id, row.value)  # the heading as MeSH writes it


# MeSH's inverted form: two or three comma-separated parts of words only (letters, spaces, hyphens,
# apostrophes; a part with a digit or a bracket is a chemical name or a qualifier, left as it is)
_INVERTED = re.compile(r"[A-Za-z][A-Za-z' -]*(?:, [A-Za-z][A-Za-z' -]*){1,2}")


def uninvert(term: str) -> str:
    """A MeSH heading or entry term in inverted form as text writes it: "Body, Fat" → "Fat Body",
    "Leukemia, Myeloid, Acute" → "Acute Myeloid Leukemia"; any other term unchanged."""
    if _INVERTED.fullmatch(term) is None:
        return term
    parts = [p.strip() for p in term.split(",")]
    return " ".join(reversed(parts)) if all(parts) else term


EnglishKeys = tuple[dict[str, set[str]], dict[str, set[str]], dict[str, set[str]]]


def _english_keys(acc: _Acc) -> EnglishKeys:
    """``match_key``, ``norm_key`` and ordered ``norm_key`` of every English name / entry term →
    descriptor IDs (MeSH's inverted terms are read uninverted already: ``uninvert``)."""
    exact: dict[str, set[str]] = defaultdict(set)
    norm: dict[str, set[str]] = defaultdict(set)
    ordered: dict[str, set[str]] = defaultdict(set)
    for mesh_id, per_lang in acc.names.items():
        for term in per_lang.get(lang.PIVOT, {}):
            exact[match_key(term)].add(mesh_id)
            norm[norm_key(term)].add(mesh_id)
            ordered[norm_key(term, ordered=True)].add(mesh_id)
    return exact, norm, ordered


def _norm_ids(form: str, english: EnglishKeys) -> set[str]:
    """The descriptors a translation's normalised key names. Word order is ignored only where the
    form has a function word ("loss of hair" is Hair Loss); two bare nouns keep their order ("body
    fat" is not Fat Body)."""
    _, norm, ordered = english
    key = norm_key(form, ordered=True)
    if len(key.split()) == len(match_key(form).split()):  # no function word dropped
        return ordered.get(key) or set()
    return norm.get(norm_key(form)) or set()


_FORMULATION = re.compile(
    r"(?:\s+(?:for|and)?\s*(?:tablets?|capsules?|injections?|infusions?|granules?|pills?|powders?|creams?|"
    r"ointments?|gels?|syrups?|solutions?|suspensions?|drops?|sprays?|patch(?:es)?|suppositor(?:y|ies)|"
    r"oral|eye|nasal|topical|compound|enteric|coated|film|sustained|extended|controlled|release|"
    r"dispersible|chewable|effervescent|hydrochloride|sodium|potassium|sulfate|sulphate|acetate|"
    r"maleate|tartrate|citrate|mesylate|besylate|phosphate|calcium|dihydrate|for)\b)+\s*$",
    re.IGNORECASE,
)


def _english_forms(english: str) -> list[str]:
    """The English name, then without trailing dosage-form and salt words (drug product names)."""
    stripped = _FORMULATION.sub("", english.replace("-", " ")).strip()
    return [english, stripped] if stripped and stripped.lower() != english.lower() else [english]


def _lookup(english: str, keys: EnglishKeys) -> set[str]:
    for form in _english_forms(uninvert(english)):
        ids = keys[0].get(match_key(form)) or set()
        if len(ids) != 1:
            ids = _norm_ids(form, keys)
        if ids:
            return ids
    return set()


def join_translations(acc: _Acc, english: EnglishKeys) -> dict[str, dict[str, int]]:
    """Attach each translated term to the one descriptor its English name names; counts per language."""
    if not acc.via_en:
        return {}
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    joined: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for language, term, name in acc.via_en:
        stats[language]["pairs"] += 1
        ids = _lookup(name, english)
        if len(ids) != 1:
            stats[language]["ambiguous" if ids else "unmatched"] += 1
            continue
        mesh_id = next(iter(ids))
        joined[language].add((mesh_id, term))
        per_lang = acc.names[mesh_id].setdefault(language, {})
        per_lang.setdefault(term, RANK_SYNONYM)
    for language, pairs in joined.items():
        stats[language]["terms"] = len(pairs)
        stats[language]["ids"] = len({m for m, _ in pairs})
    return {language: dict(sorted(c.items())) for language, c in sorted(stats.items())}


# MeSH branches a medical dictionary word may name: anatomy, organisms, diseases, chemicals and
# drugs, techniques, psychiatry, phenomena, persons, health care. Not the disciplines (H: in a
# letter, "Verlauf" is a disease's course, not Natural History, and "Operation" a procedure, not
# General Surgery), nor the humanities, education, technology, information science, publication
# types or places (I-L, V, Z).
_DICTIONARY_TREES = ("A", "B", "C", "D", "E", "F", "G", "M", "N")
_NORM_PENALTY = 500  # within one rank, an exact English match reads before a normalised one


def _dictionary_reading(english: str, keys: EnglishKeys, exact_only: bool) -> tuple[set[str], int]:
    """The descriptors an English translation names, and the rank penalty of how it matched
    (``exact_only``: exact matches only)."""
    forms = _english_forms(uninvert(english))
    for form in forms:
        ids = keys[0].get(match_key(form)) or set()
        if len(ids) == 1:
            return ids, 0
    for form in forms if not exact_only else ():
        ids = _norm_ids(form, keys)
        if ids:
            return ids, _NORM_PENALTY
    return set(), 0


def _best_readings(
    pairs: Pairs, acc: _Acc, english: EnglishKeys, stats: dict[str, Counter[str]], exact_only: bool = False
) -> dict[tuple[str, str], set[str]]:
    """(language, term) → the descriptors of the term's best-ranked reading that names one descriptor of
    a medical branch (more than one: a tie between readings)."""
    best: dict[tuple[str, str], tuple[int, set[str]]] = {}
    for language, term, translation, rank in pairs:
        stats[language]["pairs"] += 1
        ids, penalty = _dictionary_reading(translation, english, exact_only)
        if len(ids) != 1:
            stats[language]["unmatched"] += 1
            continue
        if not any(t.startswith(_DICTIONARY_TREES) for t in acc.trees.get(next(iter(ids)), ())):
            stats[language]["outside_medicine"] += 1
            continue
        rank += penalty
        top = best.get((language, term))
        if top is None or rank < top[0]:
            best[(language, term)] = (rank, set(ids))
        elif rank == top[0]:
            top[1].update(ids)  # a tie: the word becomes ambiguous if the descriptors differ
    return {key: ids for key, (_, ids) in best.items()}


def _exact_only(language: str) -> bool:
    """Whether the dictionary of ``language`` has no subject labels (CC-CEDICT), so an English match
    must be exact, as for the general German words (a normalised key would join "element" to
    Elements): the pack's ``lexicon.exact_join``."""
    return lang.get_or_pivot(language).lexicon.exact_join


def join_dictionary(acc: _Acc, english: EnglishKeys) -> dict[str, dict[str, int]]:
    """Attach each dictionary word to the descriptor of its best-ranked joined reading."""
    if not acc.dictionary:
        return {}
    langs = {language for language, *_ in acc.dictionary}
    taken: dict[tuple[str, str], set[str]] = defaultdict(set)  # (language, match_key) → descriptors
    for mesh_id, per_lang in acc.names.items():
        for language in langs.intersection(per_lang):
            for term in per_lang[language]:
                taken[(language, match_key(term))].add(mesh_id)
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    added: dict[str, set[str]] = defaultdict(set)
    labelled = [p for p in acc.dictionary if not _exact_only(p[0])]
    unlabelled = [p for p in acc.dictionary if _exact_only(p[0])]
    readings = _best_readings(labelled, acc, english, stats)
    readings.update(_best_readings(unlabelled, acc, english, stats, exact_only=True))
    for (language, term), ids in readings.items():
        if len(ids) != 1:
            stats[language]["ambiguous"] += 1
            continue
        mesh_id = next(iter(ids))
        if taken.get((language, match_key(term)), {mesh_id}) != {mesh_id}:
            stats[language]["conflicts"] += 1
            continue
        if term not in acc.names[mesh_id].setdefault(language, {}):
            acc.names[mesh_id][language][term] = RANK_DICTIONARY
            stats[language]["terms"] += 1
            added[language].add(mesh_id)
    for language, ids in added.items():
        stats[language]["ids"] = len(ids)
    return {language: dict(sorted(c.items())) for language, c in sorted(stats.items())}


def join_general(acc: _Acc, english: EnglishKeys) -> tuple[Index, dict[str, int]]:
    """The general German dictionary words (``general`` rows) joined like ``join_dictionary`` but by
    exact English matches only (a normalised key drops function words: "lead in" would be Lead),
    into an index of their own (``match_key`` → descriptor), with its manifest counts. A word that
    any source names, or that a medical entry reads, is left to those."""
    if not acc.general:
        return {}, {}
    known = {match_key(t) for per_lang in acc.names.values() for terms in per_lang.values() for t in terms}
    known.update(match_key(term) for _, term, _, _ in acc.dictionary)
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    found: dict[str, set[str]] = defaultdict(set)
    for (language, term), ids in _best_readings(acc.general, acc, english, stats, exact_only=True).items():
        key = match_key(term)
        if len(ids) != 1:
            stats[language]["ambiguous"] += 1
        elif key in known:
            stats[language]["named"] += 1
        else:
            found[key].update(ids)  # two spellings of one key may read two descriptors
    index = {key: tuple(ids) for key, ids in found.items() if len(ids) == 1}
    words = sum(stats.values(), Counter())  # the general words' languages together (Ding's: German)
    counts = words | Counter(terms=len(index), ids=len({ids[0] for ids in index.values()}))
    return index, dict(sorted(counts.items()))


def _abbreviation_packs() -> list[lang.LanguagePack]:
    """The packs with a curated abbreviation table, built-ins first."""
    return [p for p in lang.packs() if p.lexicon.abbreviations is not None]


def config_fingerprint(cfg: VocabularyConfig) -> str:
    """Hash of the format version, the curated abbreviation tables' sizes and the source list (kinds,
    paths, flags, file sizes): a cache key."""
    tables = [p.lexicon.abbreviations.path.stat().st_size for p in _abbreviation_packs() if p.lexicon.abbreviations]
    parts: list[Any] = [FORMAT_VERSION, *tables]
    for s in cfg.sources:
        sizes = [p.stat().st_size for p in resolve_paths(s.path)]
        parts.append([s.kind, s.path, s.optional, sizes])
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


def _load_source(acc: _Acc, source: VocabularySource) -> dict[str, Any]:
    info: dict[str, Any] = {"kind": source.kind, "path": source.path, "optional": source.optional}
    files = resolve_paths(source.path)
    if not files:
        if not source.optional:
            raise FileNotFoundError(f"required vocabulary source {source.kind} not found: {source.path}")
        log.info("vocabulary source %s skipped (optional, not found): %s", source.kind, source.path)
        return info | {"status": "skipped", "rows": 0}
    rows = 0
    for row in read_source(source):
        acc.add(row)
        rows += 1
    log.info("vocabulary source %s: %d rows from %d file(s)", source.kind, rows, len(files))
    if source.kind == "ding":
        with open(files[0], encoding="utf-8") as fh:
            info["provenance"] = ding_provenance(fh)
    elif source.kind == "cedict":
        info["provenance"] = cedict_provenance(files[0])
    return info | {"status": "loaded", "rows": rows, "files": [str(f) for f in files]}


def _ordered_names(per_lang: dict[str, dict[str, int]]) -> dict[str, list[str]]:
    return {
        language: [t for t, _ in sorted(terms.items(), key=lambda kv: kv[1])]
        for language, terms in sorted(per_lang.items())
    }


def _assemble(acc: _Acc) -> tuple[dict[str, Entity], list[Term]]:
    entities: dict[str, Entity] = {}
    terms: list[Term] = []
    for mesh_id in sorted(acc.names):
        names = _ordered_names(acc.names[mesh_id])
        name = acc.preferred.get(mesh_id) or next(iter(n[0] for n in names.values() if n), mesh_id)
        trees = sorted(acc.trees.get(mesh_id, []))
        entities[mesh_id] = Entity(mesh_id, name, category_from_trees(trees), trees, names)
        for language, per_lang in acc.names[mesh_id].items():
            terms.extend((t, language, mesh_id, rank, 0) for t, rank in per_lang.items())
    for (surface, mesh_id), n in sorted(acc.mined.items()):
        if mesh_id in entities:
            terms.append((surface, lang.PIVOT, mesh_id, RANK_MINED, n))
    return entities, terms


def _counts(entities: dict[str, Entity], terms: list[Term]) -> dict[str, Any]:
    ids_by_lang: Counter[str] = Counter()
    for e in entities.values():
        ids_by_lang.update(language for language, names in e.names.items() if names)
    return {
        "entities": len(entities),
        "terms": len(terms),
        "mined_terms": sum(1 for t in terms if t[3] == RANK_MINED),
        "terms_by_lang": dict(sorted(Counter(t[1] for t in terms).items())),
        "ids_with_name_by_lang": dict(sorted(ids_by_lang.items())),
        "categories": dict(sorted(Counter(e.category for e in entities.values()).items())),
    }


def build_vocabulary(cfg: VocabularyConfig) -> Vocabulary:
    """Read every configured source in order and assemble the vocabulary."""
    t0 = time.perf_counter()
    acc = _Acc()
    sources = [_load_source(acc, s) for s in cfg.sources]
    english = _english_keys(acc)  # once for both joins: they add no English terms
    translation_join = join_translations(acc, english)
    dictionary_join = join_dictionary(acc, english)
    general_words, general_join = join_general(acc, english)
    entities, terms = _assemble(acc)
    manifest: dict[str, Any] = {
        "sources": sources,
        "translation_join": translation_join,
        "dictionary_join": dictionary_join,
        "general_join": general_join,
        "fingerprint": config_fingerprint(cfg),
        **_counts(entities, terms),
    }
    vocab = Vocabulary(entities, terms, manifest, general_words=general_words)
    vocab._glossary = build_glossary(
        ((s.kind, f) for s in cfg.sources if s.kind in GLOSSARY_SOURCES for f in resolve_paths(s.path)),
        entities.values())
    manifest["glossary"] = vocab._glossary.manifest
    _ = vocab.exact_index, vocab.norm_index, vocab.surface_table
    for pack in lang.packs():
        name = pack.lexicon.vocabulary_name or pack.code
        if pack.lexicon.generates_forms:
            manifest[f"{name}_forms"] = forms_summary(vocab, pack)
        if pack.lexicon.abbreviations is not None:
            manifest[f"{name}_abbreviations"] = abbreviations_summary(vocab, pack)
    manifest["build_seconds"] = round(time.perf_counter() - t0, 2)
    log.info(
        "built vocabulary: %d entities, %d terms in %.1fs",
        len(entities),
        len(terms),
        manifest["build_seconds"],
    )
    return vocab


def forms_summary(vocab: Vocabulary, pack: lang.LanguagePack) -> dict[str, Any]:
    """How many generated forms the vocabulary holds for ``pack``'s language, for how many
    descriptors, and the functions that generate them."""
    index = vocab.forms_index(pack.code)
    hooks = [f for f in (pack.lexicon.inflections, pack.lexicon.spellings) if f is not None]
    return {
        "forms": len(index),
        "ids": len({ids[0] for ids in index.values()}),
        "rules": f"{hooks[0].__module__} ({', '.join(f.__name__ for f in hooks)})",
    }


def abbreviations_summary(vocab: Vocabulary, pack: lang.LanguagePack) -> dict[str, Any]:
    """Provenance of ``pack``'s curated clinical abbreviation table and how much of it resolves."""
    spec = pack.lexicon.abbreviations
    if spec is None:
        return {}
    table = spec.read()
    return {
        "path": f"pkg:{spec.path.name}",
        "source": spec.source,
        "licence": spec.licence,
        "rows": len(table),
        "resolved": sum(1 for row in table.values() if row.mesh_id in vocab),
    }


def build_summary(vocab: Vocabulary) -> dict[str, Any]:
    """Counts and sources of a built vocabulary (the manifest minus file lists)."""
    m = vocab.manifest
    keys = (
        "entities",
        "terms",
        "mined_terms",
        "terms_by_lang",
        "ids_with_name_by_lang",
        "translation_join",
        "dictionary_join",
        "general_join",
        *(f"{p.lexicon.vocabulary_name or p.code}_{part}" for p in lang.packs() for part in ("forms", "abbreviations")),
        "categories",
        "build_seconds",
        "fingerprint",
    )
    summary = {k: m[k] for k in keys if k in m}
    summary["sources"] = [{k: v for k, v in s.items() if k != "files"} for s in m.get("sources", [])]
    return summary


def load_or_build(cfg: VocabularyConfig, rebuild: bool = False) -> Vocabulary:
    """Load the vocabulary cached at ``cfg.path`` when its fingerprint matches, else build and save."""
    if not rebuild and Vocabulary.exists(cfg.path):
        try:
            vocab = Vocabulary.load(cfg.path)
        except ValueError as exc:  # written by another version of the vocabulary format
            log.info("vocabulary at %s cannot be read (%s); rebuilding", cfg.path, exc)
        else:
            if vocab.manifest.get("fingerprint") == config_fingerprint(cfg):
                return vocab
            log.info("vocabulary at %s is stale; rebuilding", cfg.path)
    vocab = build_vocabulary(cfg)
    vocab.save(cfg.path)
    vocab.directory = str(cfg.path)
    return vocab


def default_sources(shared_data: str | None = None) -> list[VocabularySource]:
    """Shipped files first, then the optional shared data sets (``$MEDGRAPH_SHARED_DATA`` or
    ``../shared/data``): the same list as ``configs/local.yaml``."""
    d = (shared_data or os.environ.get("MEDGRAPH_SHARED_DATA") or "../shared/data").rstrip("/")
    s = VocabularySource
    return [
        s(kind="mesh_entry_terms", path="pkg:mesh_entry_terms.tsv.gz"),
        s(kind="mesh_tree", path="pkg:mesh_tree_numbers.tsv.gz"),
        s(kind="multilingual_terms", path="pkg:seed_terms.tsv"),
        s(kind="mesh_names", path=f"{d}/mesh/mesh2015_descriptor_names.tsv", optional=True),
        s(kind="multilingual_terms", path=f"{d}/mesh_multilingual/terms.part*.tsv", optional=True),
        s(kind="translation_pairs", path="pkg:cmekg_zh_en.tsv.gz"),
        s(kind="babelon", path=f"{d}/hpo_translations/hp-*.babelon.tsv", optional=True),
        s(kind="ding", path=os.environ.get("MEDGRAPH_DING_DICT") or DING_PATH, optional=True),
        s(kind="cedict", path=os.environ.get("MEDGRAPH_CEDICT") or CEDICT_PATH, optional=True),
        s(kind="pubtator", path=f"{d}/bc5cdr/CDR_TrainingSet.PubTator.txt", optional=True),
        s(kind="pubtator", path=f"{d}/ncbi_disease/NCBItrainset_corpus.txt", optional=True),
    ]


def resolve_vocabulary(
    vocab_dir: str | None, config_path: str | None, overrides: list[str] | None = None
) -> tuple[Vocabulary, MedGraphConfig]:
    """The vocabulary for a CLI: ``vocab_dir`` if given (with the built-in NER/linking defaults
    unless ``config_path`` is given too), else built from the config (default
    ``configs/local.yaml`` when present, else ``default_sources``) and cached at its path."""
    from medgraph.config import load_config

    if config_path is None and not vocab_dir and os.path.isfile("configs/local.yaml"):
        config_path = "configs/local.yaml"
    cfg = load_config(config_path, overrides or [])
    if not cfg.vocabulary.sources:
        vocabulary = VocabularyConfig(path=cfg.vocabulary.path, sources=default_sources())
        cfg = cfg.model_copy(update={"vocabulary": vocabulary})
    if vocab_dir:
        return Vocabulary.load(vocab_dir), cfg
    return load_or_build(cfg.vocabulary), cfg
