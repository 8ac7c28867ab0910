"""The in-process search index of Qdrant local mode gives Qdrant's own exact results, and stays fresh."""

from __future__ import annotations

import numpy as np
import pytest

from medgraph.config.models import QdrantLocalConfig
from medgraph.embed.base import SparseVector
from medgraph.schemas import Chunk
from medgraph.stores import make_vector_store
from medgraph.stores.local_index import LocalVectorIndex
from medgraph.stores.vector import QdrantVectorStore

N_POINTS, DIM, N_TERMS = 300, 16, 60
LANGS = ("en", "de", "zh")


def _chunk(i: int) -> Chunk:
    text = f"chunk {i}"
    return Chunk(f"c{i}", f"d{i // 3}", i % 3, text, ["S"], f"d{i // 3}-p", text, 2, LANGS[i % 3])


def _random_sparse(rng: np.random.Generator) -> SparseVector:
    k = int(rng.integers(1, 8))
    # a skewed term distribution, so document frequencies (and IDF) differ a lot between terms
    terms = rng.zipf(1.5, size=k) % N_TERMS
    return SparseVector.from_arrays(terms, rng.uniform(0.1, 2.0, size=k))


@pytest.fixture(params=[True, False], ids=["idf", "raw"])
def store(request: pytest.FixtureRequest) -> QdrantVectorStore:
    rng = np.random.default_rng(7)
    s = make_vector_store(QdrantLocalConfig(path=":memory:", collection="t"))
    s.ensure_collection(DIM, sparse_idf=request.param)
    chunks = [_chunk(i) for i in range(N_POINTS)]
    s.upsert(chunks, rng.normal(size=(N_POINTS, DIM)).astype(np.float32), [_random_sparse(rng) for _ in chunks])
    yield s
    s.close()


def _both(store: QdrantVectorStore, search: str, *args: object) -> tuple[list, list]:
    store.search_index = True
    fast = getattr(store, search)(*args)
    store.search_index = False
    exact = getattr(store, search)(*args)
    store.search_index = True
    return fast, exact


def _assert_same(fast: list, exact: list) -> None:
    assert fast, "the query should match something"
    assert [round(h.score, 4) for h in fast] == pytest.approx([round(h.score, 4) for h in exact], abs=2e-4)
    # same ranking, allowing swaps only between (numerically) tied scores
    for a, b in zip(fast, exact, strict=True):
        if a.chunk_id != b.chunk_id:
            assert a.score == pytest.approx(b.score, abs=2e-4)
    assert fast[0].payload["chunk_id"] == fast[0].chunk_id and "language" in fast[0].payload


@pytest.mark.parametrize("language", [None, "de", ["en", "zh"]])
def test_dense_and_sparse_match_qdrant(store: QdrantVectorStore, language: object) -> None:
    rng = np.random.default_rng(11)
    for _ in range(5):
        _assert_same(*_both(store, "search_dense", rng.normal(size=DIM).astype(np.float32), 20, language))
        query = SparseVector.from_arrays([0, 1, 2, int(rng.integers(3, N_TERMS))], [1.0, 1.0, 0.5, 1.0])
        fast, exact = _both(store, "search_sparse", query, 25, language)
        _assert_same(fast, exact)
        if language is not None:
            wanted = {language} if isinstance(language, str) else set(language)
            assert {h.payload["language"] for h in fast} <= wanted


def test_hybrid_is_rrf_of_the_two_lists(store: QdrantVectorStore) -> None:
    rng = np.random.default_rng(3)
    dense = rng.normal(size=DIM).astype(np.float32)
    sparse = SparseVector.from_arrays([0, 1, 5], [1.0, 1.0, 1.0])
    fast, exact = _both(store, "hybrid_search", dense, sparse, 10)
    assert len(fast) == len(exact) == 10
    # random weights: no ties, so the fused lists agree point for point
    assert [(h.chunk_id, round(h.score, 6)) for h in fast] == [(h.chunk_id, round(h.score, 6)) for h in exact]


def test_index_follows_writes_and_deletes(store: QdrantVectorStore) -> None:
    query = SparseVector.from_arrays([N_TERMS + 5], [1.0])  # a term no point has yet
    assert store.search_sparse(query, 5) == []
    new = Chunk("new", "dnew", 0, "new", ["S"], "dnew-p", "new", 1, "en")
    store.upsert([new], np.ones((1, DIM), dtype=np.float32), [SparseVector.from_arrays([N_TERMS + 5], [2.0])])
    assert [h.chunk_id for h in store.search_sparse(query, 5)] == ["new"]
    assert store.search_dense(np.ones(DIM, dtype=np.float32), 1)[0].chunk_id == "new"
    assert set(store.get_sparse(["new"])["new"].as_dict()) == {N_TERMS + 5}
    store.delete_documents(["dnew"])
    assert store.search_sparse(query, 5) == []
    assert "new" not in store.get_dense(["new", "c0"]) and "c0" in store.get_dense(["c0"])


def test_get_sparse_returns_the_written_weights(store: QdrantVectorStore) -> None:
    ids = ["c0", "c1", "c299", "missing"]
    fast, exact = _both(store, "get_sparse", ids)
    assert set(fast) == set(exact) == {"c0", "c1", "c299"}
    for cid in fast:
        assert fast[cid].as_dict() == pytest.approx(exact[cid].as_dict())
    dense_fast, dense_exact = _both(store, "get_dense", ids)
    for cid in dense_exact:
        np.testing.assert_allclose(dense_fast[cid], dense_exact[cid], atol=1e-5)


