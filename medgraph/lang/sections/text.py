"""Text rules: how a language is detected, split into index terms, stemmed, joined and OCR'd."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TextRules:
    """``script``: a regex character class whose share of a text's characters identifies the
    language on its own (CJK ideographs for Chinese), tested before the n-gram model;
    ``script_share``: that share. ``langid``: the language's code in py3langid's model (None: the
    n-gram model never answers it). ``snowball``: the PyStemmer algorithm for words of a text in
    this language (Chinese text: its Latin-letter words are mostly English). ``index_stopwords``:
    folded function words the lexical index drops. ``word_separator``: what joins two words (" ",
    or "" in Chinese). OCR: the Tesseract, PaddleOCR and MinerU language codes.
    """

    snowball: str
    index_stopwords: frozenset[str] = frozenset()
    word_separator: str = " "
    langid: str | None = None
    script: str = ""
    script_share: float = 0.2
    tesseract: str = "eng"
    paddle: str = "en"
    mineru: str = "latin"
