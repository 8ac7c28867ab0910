"""Entity spans predicted by the model tier of NER, and the decoding of token-classification tags.

Input (``decode_tags``): one text, the character offsets of its word pieces, the word each piece
belongs to, and per piece the probabilities over the model's tags. Output: ``ModelSpan`` records
with offsets into that text, the model's entity type and the mean tag probability over the span.

Word-piece aggregation: a word takes the tag of its FIRST piece (the piece a BIO model is trained
on; later pieces carry no label in training) and spans from the start of its first piece to the end
of its last. Tags may be BIO, BIOES / BILOU or IO (``Disease`` with no prefix); the type after the
prefix names the entity type. Decoding is lenient, as Hugging Face's pipelines are: an ``I-X``
after ``O`` or after another type opens a span; a span closes at ``O``, at a ``B-``/``S-`` tag, at
a change of type, after an ``E-``/``L-`` tag, and at a gap of more than whitespace between words.
No torch here: the model passes (``medgraph.extract.token_ner``, ``medgraph.extract.gliner_ner``)
produce the arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

OUTSIDE = "O"
_PREFIXES = {"B", "I", "E", "S", "L", "U"}


class NerModelError(RuntimeError):
    """A model-tier NER pass cannot be built (missing directory, missing package, bad device)."""


@dataclass(frozen=True)
class ModelSpan:
    """A span a model predicts: offsets into the text, the model's label, its probability and source."""

    start: int
    end: int
    label: str
    score: float
    source: str  # "gliner" or "token"


def split_tag(tag: str) -> tuple[str, str]:
    """``("B", "Disease")`` for ``B-Disease``; ``("I", "Disease")`` for a bare IO tag; ``("O", "")``."""
    if tag in (OUTSIDE, "", "o"):
        return OUTSIDE, ""
    head, sep, rest = tag.partition("-")
    if sep and head.upper() in _PREFIXES and rest:
        return head.upper(), rest
    head, sep, rest = tag.partition("_")  # B_Disease
    if sep and head.upper() in _PREFIXES and rest:
        return head.upper(), rest
    return "I", tag


def word_pieces(
    offsets: Sequence[tuple[int, int]], word_ids: Sequence[int | None]
) -> list[tuple[int, int, int]]:
    """(first piece index, word start, word end) per word, in text order (special tokens skipped)."""
    words: list[tuple[int, int, int]] = []
    last_word: int | None = None
    for i, (word, (start, end)) in enumerate(zip(word_ids, offsets, strict=True)):
        if word is None or end <= start:
            continue
        if word == last_word:
            first, w_start, _ = words[-1]
            words[-1] = (first, w_start, end)
        else:
            words.append((i, start, end))
            last_word = word
    return words


def decode_tags(
    text: str,
    offsets: Sequence[tuple[int, int]],
    word_ids: Sequence[int | None],
    probs: npt.NDArray[np.float32],
    id2label: dict[int, str],
) -> list[ModelSpan]:
    """Entity spans of one text from per-piece tag probabilities (see the module docstring)."""
    spans: list[ModelSpan] = []
    current: tuple[int, int, str, list[float]] | None = None  # start, end, type, word scores

    def close() -> None:
        nonlocal current
        if current is not None:
            start, end, label, scores = current
            spans.append(ModelSpan(start, end, label, float(np.mean(scores)), "token"))
            current = None

    for piece, start, end in word_pieces(offsets, word_ids):
        best = int(np.argmax(probs[piece]))
        prefix, label = split_tag(id2label[best])
        score = float(probs[piece][best])
        contiguous = current is not None and not text[current[1] : start].strip()
        if prefix == OUTSIDE:
            close()
            continue
        if prefix in ("I", "E", "L") and current is not None and current[2] == label and contiguous:
            current = (current[0], end, label, [*current[3], score])
        else:
            close()
            current = (start, end, label, [score])
        if prefix in ("E", "L", "S", "U"):
            close()
    close()
    return spans


def resolve_overlaps(spans: Sequence[ModelSpan]) -> list[ModelSpan]:
    """Non-overlapping spans: longer first, then higher score, then earlier; in text order."""
    kept: list[ModelSpan] = []
    for span in sorted(spans, key=lambda s: (s.start - s.end, -s.score, s.start)):
        if not any(span.start < k.end and k.start < span.end for k in kept):
            kept.append(span)
    return sorted(kept, key=lambda s: (s.start, s.end))


def trim(text: str, span: ModelSpan) -> ModelSpan | None:
    """The span without surrounding whitespace and punctuation (``None`` when nothing is left)."""
    start, end = span.start, span.end
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not text[end - 1].isalnum():
        end -= 1
    if start >= end:
        return None
    return (
        span
        if (start, end) == (span.start, span.end)
        else ModelSpan(start, end, span.label, span.score, span.source)
    )
