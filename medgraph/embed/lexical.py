"""Lexical sparse embedder: BM25 term weights over a stable hashed vocabulary.

Input: texts in any language with a pack (``medgraph.lang``; any mix), each with its language when
the caller knows it (``languages``; else it is detected per text). Output: one ``SparseVector`` per text.

Tokenisation (``tokenize``): Unicode NFKD, diacritics dropped, case folded (``ß`` -> ``ss``,
``Ü`` -> ``u``, full-width letters -> ASCII). Latin/other-script words are runs of letters and
digits; the packs' stop words are dropped; words are then stemmed with the Snowball stemmer of the
text's pack (``text.snowball``, PyStemmer: ``english`` for English and Chinese text, ``german`` for German;
"patients" -> "patient", "Patienten" -> "patient", "diseases" -> "diseas", "Zellen" -> "zell").
Chinese (CJK ideographs) gives overlapping character bigrams (a one-character run stays one
term): on 1,000 Huatuo questions searched against 8,264 answers, bigrams gave recall@1 0.348 /
recall@10 0.556, unigrams + bigrams 0.345 / 0.539 (with twice the terms), the jieba segmenter
0.320 / 0.520, jieba + bigrams 0.358 / 0.566 (not worth a dependency for +0.01).

Vocabulary: a term's index is the first 4 bytes of its BLAKE2b hash (uint32), stable across
processes and machines, so no vocabulary file is needed. Collisions are rare (about n^2 / 2^33
pairs for n distinct terms) and only merge two terms' statistics.

Weights: passages carry BM25's saturated term frequency
``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))``, where ``len`` is the number of
terms of the text and ``avg_len`` a fixed reference length (chunks are embedded in parallel
batches, without corpus statistics; chunks of <= 300 tokens with their title average ~115-125
terms on scientific abstracts). Queries carry 1.0 per unique term. Stored in a Qdrant sparse
vector with ``Modifier.IDF``, the store multiplies each query term by
``ln(1 + (N - df + 0.5) / (df + 0.5))``: the dot product is then BM25 (Lucene's IDF) with a
fixed average length. k1 = 1.2, b = 0.75 were chosen on tuning queries (docs/retrieval.md).
"""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from medgraph import lang
from medgraph.embed.base import BaseEmbedder, GlossGroups, Languages, SparseVector

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RE = re.compile(rf"[{_CJK}]")

_local = threading.local()  # PyStemmer's Stemmer objects are not thread-safe: one per thread


@lru_cache(maxsize=8)
def _stopwords(packs: tuple[lang.LanguagePack, ...]) -> frozenset[str]:
    """The lexical index's stop words: the union over the registered packs."""
    return frozenset().union(*(p.text.index_stopwords for p in packs))


def fold(text: str) -> str:
    """Case-fold and strip diacritics (NFKD, combining marks removed)."""
    if text.isascii():  # nothing to decompose (the common case, and 20x faster)
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _stemmer(language: str) -> Any:
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    algorithm = lang.get_or_pivot(language).text.snowball
    if algorithm not in stemmers:
        import Stemmer  # PyStemmer (core dependency): the Snowball stemmers, in C

        stemmers[algorithm] = Stemmer.Stemmer(algorithm, 10_000)  # with a 10k-word cache
    return stemmers[algorithm]


def stem(word: str, language: str = lang.PIVOT) -> str:
    """The Snowball stem of one folded word in ``language``; words with digits are left alone."""
    return word if not word.isalpha() else str(_stemmer(language).stemWord(word))


def text_language(text: str) -> str:
    """The language code of a text whose language the caller did not give (``detect_language``)."""
    from medgraph.ingest.text import detect_language

    return detect_language(text)


