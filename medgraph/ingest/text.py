"""Small text utilities shared by the ingest stages: tokens, sentences, paragraphs, language.

Language detection is offline: py3langid (its model ships in the package) among the registered
language packs (``medgraph.lang``), with a script check first for a pack whose script identifies it. ``detect_language`` names one language for a document;
``chunk_language`` decides a chunk's language from its sentences, so a mixed-language chunk (an
English abstract quoted in a German letter) keeps its document's language unless another
language holds most of its text.

Token counts are language-aware without a model tokenizer: one token per CJK character, one per
word or number elsewhere, one per punctuation mark. That tracks subword tokenizers closely
enough to keep chunks under an embedder's window.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from medgraph import lang

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]")
_SENTENCE_END = re.compile(rf"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9{_CJK}ÄÖÜ])|(?<=[。！？；])")
_PARAGRAPH = re.compile(r"\n\s*\n")


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


@lru_cache(maxsize=8)
def _identifier(langids: tuple[str, ...]) -> Any:
    """py3langid's model (shipped in the package, ~1 s to load), restricted to ``langids``."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(langids))
    return identifier


@lru_cache(maxsize=8)
def _script_patterns(packs: tuple[lang.LanguagePack, ...]) -> tuple[tuple[str, re.Pattern[str], float], ...]:
    return tuple((p.code, re.compile(f"[{p.text.script}]"), p.text.script_share) for p in packs if p.text.script)


def detect_language(text: str, default: str = lang.PIVOT, min_confidence: float = 0.9) -> str:
    """The language of ``text`` among the registered language packs, offline.

    A pack whose script identifies it (``text.script``: Chinese's CJK ideographs) wins when that
    script makes up its ``script_share`` of the text (a mostly Chinese sentence that names a drug in
    Latin letters stays Chinese); otherwise py3langid's n-gram model decides between the packs'
    ``text.langid`` codes, and an unsure answer (probability < ``min_confidence``, e.g. a lone drug
    name) gives ``default``.
    """
    sample = text[:4000]
    if not sample.strip():
        return default
    packs = lang.packs()
    letters = len(sample.replace(" ", ""))
    for code, script, share in _script_patterns(packs):
        if len(script.findall(sample)) >= share * letters:
            return code
    by_langid = {p.text.langid: p.code for p in packs if p.text.langid}
    language, probability = _identifier(tuple(by_langid)).classify(sample)
    return by_langid.get(str(language), default) if probability >= min_confidence else default


def language_shares(text: str, default: str = lang.PIVOT) -> dict[str, float]:
    """Share of characters per language over the sentences of ``text`` (mixed-language input)."""
    shares: dict[str, float] = {}
    sentences = split_sentences(text) or [text]
    total = sum(len(s) for s in sentences) or 1
    for sentence in sentences:
        lang = detect_language(sentence, default)
        shares[lang] = shares.get(lang, 0.0) + len(sentence) / total
    return {k: round(v, 4) for k, v in sorted(shares.items(), key=lambda kv: -kv[1])}


def chunk_language(text: str, document_language: str, majority: float = 0.5) -> str:
    """A chunk's language: the document's, unless one other language holds over ``majority`` of
    its characters (sentence by sentence, ``language_shares``)."""
    shares = language_shares(text, document_language)
    if not shares:
        return document_language
    top, share = next(iter(shares.items()))
    return top if top != document_language and share > majority else document_language
