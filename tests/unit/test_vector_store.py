"""Vector store over Qdrant local mode: idempotent upserts, deletes, hybrid search, filters, outages."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import numpy as np
import pytest

from medgraph.config.models import EmbeddingConfig, QdrantLocalConfig, QdrantServerConfig
from medgraph.embed import Embedder, make_embedder
from medgraph.schemas import Chunk
from medgraph.stores import make_vector_store
from medgraph.stores.errors import StoreSchemaMismatch, StoreUnavailable
from medgraph.stores.vector import QdrantVectorStore, point_id

TEXTS = [
    ("d1", "en", "Aspirin lowers the risk of myocardial infarction in patients with coronary disease."),
    ("d1", "en", "Patients with a fractured femur usually need surgery and physiotherapy."),
    ("d2", "de", "Bei Patienten mit Herzinfarkt senkt Aspirin das Risiko eines erneuten Infarkts."),
    ("d2", "de", "Patienten mit Beinbruch werden meist operiert."),
    ("d3", "zh", "阿司匹林可降低心肌梗死患者的风险。"),
    ("d3", "en", "Patients with asthma use inhaled corticosteroids for patients' airway inflammation."),
]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(EmbeddingConfig(dense="hashing", sparse="lexical"))


def _chunks() -> list[Chunk]:
    return [
        Chunk(
            f"{doc}-c{i}",
            doc,
            i,
            text,
            ["Results", "Main"],
            f"{doc}-p",
            text,
            len(text.split()),
            lang,
            title=f"Title {doc}",
            page=None if i % 2 else i,
        )
        for i, (doc, lang, text) in enumerate(TEXTS)
    ]


def _open(path: Path, embedder: Embedder) -> QdrantVectorStore:
    store = make_vector_store(QdrantLocalConfig(path=str(path), upsert_batch_size=4))
    store.ensure_collection(embedder.dim, embedder.sparse_idf)
    return store


def _fill(store: QdrantVectorStore, embedder: Embedder) -> list[Chunk]:
    chunks = _chunks()
    texts = [c.text for c in chunks]
    store.upsert(chunks, embedder.embed_dense(texts), embedder.embed_sparse(texts))
    return chunks


def _hybrid(store: QdrantVectorStore, embedder: Embedder, question: str, **kw: object) -> list[str]:
    dense = embedder.embed_query_dense([question])[0]
    sparse = embedder.embed_query_sparse([question])[0]
    return [h.chunk_id for h in store.hybrid_search(dense, sparse, limit=3, **kw)]  # type: ignore[arg-type]


def test_upsert_is_idempotent_and_keeps_payload(tmp_path: Path, embedder: Embedder) -> None:
    with _open(tmp_path / "q", embedder) as store:
        chunks = _fill(store, embedder)
        _fill(store, embedder)
        assert store.count() == len(chunks)
        assert [store.count_by_doc(d) for d in ("d1", "d2", "d3", "nope")] == [2, 2, 2, 0]
        hit = store.search_sparse(embedder.embed_query_sparse(["fractured femur"])[0], limit=1)[0]
        assert hit.chunk_id == "d1-c1"
        assert hit.payload["section_path"] == ["Results", "Main"]
        assert hit.payload["page"] is None and hit.payload["parent_id"] == "d1-p"
        assert hit.payload["language"] == "en" and hit.payload["text"] == chunks[1].text
    assert point_id("d1-c1") == point_id("d1-c1") != point_id("d1-c2")


def test_delete_documents_and_chunks_remove_only_their_points(tmp_path: Path, embedder: Embedder) -> None:
    with _open(tmp_path / "q", embedder) as store:
        _fill(store, embedder)
        store.delete_documents(["d2"])
        assert store.count() == 4 and store.count_by_doc("d2") == 0 and store.count_by_doc("d1") == 2
        store.delete_chunks(["d3-c4"])
        assert store.count() == 3 and store.count_by_doc("d3") == 1


def test_a_local_delete_with_the_graphs_chunk_ids_deletes_by_id_not_by_scanning(
        tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Local mode evaluates a doc_id filter point by point against every listed ID (a 1% delete of
    a 120k-article store took 87 s); given the documents' chunk IDs (the graph store's delete returns
    them) it deletes those points by ID, and no payload filter runs."""
    from qdrant_client.local import local_collection

    with _open(tmp_path / "q", embedder) as store:
        _fill(store, embedder)
        scans: list[int] = []
        real = local_collection.calculate_payload_mask
        monkeypatch.setattr(local_collection, "calculate_payload_mask",
                            lambda *a, **k: scans.append(1) or real(*a, **k))
        store.delete_documents(["d2"], ["d2-c2", "d2-c3"])
        assert scans == []
        assert store.count() == 4 and store.count_by_doc("d2") == 0 and store.count_by_doc("d1") == 2
        store.delete_documents(["d3"])  # without the chunk IDs: the filter, as before
        assert scans and store.count_by_doc("d3") == 0 and store.count() == 2


