"""Lexical sparse embedder: BM25 term weights over a stable hashed vocabulary.

Input: texts in English, German or Chinese (any mix). Output: one ``SparseVector`` per text.

Tokenisation (``tokenize``): Unicode NFKD, diacritics dropped, case folded (``ß`` -> ``ss``,
``Ü`` -> ``u``, full-width letters -> ASCII). Latin/other-script words are runs of letters and
digits; a small EN/DE stop-word list is dropped; words then get a light suffix stemmer
(``use_stem=True``: one plural / inflection ending is stripped, the longest of -ies -> -y, -ens,
-es, -en, -s, -e, keeping at least 3 characters and words ending in -ss / -us / -is; so
"patients" / "Patienten" -> "patient", "disease" / "diseases" -> "diseas", "Zelle" / "Zellen" ->
"zell"; the same rules run on queries and passages). Chinese (CJK ideographs) gives character unigrams and bigrams.

Vocabulary: a term's index is the first 4 bytes of its BLAKE2b hash (uint32), stable across
processes and machines, so no vocabulary file is needed. Collisions are rare (about n^2 / 2^33
pairs for n distinct terms) and only merge two terms' statistics.

Weights: passages carry BM25's saturated term frequency
``tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))``, where ``len`` is the number of
terms of the text and ``avg_len`` a fixed reference length (chunks are embedded in parallel
batches, without corpus statistics; ~100 terms fits chunks of <= 300 tokens). Queries carry
1.0 per unique term. Stored in a Qdrant sparse vector with ``Modifier.IDF``, the store multiplies
each query term by ``ln(1 + (N - df + 0.5) / (df + 0.5))``: the dot product is then BM25 with a
fixed average length.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from functools import lru_cache

import numpy as np

from medgraph.embed.base import BaseEmbedder, SparseVector

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")
_CJK_RE = re.compile(rf"[{_CJK}]")

STOPWORDS = frozenset(
    """a an and are as at be been but by for from had has have he her his if in into is it its of
    on or our she than that the their them then there these they this those to was we were what
    when which while who will with would you not no can may also after before between during
    about over under such both each other more most all any some only very
    der die das den dem des ein eine einer eines einem einen und oder aber ist sind war waren wird
    werden wurde wurden hat haben hatte mit von zu zum zur im in am an auf aus bei fur nach uber
    unter vor durch als auch nicht kein keine sich es er sie wir ihr ich du dass wie wenn so noch
    nur bis um""".split()
)
# (suffix, replacement), longest first; only the first that fits is applied.
_SUFFIXES = (("ies", "y"), ("ens", ""), ("es", ""), ("en", ""), ("s", ""), ("e", ""))
_KEEP_ENDINGS = ("ss", "us", "is")
_MIN_STEM = 3


def fold(text: str) -> str:
    """Case-fold and strip diacritics (NFKD, combining marks removed)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Light EN/DE suffix stripping; words with digits and short words are left alone."""
    if not word.isalpha() or len(word) <= _MIN_STEM or word.endswith(_KEEP_ENDINGS):
        return word
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) + len(repl) >= _MIN_STEM:
            return word[: len(word) - len(suffix)] + repl
    return word


def tokenize(text: str, use_stem: bool = True) -> list[str]:
    """Index terms of ``text``: folded, stop-word-free (stemmed) words plus CJK uni/bigrams."""
    terms: list[str] = []
    for match in _TOKEN_RE.finditer(fold(text)):
        run = match.group()
        if _CJK_RE.match(run):
            terms.extend(run)
            terms.extend(run[i : i + 2] for i in range(len(run) - 1))
        elif run not in STOPWORDS and (len(run) > 1 or run.isdigit()):
            terms.append(stem(run) if use_stem else run)
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

    def __init__(
        self, k1: float = 1.2, b: float = 0.75, avg_len: float = 100.0, use_stem: bool = True
    ) -> None:
        if k1 <= 0 or not 0 <= b <= 1 or avg_len <= 0:
            raise ValueError("need k1 > 0, 0 <= b <= 1 and avg_len > 0")
        self.k1, self.b, self.avg_len, self.use_stem = k1, b, avg_len, use_stem
        super().__init__(threads=0)  # pure Python: no native thread pools involved

    def _sparse(self, texts: list[str], query: bool) -> list[SparseVector]:
        return [self._one(text, query) for text in texts]

    def _one(self, text: str, query: bool) -> SparseVector:
        terms = tokenize(text, self.use_stem)
        counts = Counter(term_index(t) for t in terms)
        indices = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        if query:
            values = np.ones(len(counts), dtype=np.float32)
        else:
            tf = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
            norm = self.k1 * (1.0 - self.b + self.b * len(terms) / self.avg_len)
            values = tf * (self.k1 + 1.0) / (tf + norm)
        return SparseVector.from_arrays(indices, values)
