"""Citation grounding of generated text: every sentence must end up citing passages that exist.

Input: model output (whole or as streamed deltas) and the numbered passage texts it was prompted
with (``NumberedEvidence.texts``). Output: ``GroundedSentence`` s whose citation numbers resolve to
passages, and counts of what was done:

- a sentence whose ``[N]`` markers resolve keeps them (markers naming no passage are removed);
- a sentence with no resolving marker is *repaired* when one passage contains at least
  ``min_support`` of its content terms (it then cites that passage), otherwise *dropped*;
- the caller refuses when no sentence is left.

``SentenceSplitter`` cuts a token stream into sentences without splitting "2.5 mg" or a marker
that follows the full stop ("... renal function. [2]"), so streaming and whole answers agree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from medgraph import lang
from medgraph.embed.lexical import tokenize
from medgraph.lang import LanguagePack

MARKER = re.compile(r"\[\s*(\d{1,3}(?:\s*[,;–-]\s*\d{1,3})*)\s*\]")
_MARKER_AT = re.compile(r"\s*\[\s*\d{1,3}(?:\s*[,;–-]\s*\d{1,3})*\s*\]")
_PARTIAL_MARKER = re.compile(r"\s*\[[\d,;–\-\s]*$")
_TERMINATORS = ".!?"  # a sentence ends at one of them when a space (or the end) follows
_MIN_CHARS = 4


def marker_numbers(text: str) -> list[int]:
    """Numbers named by the ``[N]``, ``[N, M]`` and ``[N-M]`` markers of ``text``, in order."""
    out: list[int] = []
    for m in MARKER.finditer(text):
        for part in re.split(r"\s*[,;]\s*", m.group(1)):
            if re.search(r"[–-]", part):
                lo, hi = (int(x) for x in re.split(r"\s*[–-]\s*", part))
                out.extend(range(lo, hi + 1) if 0 < hi - lo < 20 else [lo, hi])
            else:
                out.append(int(part))
    return list(dict.fromkeys(out))


def strip_markers(text: str) -> str:
    text = MARKER.sub("", text)
    text = re.sub(r"\s+([.,;:!?。，；：！？])", r"\1", text)
    return " ".join(text.split())


@dataclass(frozen=True)
class GroundedSentence:
    text: str  # without markers
    passages: tuple[int, ...]  # 1-based passage numbers of the NumberedEvidence
    status: str  # cited | repaired


@dataclass
class GroundingStats:
    cited: int = 0
    repaired: int = 0
    dropped: int = 0
    unresolved_markers: int = 0
    dropped_text: list[str] = field(default_factory=list)


def support(sentence: str, passage: str) -> float:
    """Share of the sentence's content terms that occur in the passage."""
    terms = set(tokenize(sentence))
    return len(terms & set(tokenize(passage))) / len(terms) if terms else 0.0


def ground_sentence(sentence: str, texts: Sequence[str], min_support: float,
                    stats: GroundingStats) -> GroundedSentence | None:
    """``sentence`` grounded in the numbered passages ``texts`` (passage N is ``texts[N - 1]``)."""
    numbers = marker_numbers(sentence)
    valid = tuple(n for n in numbers if 1 <= n <= len(texts))
    stats.unresolved_markers += len(numbers) - len(valid)
    text = strip_markers(sentence)
    if len(text) < _MIN_CHARS or not tokenize(text):
        return None  # a stray marker or punctuation: nothing to keep
    if valid:
        stats.cited += 1
        return GroundedSentence(text, valid, "cited")
    scores = [support(text, passage) for passage in texts]
    best = max(range(len(scores)), key=scores.__getitem__) if scores else -1
    if best >= 0 and scores[best] >= min_support:
        stats.repaired += 1
        return GroundedSentence(text, (best + 1,), "repaired")
    stats.dropped += 1
    stats.dropped_text.append(text)
    return None


@lru_cache(maxsize=8)
def _closing_marks(packs: tuple[LanguagePack, ...]) -> str:
    """The packs' sentence-final marks that no space follows (Chinese "。！？")."""
    return "".join(dict.fromkeys(ch for pack in packs for ch in pack.answer.closing_marks))


class SentenceSplitter:
    """Incremental sentence splitter for streamed text (markers stay with their sentence).

    A sentence ends at ".", "!" or "?" followed by a space, and at any pack's closing mark ("。").
    """

    def __init__(self) -> None:
        self.buffer = ""
        self._closing = _closing_marks(lang.packs())
        self._terminators = _TERMINATORS + self._closing

    def feed(self, delta: str) -> list[str]:
        self.buffer += delta
        return self._pop(final=False)

    def flush(self) -> list[str]:
        return self._pop(final=True)

    def _pop(self, final: bool) -> list[str]:
        out: list[str] = []
        buf, start, i = self.buffer, 0, 0
        while i < len(buf):
            ch = buf[i]
            if ch == "\n":
                out.append(buf[start:i])
                start = i = i + 1
                continue
            if ch not in self._terminators:
                i += 1
                continue
            j = i + 1
            while (m := _MARKER_AT.match(buf, j)) is not None:
                j = m.end()
            rest = buf[j:]
            if not final and (not rest.strip() or _PARTIAL_MARKER.match(rest)):
                break  # a marker may still follow this full stop
            if ch in self._closing or not rest or rest[0].isspace():
                out.append(buf[start:j])
                start = i = j
                continue
            i += 1
        if final:
            out.append(buf[start:])
            start = len(buf)
        self.buffer = buf[start:]
        return [s.strip() for s in out if s.strip()]


def ground_text(text: str, texts: Sequence[str], min_support: float) -> tuple[list[GroundedSentence], GroundingStats]:
    """A whole answer grounded sentence by sentence, as the engines ground a stream."""
    stats = GroundingStats()
    splitter = SentenceSplitter()
    kept = [g for s in (*splitter.feed(text), *splitter.flush())
            if (g := ground_sentence(s, texts, min_support, stats)) is not None]
    return kept, stats
