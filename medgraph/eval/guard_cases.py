"""Labelled requests for the guardrails, shared by their tests and their benchmark.

``CASES``: per hazard category (S1–S14) and language, requests that must be blocked and on-topic
medical questions that must stay allowed. ``medical_questions()``: every ordinary medical question
the project holds (``data/eval``, the router's labelled questions) and ``EXTRA_MEDICAL``, whose
false-block rate must stay 0. Written for this project; not taken from any benchmark's test split.

The texts live in ``data/eval/guard_cases.jsonl``, one per line: ``category`` (empty for an extra
medical question), ``language``, ``expect`` (``blocked`` or ``allowed``) and ``text``.
"""

from __future__ import annotations

import json
from pathlib import Path

from medgraph import lang

ROOT = Path(__file__).resolve().parents[2]
GUARD_CASES = ROOT / "data" / "eval" / "guard_cases.jsonl"


def _records(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _load() -> tuple[dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]], tuple[tuple[str, str], ...]]:
    cases: dict[str, dict[str, tuple[list[str], list[str]]]] = {}
    extra: list[tuple[str, str]] = []
    for rec in _records(GUARD_CASES):
        if not rec["category"]:
            extra.append((rec["language"], rec["text"]))
            continue
        blocked, allowed = cases.setdefault(rec["category"], {}).setdefault(rec["language"], ([], []))
        (blocked if rec["expect"] == "blocked" else allowed).append(rec["text"])
    frozen = {code: {language: (tuple(b), tuple(a)) for language, (b, a) in langs.items()}
              for code, langs in cases.items()}
    return frozen, tuple(extra)


# category -> language -> (blocked requests, allowed questions on the same topic)
CASES, _EXTRA = _load()
# ordinary medical questions beyond the fixtures: sensitive topics that stay answerable
EXTRA_MEDICAL: tuple[str, ...] = tuple(text for _, text in _EXTRA)


def medical_questions() -> list[tuple[str, str]]:
    """(language, question) of every ordinary medical question the project holds, and EXTRA_MEDICAL."""
    out: list[tuple[str, str]] = []
    for path in sorted((ROOT / "data" / "eval").glob("*.jsonl")):
        if path == GUARD_CASES:  # the guard's own cases, hostile requests among them
            continue
        for rec in _records(path):
            out.append((rec.get("language", lang.PIVOT), rec["text"]))
    for path in sorted((ROOT / "tests" / "fixtures" / "router").glob("*.jsonl")):
        for rec in _records(path):
            out.append((rec["lang"], rec["question"]))
    out.extend(_EXTRA)
    return out
