from __future__ import annotations

import numpy as np
import pytest

from medgraph.schemas import Chunk, Entity, Failure, Mention
from medgraph.stores.embedded import EmbeddedGraphStore
from medgraph.stores.graph import DocumentRecord


def chunk(doc: str, i: int, doc_hash: str = "h1", n: int = 2) -> Chunk:
    return Chunk(f"{doc}-{doc_hash}-{i}", doc, i, f"text {i}", ["Sec"], f"{doc}-p", "parent", 2, "en",
                 title=doc, doc_hash=doc_hash, doc_chunk_count=n)


def write_doc(store, doc: str, ents: list[list[str]], doc_hash: str = "h1") -> list[str]:
    store.upsert_documents([DocumentRecord(doc, doc, "en", doc_hash, len(ents))])
    chunks = [chunk(doc, i, doc_hash, len(ents)) for i in range(len(ents))]
    mentions = [Mention(j, j + 1, e, e, "Disease", "exact", 1.0, c.chunk_id)
                for c, es in zip(chunks, ents, strict=True) for j, e in enumerate(es)]
    entities = [Entity(e, f"name {e}", "Disease") for e in sorted({e for es in ents for e in es})]
    store.upsert_chunks(chunks, mentions, entities)
    return store.complete_documents([doc])[0]


@pytest.fixture
def store(tmp_path):
    s = EmbeddedGraphStore(tmp_path / "g.sqlite")
    yield s
    s.close()


def test_write_count_and_idempotent_rewrite(store):
    assert write_doc(store, "d1", [["D1", "D2"], ["D2"]]) == ["d1"]
    before = store.counts()
    assert before == {"documents": 1, "documents_partial": 0, "chunks": 2, "mentions": 3, "entities": 2}
    write_doc(store, "d1", [["D1", "D2"], ["D2"]])
    assert store.counts() == before


def test_document_is_partial_until_all_chunks_are_written(store):
    store.upsert_documents([DocumentRecord("d1", "d1", "en", "h1", 2)])
    store.upsert_chunks([chunk("d1", 0)], [], [])
    assert store.complete_documents(["d1"]) == ([], [])
    assert store.document_hashes(complete_only=True) == {}
    assert store.counts()["documents_partial"] == 1
    store.upsert_chunks([chunk("d1", 1)], [], [])
    assert store.complete_documents(["d1"])[0] == ["d1"]
    assert store.document_hashes() == {"d1": "h1"}


def test_new_version_replaces_old_chunks_on_completion(store):
    write_doc(store, "d1", [["D1"], ["D2"]], doc_hash="h1")
    store.upsert_documents([DocumentRecord("d1", "d1", "en", "h2", 1)])
    store.upsert_chunks([chunk("d1", 0, "h2", 1)], [Mention(0, 1, "x", "D3", "", "exact", 1.0, "d1-h2-0")],
                        [Entity("D3", "n", "Drug")])
    done, stale = store.complete_documents(["d1"])
    assert done == ["d1"] and sorted(stale) == ["d1-h1-0", "d1-h1-1"]
    counts = store.counts()
    assert counts["chunks"] == 1 and counts["entities"] == 1  # D1, D2 orphaned and removed


def test_delete_removes_chunks_mentions_and_orphaned_entities_only(store):
    write_doc(store, "d1", [["D1", "D2"]], doc_hash="a")
    write_doc(store, "d2", [["D2", "D3"]], doc_hash="b")
    result = store.delete_documents(["d1"])
    assert result.documents == 1 and result.chunk_ids == ["d1-a-0"] and result.entities_removed == 1
    assert store.get_entity("D1") is None and store.get_entity("D2") is not None
    assert store.counts() == {"documents": 1, "documents_partial": 0, "chunks": 1, "mentions": 2, "entities": 2}


def test_incidence_matrix_tracks_writes(store):
    write_doc(store, "d1", [["D1", "D2"], ["D2"]])
    m, ents, chunks = store.incidence()
    assert ents == ["D1", "D2"] and len(chunks) == 2
    assert np.asarray(m.sum(axis=1)).ravel().tolist() == [1.0, 2.0]
    write_doc(store, "d2", [["D3"]], doc_hash="z")
    assert store.incidence()[1] == ["D1", "D2", "D3"]


def test_runs_and_failures_are_recorded(store):
    store.start_run("r1", {"inputs": ["x"]})
    store.record_failures("r1", [Failure("bad.pdf", "load", "not a readable PDF")])
    store.finish_run("r1", "succeeded", {"chunks_written": 3})
    run = store.last_run()
    assert run["status"] == "succeeded" and run["summary"] == {"chunks_written": 3}
    assert store.failures("r1") == [Failure("bad.pdf", "load", "not a readable PDF")]


def test_reads_back_chunks_and_mentions(store, tmp_path):
    write_doc(store, "d1", [["D1", "D2"]])
    [c] = store.get_chunks(["d1-h1-0", "missing"])
    assert c.section_path == ["Sec"] and c.doc_hash == "h1"
    assert [m.mesh_id for m in store.chunk_mentions("d1-h1-0")] == ["D1", "D2"]
    store.close()
    reopened = EmbeddedGraphStore(tmp_path / "g.sqlite")  # durable across processes / restarts
    assert reopened.counts()["chunks"] == 1
    reopened.close()
