"""The docs stay true to the tree: every linked file and heading exists, and every command shown
runs something that exists.

Checked in README.md and docs/*.md:
- Markdown links to local files resolve (relative to the document), and a ``#anchor`` names a
  heading of the target document (GitHub's slug rule).
- ``python -m <module>`` / ``python <script>.py`` commands (with or without ``.venv/bin/``, in
  code blocks and inline code) name a module or script of this repository or an installed
  package, and every ``--flag`` written after a repository module is defined in that module's
  source (or its package's, for a ``__main__`` that delegates).
- ``make <target>`` names a target of the Makefile.

Commands are read from code: fenced blocks and inline code spans.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
COMMAND = re.compile(r"(?:^|[\s`(])(?:\S*/)?python3?\s+(-m\s+[\w.]+|[\w./-]+\.py)([^`\n]*)")
MAKE = re.compile(r"(?:^|[\s`(])make\s+([a-z][\w-]*)")
FLAG = re.compile(r"(?<![\w-])(--[a-z][\w-]*)")


def _slug(heading: str) -> str:
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    in_code = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        slug = _slug(line.lstrip("#"))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def _code(path: Path) -> str:
    """The document's code: fenced blocks (continuation lines joined) and inline code spans."""
    text = path.read_text()
    blocks = re.findall(r"(?ms)^```[^\n]*\n(.*?)^```", text)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"(?ms)^```.*?^```", "", text))
    return "\n".join(blocks + inline).replace("\\\n", " ")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_link_resolves(doc: Path) -> None:
    broken = []
    for target in LINK.findall(doc.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        dest = (doc.parent / file).resolve() if file else doc
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(target)
    assert not broken, f"{doc.name}: links to nothing: {broken}"


OURS = ("medgraph", "jobs", "serve", "benchmarks")


def _with_imports(source: str) -> str:
    """A module's source followed by the sources of this repository's modules it imports (where
    shared options such as the jobs' ``--config`` are defined)."""
    parts = [source]
    for name in re.findall(rf"(?m)^\s*(?:from|import)\s+((?:{'|'.join(OURS)})(?:\.\w+)*)", source):
        path = REPO / Path(*name.split("."))
        if path.with_suffix(".py").is_file():
            parts.append(path.with_suffix(".py").read_text())
    return "\n".join(parts)


def _module_source(module: str) -> tuple[bool, str]:
    """(is it ours, its source text) for a module name; raises LookupError if it does not exist."""
    path = REPO / Path(*module.split("."))
    if path.with_suffix(".py").is_file():
        return True, _with_imports(path.with_suffix(".py").read_text())
    if (path / "__main__.py").is_file():
        return True, _with_imports("\n".join(p.read_text() for p in sorted(path.glob("*.py"))))
    if path.is_dir() or module.split(".")[0] in {*OURS, "tests"}:
        raise LookupError(module)
    if importlib.util.find_spec(module.split(".")[0]) is None:
        raise LookupError(module)
    return False, ""


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_command_exists_with_its_flags(doc: Path) -> None:
    problems = []
    for target, rest in COMMAND.findall(_code(doc)):
        rest = re.split(r"\s(?:#|&&|\||;)|\)|\\$", rest)[0]
        if target.startswith("-m"):
            module = target.split()[1]
            try:
                ours, source = _module_source(module)
            except LookupError:
                problems.append(f"no module {module}")
                continue
        else:
            script = REPO / target
            if not script.is_file():
                problems.append(f"no script {target}")
                continue
            ours, source = True, _with_imports(script.read_text())
        if ours:
            problems += [f"{target}: {flag} is not defined" for flag in FLAG.findall(rest) if flag not in source]
    assert not problems, f"{doc.name}: {problems}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_make_target_exists(doc: Path) -> None:
    makefile = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"(?m)^([a-z][\w-]*)\s*:(?!=)", makefile))
    missing = sorted({t for t in MAKE.findall(_code(doc)) if t not in targets})
    assert not missing, f"{doc.name}: make targets that do not exist: {missing}"
