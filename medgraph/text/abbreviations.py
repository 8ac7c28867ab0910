"""In-document abbreviation definitions (Schwartz & Hearst, PSB 2003).

Input: a document or chunk text. Output: ``Abbreviation`` records for every
``long form (SF)`` pattern whose short form's characters appear, in order, in the long form,
with the first SF character starting a word of the long form; e.g.
``"acute myocardial infarction (AMI)"`` → ``AMI`` = ``acute myocardial infarction``.
``abbreviation_map`` gives short form → long form (first definition wins).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_PAREN = re.compile(r"\(([^()]{1,40})\)")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Abbreviation:
    short: str
    long: str
    long_start: int
    long_end: int
    short_start: int


def _valid_short(sf: str) -> bool:
    if not (2 <= len(sf) <= 10) or len(sf.split()) > 2:
        return False
    if not sf[0].isalnum() or not any(c.isalpha() for c in sf):
        return False
    return not (sf.islower() and len(sf) > 5)


def best_long_form(short: str, long: str) -> str | None:
    """The shortest suffix of ``long`` that explains ``short`` (SH's core), or None."""
    s_idx, l_idx = len(short) - 1, len(long) - 1
    while s_idx >= 0:
        c = short[s_idx].lower()
        if not c.isalnum():
            s_idx -= 1
            continue
        while (l_idx >= 0 and long[l_idx].lower() != c) or (
            s_idx == 0 and l_idx > 0 and long[l_idx - 1].isalnum()
        ):
            l_idx -= 1
        if l_idx < 0:
            return None
        l_idx -= 1
        s_idx -= 1
    start = long.rfind(" ", 0, l_idx + 1) + 1
    result = long[start:]
    if len(result) <= len(short) or short.lower() in result.lower().split():
        return None
    return result


def _window(text: str, paren_start: int, short: str) -> tuple[str, int]:
    """The up-to ``min(|SF|+5, 2|SF|)`` words before the parenthesis, within the sentence."""
    head = text[:paren_start]
    cut = max(head.rfind(". "), head.rfind("; "), head.rfind("("), head.rfind(")"), head.rfind(": "))
    head_start = cut + 1 if cut >= 0 else 0
    words = list(_WORD.finditer(head, head_start))
    limit = min(len(short) + 5, 2 * len(short))
    words = words[-limit:]
    if not words:
        return "", paren_start
    start = words[0].start()
    return text[start:paren_start].rstrip(), start


def find_abbreviations(text: str) -> list[Abbreviation]:
    """All ``long form (SF)`` definitions in ``text``."""
    if "(" not in text:
        return []
    found: list[Abbreviation] = []
    for m in _PAREN.finditer(text):
        short = re.split(r"[;,] ", m.group(1))[0].strip()
        if not _valid_short(short):
            continue
        window, start = _window(text, m.start(), short)
        long = best_long_form(short, window) if window else None
        if long is None:
            continue
        long_start = start + len(window) - len(long)
        found.append(Abbreviation(short, long, long_start, long_start + len(long), m.start(1)))
    return found


@lru_cache(maxsize=256)
def abbreviation_map(text: str) -> dict[str, str]:
    """Short form → long form for ``text`` (first definition wins); cached per text."""
    out: dict[str, str] = {}
    for abbr in find_abbreviations(text):
        out.setdefault(abbr.short, abbr.long)
    return out
