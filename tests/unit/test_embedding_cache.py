"""Dense vectors kept by text (``medgraph.embed.cache``): the model runs on unseen texts only, once
per text, and every vector is the one the bare model gives, in the caller's order."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from medgraph.config.models import EmbeddingConfig
from medgraph.embed import make_embedder
from medgraph.embed.cache import CachedEmbedder
from medgraph.embed.hashing import HashingEmbedder


class Counting(HashingEmbedder):
    """The hashing embedder, counting the texts it is asked to embed (passages and queries apart)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[bool, str]] = []

    def _dense(self, texts: list[str], query: bool):  # type: ignore[no-untyped-def]
        self.seen.extend((query, t) for t in texts)
        return super()._dense(texts, query)


def test_each_text_is_embedded_once_and_vectors_match_the_model() -> None:
    inner, bare = Counting(), HashingEmbedder()
    cached = CachedEmbedder(inner, rows=100)
    texts = ["metformin lowers glucose", "fever after vaccination", "metformin lowers glucose"]
    first = cached.embed_dense(texts)
    again = cached.embed_dense(list(reversed(texts)) + ["a new sentence"])
    np.testing.assert_allclose(first, bare.embed_dense(texts), atol=1e-6)
    np.testing.assert_allclose(again, bare.embed_dense(list(reversed(texts)) + ["a new sentence"]), atol=1e-6)
    # duplicates in one call and texts seen before are not embedded again
    assert sorted(t for _, t in inner.seen) == ["a new sentence", "fever after vaccination", "metformin lowers glucose"]
    assert (cached.hits, cached.misses) == (3, 3)
    first[0, 0] = 42.0  # the caller's copy: the kept vector is unchanged
    assert cached.embed_dense(["metformin lowers glucose"])[0, 0] != 42.0


def test_queries_and_passages_are_kept_apart() -> None:
    inner = Counting()
    cached = CachedEmbedder(inner, rows=10)
    cached.embed_dense(["hypertension"])
    cached.embed_query_dense(["hypertension"])
    assert inner.seen == [(False, "hypertension"), (True, "hypertension")]


def test_least_recently_used_rows_leave_first() -> None:
    inner = Counting()
    cached = CachedEmbedder(inner, rows=2)
    cached.embed_dense(["a1", "b2"])
    cached.embed_dense(["a1"])  # a1 used again: b2 is now the oldest
    cached.embed_dense(["c3"])  # evicts b2
    inner.seen.clear()
    cached.embed_dense(["a1", "b2", "c3"])
    assert [t for _, t in inner.seen] == ["b2"]
    assert len(cached._kept) == 2


def test_threads_get_the_models_vectors() -> None:
    cached, bare = CachedEmbedder(HashingEmbedder(), rows=8), HashingEmbedder()
    texts = [f"sentence number {i}" for i in range(20)]
    errors: list[str] = []

    def work(k: int) -> None:
        for i in range(40):
            batch = [texts[(k + i + j) % 20] for j in range(3)]
            if not np.allclose(cached.embed_dense(batch), bare.embed_dense(batch), atol=1e-6):
                errors.append(f"thread {k} call {i}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(cached._kept) <= 8


def test_factory_wraps_only_when_asked_and_only_dense_embedders() -> None:
    cfg = EmbeddingConfig(dense="hashing", sparse="lexical")
    assert not isinstance(make_embedder(cfg), CachedEmbedder)
    wrapped = make_embedder(cfg, cache_rows=16)
    assert isinstance(wrapped, CachedEmbedder) and wrapped.has_sparse and wrapped.dim == 256
    assert wrapped.embed_sparse(["metformin"])[0].indices.size > 0
    with pytest.raises(ValueError, match="at least one row"):
        CachedEmbedder(HashingEmbedder(), rows=0)


def test_the_retriever_tokenises_a_passage_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reranker's lexical feature reads each passage's terms; a passage seen before is not
    tokenised again (``Retriever._terms``), and its terms are the tokenizer's."""
    from types import SimpleNamespace

    from medgraph.embed.lexical import tokenize
    from medgraph.lru import Lru
    from medgraph.retrieve import retriever as module

    calls: list[str] = []

    def counting(text: str, use_stem: bool = True, language: str | None = None) -> list[str]:
        calls.append(text)
        return tokenize(text, use_stem, language)

    monkeypatch.setattr(module, "tokenize", counting)
    holder = SimpleNamespace(_parent_terms=Lru(8))
    text = "Metformin lowered myocardial infarction in patients with diabetes."
    first = module.Retriever._terms(holder, text, "en")  # type: ignore[arg-type]
    again = module.Retriever._terms(holder, text, "en")  # type: ignore[arg-type]
    module.Retriever._terms(holder, text, "de")  # type: ignore[arg-type]  # another stemmer: its own entry
    assert first == again == frozenset(tokenize(text, language="en"))
    assert calls == [text, text]