def test_writes_update_the_index_in_place_and_match_qdrant(
    store: QdrantVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upserts (new points, overwritten points, new terms, points without a sparse vector) and
    deletes by chunk and by document are applied to the index without reading the collection again,
    through compactions, and every search still gives Qdrant's own results (IDF included)."""
    rng = np.random.default_rng(5)
    store.search_dense(np.ones(DIM, dtype=np.float32), 1)  # the index exists
    reads = []
    original = LocalVectorIndex.from_collection
    monkeypatch.setattr(LocalVectorIndex, "from_collection",
                        classmethod(lambda cls, *a, **k: reads.append(1) or original(*a, **k)))
    compactions = []
    compact = LocalVectorIndex._compact
    monkeypatch.setattr(LocalVectorIndex, "_compact", lambda self: compactions.append(1) or compact(self))
    n = N_POINTS
    for step in range(12):
        fresh = [_chunk(i) for i in range(n, n + 40)]
        overwritten = [_chunk(int(i)) for i in rng.choice(n, size=10, replace=False)]
        chunks = fresh + overwritten
        sparse = [_random_sparse(rng) if i % 7 else SparseVector.from_arrays([], []) for i in range(len(chunks))]
        sparse[0] = SparseVector.from_arrays([N_TERMS + step], [1.5])  # a term new to the collection
        store.upsert(chunks, rng.normal(size=(len(chunks), DIM)).astype(np.float32), sparse)
        n += 40
        store.delete_chunks([f"c{int(i)}" for i in rng.choice(n, size=15, replace=False)])
        store.delete_documents([f"d{int(i)}" for i in rng.choice(n // 3, size=3, replace=False)])
        for language in (None, "de"):
            _assert_same(*_both(store, "search_dense", rng.normal(size=DIM).astype(np.float32), 20, language))
            query = SparseVector.from_arrays([0, 1, int(rng.integers(2, N_TERMS)), N_TERMS + step], [1.0, 0.5, 1.0, 1.0])
            _assert_same(*_both(store, "search_sparse", query, 25, language))
        ids = [f"c{i}" for i in range(0, n, 37)]
        fast, exact = _both(store, "get_sparse", ids)
        assert set(fast) == set(exact)
        for cid in fast:
            assert fast[cid].as_dict() == pytest.approx(exact[cid].as_dict())
    assert reads == [] and len(compactions) >= 2
    assert store._index is not None and len(store._index) == store.count()


def test_a_failed_write_makes_the_index_read_the_collection_again(store: QdrantVectorStore) -> None:
    store.search_dense(np.ones(DIM, dtype=np.float32), 1)
    first = store._index

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    real = store.client.upsert
    store.client.upsert = broken  # type: ignore[method-assign]
    new = Chunk("new", "dnew", 0, "new", ["S"], "dnew-p", "new", 1, "en")
    with pytest.raises(RuntimeError):
        store.upsert([new], np.ones((1, DIM), dtype=np.float32), [SparseVector.from_arrays([1], [1.0])])
    store.client.upsert = real  # type: ignore[method-assign]
    store.upsert([new], np.ones((1, DIM), dtype=np.float32), [SparseVector.from_arrays([1], [1.0])])
    assert store.search_dense(np.ones(DIM, dtype=np.float32), 1)[0].chunk_id == "new"
    assert store._index is not first  # read again, not patched


def test_warm_up_loads_the_index_once_the_collection_exists(store: QdrantVectorStore,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    empty = make_vector_store(QdrantLocalConfig(path=":memory:", collection="not-yet"))
    empty.warm_up()  # a store served before its first build: nothing to load, no error
    assert empty._index is None
    empty.close()
    store.warm_up()
    reads: list[int] = []
    original = LocalVectorIndex.from_collection
    monkeypatch.setattr(LocalVectorIndex, "from_collection",
                        classmethod(lambda cls, *a, **k: reads.append(1) or original(*a, **k)))
    assert store.search_dense(np.ones(DIM, dtype=np.float32), 1)
    assert reads == []


def test_the_collection_is_read_in_one_scroll_page(store: QdrantVectorStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # qdrant-client's local mode sorts all IDs on every scroll call: paging through the collection
    # was quadratic (docs/scale.md), so the index asks for every point at once
    import gc

    import medgraph.stores.local_index as local_index

    monkeypatch.setattr(local_index, "SCROLL_BATCH", 64)  # well below the store's 300 points
    pages: list[int] = []
    original = store.client.scroll

    def counting(*args: object, **kwargs: object) -> object:
        pages.append(int(kwargs["limit"]))  # type: ignore[call-overload]
        return original(*args, **kwargs)

    monkeypatch.setattr(store.client, "scroll", counting)
    gc_was = gc.isenabled()
    store.search_index = True
    store._index = None  # read it again, through the counting client
    fast, exact = _both(store, "search_dense", np.ones(DIM, dtype=np.float32), 10)
    _assert_same(fast, exact)
    assert pages == [N_POINTS] and len(store._index) == N_POINTS
    assert gc.isenabled() == gc_was  # the collector is back as it was