def test_hybrid_search_ranks_matching_chunk_first(tmp_path: Path, embedder: Embedder) -> None:
    with _open(tmp_path / "q", embedder) as store:
        _fill(store, embedder)
        assert _hybrid(store, embedder, "aspirin myocardial infarction risk")[0] == "d1-c0"
        assert _hybrid(store, embedder, "inhaled corticosteroids asthma")[0] == "d3-c5"
        dense = embedder.embed_query_dense(["fractured femur surgery"])[0]
        assert store.search_dense(dense, limit=1)[0].chunk_id == "d1-c1"
        assert [h.chunk_id for h in store.hybrid_search(dense, None, limit=1)] == ["d1-c1"]


def test_sparse_idf_downweights_common_terms(tmp_path: Path, embedder: Embedder) -> None:
    # "patient" is in 5 of 6 chunks, "asthma" in one: IDF from the store makes asthma decide.
    with _open(tmp_path / "q", embedder) as store:
        _fill(store, embedder)
        # d3-c5 has "patient" twice and "asthma" once: without IDF "patient" would weigh more.
        common, rare = embedder.embed_query_sparse(["patients", "asthma"])
        common_hits = {h.chunk_id: h.score for h in store.search_sparse(common, limit=6)}
        rare_hits = store.search_sparse(rare, limit=6)
        assert len(common_hits) == 5 and [h.chunk_id for h in rare_hits] == ["d3-c5"]
        assert rare_hits[0].score > 3 * common_hits["d3-c5"]


def test_language_filter(tmp_path: Path, embedder: Embedder) -> None:
    with _open(tmp_path / "q", embedder) as store:
        _fill(store, embedder)
        de = store.hybrid_search(
            embedder.embed_query_dense(["aspirin infarction"])[0],
            embedder.embed_query_sparse(["aspirin infarction"])[0],
            limit=5,
            language="de",
        )
        assert de and {h.payload["language"] for h in de} == {"de"}
        assert de[0].chunk_id == "d2-c2"
        zh_en = _hybrid(store, embedder, "阿司匹林 aspirin", language=["zh", "en"])
        assert zh_en and all(not c.startswith("d2") for c in zh_en)


def test_passages_per_language_from_the_index_and_from_qdrant_itself(tmp_path: Path, embedder: Embedder) -> None:
    from collections import Counter

    with _open(tmp_path / "q", embedder) as store:
        assert store.language_counts(["en", "de"]) == {"en": 0, "de": 0}
        chunks = _fill(store, embedder)
        expected = Counter(c.language for c in chunks)
        languages = sorted(expected) + ["fr"]
        want = {language: expected.get(language, 0) for language in languages}
        assert store.language_counts(languages) == want  # the in-process index
        store.search_index = False  # what a Qdrant server answers: a filtered count
        assert store.language_counts(languages) == want
        store.search_index = True
        store.delete_documents([chunks[0].doc_id])
        gone = Counter(c.language for c in chunks if c.doc_id == chunks[0].doc_id)
        assert store.language_counts(languages) == {k: v - gone.get(k, 0) for k, v in want.items()}


def test_reopen_after_close_keeps_data_and_one_client_per_path(tmp_path: Path, embedder: Embedder) -> None:
    path = tmp_path / "q"
    store = _open(path, embedder)
    _fill(store, embedder)
    with pytest.raises(StoreUnavailable, match="one client per path"):
        make_vector_store(QdrantLocalConfig(path=str(path)))
    store.close()
    with _open(path, embedder) as again:
        assert again.count() == len(TEXTS)
        assert _hybrid(again, embedder, "aspirin myocardial infarction risk")[0] == "d1-c0"


def test_existing_collection_with_other_layout_is_rejected(tmp_path: Path, embedder: Embedder) -> None:
    with _open(tmp_path / "q", embedder) as store:
        with pytest.raises(StoreSchemaMismatch):
            store.ensure_collection(embedder.dim + 1, embedder.sparse_idf)
        with pytest.raises(StoreSchemaMismatch):
            store.ensure_collection(embedder.dim, not embedder.sparse_idf)
        store.ensure_collection(embedder.dim, embedder.sparse_idf)  # same layout: no-op


def test_upsert_checks_vector_counts(tmp_path: Path, embedder: Embedder) -> None:
    with _open(tmp_path / "q", embedder) as store:
        with pytest.raises(ValueError):
            store.upsert(_chunks(), np.zeros((1, embedder.dim), np.float32), None)


def test_unreachable_server_raises_store_unavailable_quickly() -> None:
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    start = time.monotonic()
    with pytest.raises(StoreUnavailable, match="unreachable"):
        make_vector_store(
            QdrantServerConfig(kind="qdrant_server", url=f"http://127.0.0.1:{port}", timeout_s=2)
        )
    assert time.monotonic() - start < 5


def test_local_store_serves_calls_from_other_threads(tmp_path: Path, embedder: Embedder) -> None:
    # Ray Serve runs sync handlers in a thread pool: the owner's store must accept that.
    from concurrent.futures import ThreadPoolExecutor

    with _open(tmp_path / "q", embedder) as store, ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: _fill(store, embedder), range(4)))
        counts = list(pool.map(lambda d: store.count_by_doc(d), ["d1", "d2", "d3"]))
        assert counts == [2, 2, 2] and store.count() == len(TEXTS)
