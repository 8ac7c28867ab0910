"""Small text utilities shared by the ingest stages: tokens, sentences, paragraphs, language.

Token counts are language-aware without a model tokenizer: one token per CJK character, one per
word or number elsewhere, one per punctuation mark. That tracks subword tokenizers closely
enough to keep chunks under an embedder's window.
"""

from __future__ import annotations

import re

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]")
_SENTENCE_END = re.compile(rf"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9{_CJK}ÄÖÜ])|(?<=[。！？；])")
_PARAGRAPH = re.compile(r"\n\s*\n")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_GERMAN_CUES = re.compile(
    r"\b(und|der|die|das|nicht|mit|ist|ein|eine|für|bei|wird|werden|auf|den|dem|zur|zum)\b"
)
_ENGLISH_CUES = re.compile(r"\b(the|and|of|with|is|are|for|was|were|in|to|patients)\b")


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def split_sentences(text: str) -> list[str]:
    """Split on sentence-final punctuation (Latin and CJK); keeps the punctuation."""
    parts = (s.strip() for s in _SENTENCE_END.split(text))
    return [p for p in parts if p]


def split_paragraphs(text: str) -> list[str]:
    parts = (" ".join(p.split()) for p in _PARAGRAPH.split(text))
    return [p for p in parts if p]


def split_tokens_hard(text: str, max_tokens: int) -> list[str]:
    """Cut a text with no usable sentence boundary into pieces of at most ``max_tokens`` tokens."""
    spans = [m.span() for m in _TOKEN.finditer(text)]
    pieces = []
    for i in range(0, len(spans), max_tokens):
        window = spans[i : i + max_tokens]
        pieces.append(text[window[0][0] : window[-1][1]].strip())
    return [p for p in pieces if p]


def detect_language(text: str, default: str = "en") -> str:
    """Cheap offline guess among zh / de / en from script and function words."""
    sample = text[:4000]
    if not sample.strip():
        return default
    cjk = len(_CJK_CHAR.findall(sample))
    if cjk >= 0.2 * len(sample.replace(" ", "")):
        return "zh"
    lowered = sample.lower()
    german = len(_GERMAN_CUES.findall(lowered)) + 2 * sum(lowered.count(c) for c in "äöüß")
    english = len(_ENGLISH_CUES.findall(lowered))
    if german > english:
        return "de"
    return "en" if english or not cjk else default
