"""German clinical abbreviations that letters use without defining them.

German clinical letters also use short forms they never define (``KHK``, ``pAVK``, ``HI``).
``german_abbreviations()`` reads a small curated table of them
(``medgraph/ontology/data/de_clinical_abbreviations.tsv``: short form, MeSH ID, German long form,
English heading), which the linker and the gazetteer use for German text only and case-sensitively
(``HI`` is Herzinsuffizienz, ``hi`` is nothing).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from medgraph.lang.sections.lexicon import AbbreviationTable

GERMAN_ABBREVIATIONS = (
    Path(__file__).resolve().parents[2] / "ontology" / "data" / "de_clinical_abbreviations.tsv"
)


@dataclass(frozen=True)
class TableAbbreviation:
    """One row of the curated German table."""

    short: str
    mesh_id: str
    german: str
    heading: str


@lru_cache(maxsize=4)
def german_abbreviations(path: str | None = None) -> dict[str, TableAbbreviation]:
    """Short form (exact spelling) → its row of the curated German clinical abbreviation table."""
    out: dict[str, TableAbbreviation] = {}
    with open(path or GERMAN_ABBREVIATIONS, encoding="utf-8", newline="") as fh:
        lines = [line for line in fh if line.strip() and not line.startswith("#")]
    for rec in csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE):
        short, mesh_id = (rec.get("abbreviation") or "").strip(), (rec.get("mesh_id") or "").strip()
        if short and mesh_id:
            out.setdefault(
                short,
                TableAbbreviation(short, mesh_id, rec.get("german") or "", rec.get("mesh_heading") or ""),
            )
    return out


TABLE = AbbreviationTable(
    path=GERMAN_ABBREVIATIONS,
    read=german_abbreviations,
    source="written for this project from general German clinical usage (not from a corpus)",
    licence="Apache-2.0 (this repository)",
)