def tokenize(text: str, use_stem: bool = True, language: str | None = None) -> list[str]:
    """Index terms of ``text``: folded, stop-word-free (stemmed) words and CJK character bigrams.

    ``language``: the stemmer's language (a language pack's code); detected from ``text`` when not
    given. Stop words are those of every registered pack (``text.index_stopwords``), whatever the
    text's language, so an index built with a set of packs must be queried with the same set.
    """
    stopwords = _stopwords(lang.packs())
    folded = fold(text)
    runs = _TOKEN_RE.findall(folded)
    has_cjk = _CJK_RE.search(folded) is not None
    words = [r for r in runs if (not has_cjk or not _CJK_RE.match(r)) and r not in stopwords
             and (len(r) > 1 or r.isdigit())]
    if use_stem and words:  # words with digits ("il6", "covid19") are kept as they are
        stemmer = _stemmer(language or text_language(text))
        alpha = [i for i, w in enumerate(words) if w.isalpha()]
        for i, stemmed in zip(alpha, stemmer.stemWords([words[i] for i in alpha]), strict=True):
            words[i] = stemmed
    if not has_cjk:
        return list(words)
    # keep the order of the text: CJK runs give their bigrams where they occur
    terms: list[str] = []
    stems = iter(words)
    for run in runs:
        if _CJK_RE.match(run):  # overlapping character bigrams (a lone character stands alone)
            terms.extend(run[i : i + 2] for i in range(len(run) - 1)) if len(run) > 1 else terms.append(run)
        elif run not in stopwords and (len(run) > 1 or run.isdigit()):
            terms.append(next(stems))
    return terms


@lru_cache(maxsize=1 << 18)
def term_index(term: str) -> int:
    """Stable uint32 index of a term: the first 4 bytes of BLAKE2b (little-endian)."""
    digest = hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "little")


class LexicalEmbedder(BaseEmbedder):
    """Sparse BM25 term weights, meant for a sparse vector with Qdrant's IDF modifier."""

    name = "lexical-bm25"
    has_sparse = True
    sparse_idf = True
    language_aware = True  # takes each text's language (the stemmer's) from the caller

    def __init__(
        self, k1: float = 1.2, b: float = 0.75, avg_len: float = 120.0, use_stem: bool = True
    ) -> None:
        if k1 <= 0 or not 0 <= b <= 1 or avg_len <= 0:
            raise ValueError("need k1 > 0, 0 <= b <= 1 and avg_len > 0")
        self.k1, self.b, self.avg_len, self.use_stem = k1, b, avg_len, use_stem
        super().__init__(threads=0)  # no native thread pools involved

    def _sparse(self, texts: list[str], query: bool, languages: Sequence[str | None] | None = None) -> list[SparseVector]:
        langs = list(languages) if languages is not None else [None] * len(texts)
        if len(langs) != len(texts):
            raise ValueError(f"{len(texts)} texts but {len(langs)} languages")
        return [self._one(text, query, lang) for text, lang in zip(texts, langs, strict=True)]

    def embed_query_glossed(self, groups: list[GlossGroups], languages: Languages = None) -> list[SparseVector]:
        """Weighted query vectors of word-by-word translations: a term's weight is, summed over the
        groups, the largest weight of an alternative of that group that has the term. A source word
        with six glosses thus adds at most its own weight per term, however many glosses share it,
        and a wrong gloss weighs what one reading of one word weighs, no more."""
        langs = list(languages) if languages is not None else [None] * len(groups)
        if len(langs) != len(groups):
            raise ValueError(f"{len(groups)} translations but {len(langs)} languages")
        out = []
        for group_list, code in zip(groups, langs, strict=True):
            weights: Counter[int] = Counter()
            for group in group_list:
                best: dict[int, float] = {}
                for alternative, weight in group:
                    for term in tokenize(alternative, self.use_stem, code):
                        index = term_index(term)
                        best[index] = max(best.get(index, 0.0), weight)
                weights.update(best)
            indices = np.fromiter(weights.keys(), dtype=np.int64, count=len(weights))
            values = np.fromiter(weights.values(), dtype=np.float32, count=len(weights))
            out.append(SparseVector.from_arrays(indices, values))
        return out

    def _one(self, text: str, query: bool, language: str | None) -> SparseVector:
        terms = tokenize(text, self.use_stem, language)
        counts = Counter(term_index(t) for t in terms)
        indices = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        if query:
            values = np.ones(len(counts), dtype=np.float32)
        else:
            tf = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
            norm = self.k1 * (1.0 - self.b + self.b * len(terms) / self.avg_len)
            values = tf * (self.k1 + 1.0) / (tf + norm)
        return SparseVector.from_arrays(indices, values)
