"""No module outside the language packs names a language code.

Everything language-specific lives in ``medgraph/lang`` (one pack per language); every other module
asks the registry for a text's pack and reads its sections, so a new language is one new pack plus
its data. This test reads the source (``ast``) of every module of the project outside
``medgraph/lang`` and fails on any string constant that is a built-in pack's code or one of its
record codes (``"de"``, ``"zh"``, ``"ger"``, ``"chi_sim"`` ...), wherever it stands: a dict key, a
``Literal``, a default argument, a comparison.
"""

from __future__ import annotations

import ast
from pathlib import Path

import medgraph.lang as lang

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("medgraph", "serve", "jobs")  # benchmarks measure named datasets in named languages
PACKS_DIR = REPO / "medgraph" / "lang"


def _language_codes() -> set[str]:
    found: set[str] = set()
    for pack in lang.packs():
        found |= {pack.code, *pack.record_codes, pack.html_lang}
        found |= set(pack.text.tesseract.split("+"))
    return found


def _hits(path: Path, codes: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in codes]


def test_the_code_set_is_not_empty() -> None:
    codes = _language_codes()
    assert {"en", "de", "zh", "ger", "chi_sim"} <= codes


def test_no_module_outside_the_packs_names_a_language_code() -> None:
    codes = _language_codes()
    hits = [hit for root in ROOTS for path in sorted((REPO / root).rglob("*.py"))
            if PACKS_DIR not in path.parents for hit in _hits(path, codes)]
    assert hits == [], f"{len(hits)} language codes outside medgraph/lang:\n" + "\n".join(hits)


def test_the_web_interface_names_no_language() -> None:
    """The browser gets its languages and strings from the packs (``/i18n.json``)."""
    web = REPO / "serve" / "web"
    for name in ("app.js", "i18n.js", "index.html"):
        text = (web / name).read_text(encoding="utf-8")
        for code in ("\"de\"", "\"zh\"", "'de'", "'zh'", "zh-Hans", "Deutsch", "中文"):
            assert code not in text, f"{name} names {code}"
