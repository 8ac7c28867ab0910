"""Chinese ↔ English name pairs from the Chinese Medical Knowledge Graph (CMeKG).

Input: ``cmekg.pkl`` of the PyPI package ``PyCMeKG`` (MIT; a dict: Chinese entity name →
{predicate: [values]}), read with an unpickler that refuses every class or function reference
(plain dicts, lists and strings only).
Output: ``(zh_term, en_term, source)`` rows: each entity's name and aliases (``别称``, ``通用名``)
paired with each of its English names (``英文名`` / ``英文名称``). ``main`` writes them as the
``translation_pairs`` TSV shipped in ``medgraph/ontology/data`` (columns ``lang, term, en_term,
source``); the vocabulary build joins the English side to MeSH.

    python -m medgraph.ontology.cmekg PATH/TO/cmekg.pkl medgraph/ontology/data/cmekg_zh_en.tsv.gz
"""

from __future__ import annotations

import argparse
import gzip
import pickle
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ENGLISH_KEYS = ("英文名", "英文名称")
ALIAS_KEYS = ("别称", "通用名")
_LATIN = re.compile(r"^[A-Za-z][A-Za-z0-9 ,'()/\-]{2,80}$")
_HAN = re.compile(r"[\u4e00-\u9fff]")


class _PlainUnpickler(pickle.Unpickler):
    """Loads only built-in containers and strings: any global reference is an error."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a term file")


def load_graph(path: str | Path) -> dict[str, dict[str, list[str]]]:
    with open(path, "rb") as fh:
        data = _PlainUnpickler(fh).load()
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a dict of entities, got {type(data).__name__}")
    return data


def _values(record: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for key in keys:
        value = record.get(key)
        items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
        out.extend(v.strip() for v in items if isinstance(v, str) and v.strip())
    return out


def name_pairs(graph: dict[str, dict[str, list[str]]]) -> Iterator[tuple[str, str, str]]:
    """(Chinese name, English name, source) for every entity with a clean English name."""
    for name, record in sorted(graph.items()):
        if not isinstance(record, dict):
            continue
        english = [e for e in _values(record, ENGLISH_KEYS) if _LATIN.match(e)]
        if not english:
            continue
        chinese = [name, *(a for a in _values(record, ALIAS_KEYS) if a != name)]
        for zh in dict.fromkeys(c for c in chinese if _HAN.search(c) and len(c) <= 40):
            source = "cmekg_name" if zh == name else "cmekg_alias"
            for en in dict.fromkeys(english):
                yield zh, en, source


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="CMeKG → zh/en translation pairs (TSV, .gz allowed)")
    ap.add_argument("pickle", help="cmekg.pkl from the PyCMeKG package")
    ap.add_argument("out", help="output TSV (lang, term, en_term, source)")
    args = ap.parse_args(argv)
    rows = sorted(set(name_pairs(load_graph(args.pickle))))
    opener = gzip.open if args.out.endswith(".gz") else open
    with opener(args.out, "wt", encoding="utf-8") as fh:
        fh.write("lang\tterm\ten_term\tsource\n")
        for zh, en, source in rows:
            fh.write(f"zh\t{zh}\t{en}\t{source}\n")
    sys.stdout.write(f"{len(rows)} pairs -> {args.out}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
