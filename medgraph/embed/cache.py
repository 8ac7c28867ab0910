"""Dense vectors kept by text in a serving process: the same text is not run through the model twice.

A question is embedded by the retriever (the question and its translations) and the extractive tier
embeds the sentences of its evidence for every answer; popular passages come back question after
question, and a repeated question brings back its translations. ``CachedEmbedder(inner, rows)``
wraps any ``Embedder``: ``embed_dense`` / ``embed_query_dense`` look each text up (passages and
queries apart: e5 embeds them with different prefixes), run the model once on the misses only, in
one batch, and keep the newest ``rows`` vectors (least recently used first out; a 384-dim vector
is 1.5 KB, so 4,096 rows are 6 MB). The vectors are the model's own, read-only. Sparse vectors are
not kept (the lexical ones cost microseconds). Thread-safe: Serve runs sync methods in threads.

Served by ``make_embedder(cfg, cache_rows=serve.embedding_cache)`` in the retriever and the
extractive tier; corpus builds embed every text once and use the bare embedder.
"""

from __future__ import annotations

import numpy as np

from medgraph.embed.base import Embedder, FloatArray, GlossGroups, Languages, SparseVector
from medgraph.lru import Lru


class CachedEmbedder:
    def __init__(self, inner: Embedder, rows: int) -> None:
        if rows < 1:
            raise ValueError(f"a dense cache needs at least one row, got {rows}")
        self.inner, self.rows = inner, rows
        self._kept: Lru[tuple[bool, str], FloatArray] = Lru(rows)
        self.hits = self.misses = 0  # texts found / embedded (approximate under threads: statistics only)
        # the protocol's attributes: the inner embedder's
        self.name, self.dim = inner.name, inner.dim
        self.has_dense, self.has_sparse, self.sparse_idf = inner.has_dense, inner.has_sparse, inner.sparse_idf
        self.dense_feature_map = inner.dense_feature_map

    def embed_dense(self, texts: list[str]) -> FloatArray:
        return self._dense(texts, query=False)

    def embed_query_dense(self, texts: list[str]) -> FloatArray:
        return self._dense(texts, query=True)

    def embed_sparse(self, texts: list[str], languages: Languages = None) -> list[SparseVector]:
        return self.inner.embed_sparse(texts, languages)

    def embed_query_sparse(self, texts: list[str], languages: Languages = None) -> list[SparseVector]:
        return self.inner.embed_query_sparse(texts, languages)

    def embed_query_glossed(self, groups: list[GlossGroups], languages: Languages = None) -> list[SparseVector]:
        return self.inner.embed_query_glossed(groups, languages)

    def _dense(self, texts: list[str], query: bool) -> FloatArray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        found: dict[str, FloatArray] = {}
        for text in texts:
            row = self._kept.get((query, text))
            if row is not None:
                found[text] = row
        self.hits += sum(1 for text in texts if text in found)
        missing = sorted({text for text in texts if text not in found})
        if missing:  # one batch for the misses; other threads' hits do not wait for it
            computed = self.inner.embed_query_dense(missing) if query else self.inner.embed_dense(missing)
            self.misses += len(missing)
            for text, row in zip(missing, computed, strict=True):
                row.setflags(write=False)
                self._kept.put((query, text), row)
                found[text] = row
        return np.stack([found[text] for text in texts])  # a copy: the caller may change it
