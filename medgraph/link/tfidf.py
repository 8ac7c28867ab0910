"""Character n-gram TF-IDF nearest-name search: the linker's fuzzy fallback.

Input: the vocabulary's normalised keys (``Vocabulary.norm_index``: key → ranked MeSH IDs).
Output: for each query string, the best (key, cosine similarity) pair. Queries are normalised
with the same ``norm_key`` as the index. ~2.5 s to build for full MeSH: ``for_vocabulary`` keeps it
beside a saved vocabulary (``medgraph.ontology.derived``) for the next process. Search multiplies
the query vectors by the transposed index, touching only shared n-grams.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from medgraph.ontology.derived import derived
from medgraph.text.keys import norm_key

if TYPE_CHECKING:
    from medgraph.ontology.vocabulary import Vocabulary

log = logging.getLogger(__name__)


class CharNgramIndex:
    """TF-IDF over character n-grams (word-bounded) of normalised names."""

    def __init__(self, keys: Sequence[str], ngram: int = 3) -> None:
        # imported here: sklearn takes seconds to import, and most processes never build this index
        from sklearn.feature_extraction.text import TfidfVectorizer

        t0 = time.perf_counter()
        self.keys = list(keys)
        self._vectorizer = TfidfVectorizer(
            analyzer="char_wb", ngram_range=(ngram, ngram), dtype=np.float32, sublinear_tf=True
        )
        matrix = self._vectorizer.fit_transform(self.keys)
        self._by_feature = matrix.T.tocsr()
        log.info(
            "tf-idf index: %d names, %d %d-grams in %.1fs",
            len(self.keys),
            matrix.shape[1],
            ngram,
            time.perf_counter() - t0,
        )

    @classmethod
    def for_vocabulary(cls, vocab: Vocabulary, ngram: int = 3) -> CharNgramIndex:
        """The index of ``vocab``'s normalised keys, read from beside it when a process kept it there."""
        import sklearn

        index, _ = derived(vocab, "tfidf", [ngram, sklearn.__version__], [__file__],
                           lambda: cls(sorted(vocab.norm_index), ngram))
        return index

    def search(self, queries: Sequence[str]) -> list[tuple[str | None, float]]:
        """Best key and cosine similarity per query (``(None, 0.0)`` when nothing is shared)."""
        if not queries:
            return []
        qmat = self._vectorizer.transform([norm_key(q) for q in queries])
        scores = (qmat @ self._by_feature).tocsr()
        out: list[tuple[str | None, float]] = []
        for row in range(scores.shape[0]):
            lo, hi = scores.indptr[row], scores.indptr[row + 1]
            if lo == hi:
                out.append((None, 0.0))
                continue
            data = scores.data[lo:hi]
            cols = scores.indices[lo:hi]
            best = float(data.max())
            # deterministic tie-break: lowest index (keys are sorted) among the maxima
            col = int(cols[data >= best - 1e-6].min())
            out.append((self.keys[col], best))
        return out
