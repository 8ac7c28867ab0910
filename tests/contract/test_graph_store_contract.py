"""The ``GraphStore`` contract, run against the embedded store and Neo4j.

The Neo4j parameter uses the local dev server (``make neo4j-start``, Bolt at
``$NEO4J_DEV_HOST:$NEO4J_DEV_PORT``, password from ``NEO4J_DEV_PASSWORD`` if set) and skips with
the reason when nothing answers, unless ``MEDGRAPH_REQUIRE_NEO4J=1``, in which case it fails.
The dev server is for tests only: each Neo4j test removes every MedGraph node and projection
before and after it runs.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

from medgraph.config.models import EmbeddedGraphStoreConfig, Neo4jGraphStoreConfig
from medgraph.graph.ppr import PPRIndex
from medgraph.schemas import Chunk, Entity, Failure, Mention
from medgraph.stores.errors import StoreUnavailable
from medgraph.stores.factory import make_graph_store
from medgraph.stores.graph import DocumentRecord
from tests.helpers import require_disposable_neo4j, unavailable

HOST = os.environ.get("NEO4J_DEV_HOST", "127.0.0.1")
PORT = os.environ.get("NEO4J_DEV_PORT", "7687")
NEO4J = Neo4jGraphStoreConfig(kind="neo4j", uri=f"bolt://{HOST}:{PORT}", password_env="NEO4J_DEV_PASSWORD")
_WIPE = "MATCH (n) WHERE n:Entity OR n:Chunk OR n:Document OR n:Run OR n:Failure DETACH DELETE n"
_DROP = ("CALL gds.graph.list() YIELD graphName WHERE graphName STARTS WITH 'medgraph_ppr_' "
         "CALL gds.graph.drop(graphName, false) YIELD graphName AS g RETURN g")


def wipe(store) -> None:
    with store._driver.session(database=NEO4J.database) as session:
        session.run(_WIPE).consume()
        session.run(_DROP).consume()


@pytest.fixture(scope="session")
def neo4j_available() -> None:
    try:
        probe = make_graph_store(NEO4J)
    except (StoreUnavailable, ImportError) as exc:
        reason = (f"no Neo4j answering at {NEO4J.uri} ({exc}); start it with make neo4j-start "
                  "(cluster/neo4j/neo4j-dev.sh start && cluster/neo4j/neo4j-dev.sh wait)")
        unavailable(reason, "MEDGRAPH_REQUIRE_NEO4J")
    probe.close()
    require_disposable_neo4j(NEO4J.uri)


def open_store(kind: str, tmp_path, request):
    if kind == "embedded":
        return make_graph_store(EmbeddedGraphStoreConfig(path=str(tmp_path / "graph.sqlite")))
    request.getfixturevalue("neo4j_available")
    store = make_graph_store(NEO4J)
    wipe(store)
    return store


@pytest.fixture(params=["embedded", "neo4j"])
def store(request, tmp_path) -> Iterator:
    s = open_store(request.param, tmp_path, request)
    yield s
    if request.param == "neo4j":
        wipe(s)
    s.close()


@pytest.fixture
def both(request, tmp_path) -> Iterator:
    """An embedded and a Neo4j store, for comparisons on the same graph."""
    embedded, neo = open_store("embedded", tmp_path, request), open_store("neo4j", tmp_path, request)
    yield embedded, neo
    wipe(neo)
    neo.close()
    embedded.close()


# --- corpus helpers ------------------------------------------------------------------------


def chunk(doc: str, i: int, doc_hash: str = "h1", n: int = 2) -> Chunk:
    return Chunk(f"{doc}-{doc_hash}-{i}", doc, i, f"text {i} of {doc}", ["Results", "Sub"], f"{doc}-p",
                 f"parent of {doc}", 12, "en", title=f"Title {doc}", page=i or None, doc_hash=doc_hash,
                 doc_chunk_count=n)


def batch(doc: str, ents: list[list[str]], doc_hash: str = "h1"):
    """Chunks, mentions (one per listed entity; repeats are repeated mentions) and entities of a doc."""
    chunks = [chunk(doc, i, doc_hash, len(ents)) for i in range(len(ents))]
    mentions = [Mention(3 * j, 3 * j + 2, e.lower(), e, "Disease", "exact", 1.0, c.chunk_id)
                for c, es in zip(chunks, ents, strict=True) for j, e in enumerate(es)]
    entities = [Entity(e, f"name {e}", "Drug" if e.startswith("R") else "Disease", [f"C{e}"],
                       {"en": [f"name {e}"], "de": [f"Name {e}"]}) for e in sorted({e for es in ents for e in es})]
    return chunks, mentions, entities


def write_doc(store, doc: str, ents: list[list[str]], doc_hash: str = "h1", source_id: str = "") -> list[str]:
    store.upsert_documents([DocumentRecord(doc, f"Title {doc}", "en", doc_hash, len(ents), source_id)])
    store.upsert_chunks(*batch(doc, ents, doc_hash))
    return store.complete_documents([doc])[0]


def random_corpus(n_chunks: int = 300, n_ent: int = 60, per_doc: int = 10, seed: int = 7) -> dict[str, list]:
    """Doc → per-chunk entity lists: Zipf entity popularity, 1–4 entities per chunk, 1–3 mentions each."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, n_ent + 1)
    docs: dict[str, list] = {}
    for c in range(n_chunks):
        picked = rng.choice(n_ent, size=int(rng.integers(1, 5)), replace=False, p=popularity / popularity.sum())
        ents = [f"D{e:03d}" for e in picked for _ in range(int(rng.integers(1, 4)))]
        docs.setdefault(f"doc{c // per_doc:03d}", []).append(ents)
    return docs


# --- records -------------------------------------------------------------------------------


def test_write_count_and_idempotent_rewrite(store):
    assert write_doc(store, "d1", [["D1", "D2"], ["D2"]]) == ["d1"]
    before = store.counts()
    assert before == {"documents": 1, "documents_partial": 0, "chunks": 2, "mentions": 3, "entities": 2}
    assert write_doc(store, "d1", [["D1", "D2"], ["D2"]]) == ["d1"]  # written again: still complete, reported
    assert store.counts() == before
    assert store.document_hashes() == {"d1": "h1"}


def test_document_is_partial_until_all_chunks_are_written(store):
    store.upsert_documents([DocumentRecord("d1", "d1", "en", "h1", 2)])
    store.upsert_chunks([chunk("d1", 0)], [], [])
    assert store.complete_documents(["d1"]) == ([], [])
    assert store.document_hashes(complete_only=True) == {}
    assert store.document_hashes(complete_only=False) == {"d1": "h1"}
    assert store.counts()["documents_partial"] == 1
    store.upsert_chunks([chunk("d1", 1)], [], [])
    assert store.complete_documents(["d1", "d1", "unknown"]) == (["d1"], [])
    assert store.document_hashes() == {"d1": "h1"}
    assert store.counts()["documents"] == 1 and store.counts()["documents_partial"] == 0
    store.upsert_chunks([chunk("d1", 1)], [], [])  # the batch again (a retried write)
    assert store.complete_documents(["d1"]) == (["d1"], [])  # still reported, nothing stale


def test_new_version_replaces_old_chunks_on_completion(store):
    write_doc(store, "d1", [["D1"], ["D2"]], doc_hash="h1")
    write_doc(store, "d2", [["D2"]], doc_hash="x")
    store.upsert_documents([DocumentRecord("d1", "d1", "en", "h2", 1)])
    assert store.document_hashes() == {"d2": "x"}  # the new version is partial until written
    store.upsert_chunks(*batch("d1", [["D3"]], doc_hash="h2"))
    done, stale = store.complete_documents(["d1"])
    assert done == ["d1"] and sorted(stale) == ["d1-h1-0", "d1-h1-1"]
    assert store.counts() == {"documents": 2, "documents_partial": 0, "chunks": 2, "mentions": 2, "entities": 2}
    assert store.get_entity("D1") is None and store.get_entity("D2") is not None  # D1 orphaned


def test_delete_removes_chunks_mentions_and_orphaned_entities_only(store):
    write_doc(store, "d1", [["D1", "D2"]], doc_hash="a")
    write_doc(store, "d2", [["D2", "D3"]], doc_hash="b")
    result = store.delete_documents(["d1", "missing"])
    assert result.documents == 1 and result.chunk_ids == ["d1-a-0"] and result.entities_removed == 1
    assert store.get_entity("D1") is None and store.get_entity("D2") is not None
    assert store.counts() == {"documents": 1, "documents_partial": 0, "chunks": 1, "mentions": 2, "entities": 2}
    assert store.get_chunks(["d1-a-0"]) == [] and store.chunk_mentions("d1-a-0") == []


def test_documents_deleted_together_remove_the_entities_only_they_mentioned(store):
    write_doc(store, "d1", [["D1", "D2"]], doc_hash="a")
    write_doc(store, "d2", [["D2", "D4"]], doc_hash="b")
    write_doc(store, "d3", [["D4"]], doc_hash="c")
    result = store.delete_documents(["d1", "d2"])
    assert result.documents == 2 and sorted(result.chunk_ids) == ["d1-a-0", "d2-b-0"]
    assert result.entities_removed == 2  # D1 and D2; D4 is still mentioned by d3
    assert store.get_entity("D2") is None and store.get_entity("D4") is not None
    assert store.counts()["entities"] == 1 and store.counts()["mentions"] == 1


def test_reads_back_chunks_entities_and_mentions(store):
    write_doc(store, "d1", [["D1", "D2", "D1"], ["R9"]], source_id="PMID:1")
    got = store.get_chunks(["d1-h1-1", "missing", "d1-h1-0"])
    assert [c.chunk_id for c in got] == ["d1-h1-1", "d1-h1-0"]  # the order asked for
    want = chunk("d1", 1, n=2)
    want.source_id, want.doc_chunk_count = "PMID:1", 0
    assert got[0] == want and got[1].page is None and got[1].section_path == ["Results", "Sub"]
    assert store.get_entity("R9") == Entity("R9", "name R9", "Drug", ["CR9"], {"en": ["name R9"], "de": ["Name R9"]})
    assert store.get_entity("nope") is None
    mentions = store.chunk_mentions("d1-h1-0")
    assert [(m.start, m.end, m.mesh_id, m.category) for m in mentions] == [
        (0, 2, "D1", "Disease"), (3, 5, "D2", "Disease"), (6, 8, "D1", "Disease")]
    assert mentions[0] == Mention(0, 2, "d1", "D1", "Disease", "exact", 1.0, "d1-h1-0")
    assert store.chunk_entities(["d1-h1-0", "d1-h1-1", "x"]) == {"d1-h1-0": {"D1", "D2"}, "d1-h1-1": {"R9"}, "x": set()}


def test_mention_relinked_to_another_entity_replaces_the_old_link(store):
    write_doc(store, "d1", [["D1", "D2"]])
    chunks, mentions, entities = batch("d1", [["D1", "D3"]])
    store.upsert_chunks(chunks, mentions, entities)
    assert [m.mesh_id for m in store.chunk_mentions("d1-h1-0")] == ["D1", "D3"]
    assert store.counts()["mentions"] == 2


def test_runs_and_failures_are_recorded(store):
    assert store.last_run() is None
    store.start_run("r0", {"inputs": ["old"]})
    time.sleep(0.01)
    store.start_run("r1", {"inputs": ["x"]})
    store.record_failures("r1", [Failure("bad.pdf", "load", "not a readable PDF"), Failure("a.txt", "load", "UTF-8")])
    store.record_failures("r1", [Failure("bad.pdf", "load", "not a readable PDF")])  # idempotent
    store.finish_run("r1", "succeeded", {"chunks_written": 3})
    run = store.last_run()
    assert run["run_id"] == "r1" and run["status"] == "succeeded" and run["info"] == {"inputs": ["x"]}
    assert run["summary"] == {"chunks_written": 3} and run["finished"] >= run["started"]
    assert store.failures("r1") == [Failure("a.txt", "load", "UTF-8"), Failure("bad.pdf", "load", "not a readable PDF")]
    assert store.failures("r0") == [] and len(store.failures()) == 2
    # read a page, count the rest in the store (GET /corpus lists 50 of a run's failures)
    assert store.failures("r1", limit=1) == [Failure("a.txt", "load", "UTF-8")] and store.failures("r1", limit=0) == []
    assert store.failure_count("r1") == store.failure_count() == 2 and store.failure_count("r0") == 0


def test_progress_is_readable_while_a_run_is_running_and_replaced_by_its_summary(store):
    store.start_run("r1", {"inputs": ["x"]})
    store.report_progress("r1", {"documents_done": 4, "chunks": 10})
    store.report_progress("r1", {"documents_done": 9, "chunks": 25})
    run = store.last_run()
    assert run["status"] == "running" and run["summary"] == {"documents_done": 9, "chunks": 25}
    store.finish_run("r1", "succeeded", {"chunks_written": 30})
    store.report_progress("r1", {"documents_done": 1})  # a late report never overwrites the summary
    assert store.last_run()["summary"] == {"chunks_written": 30}


def test_runs_are_listed_newest_first_with_progress_and_summaries(store):
    assert store.runs() == []
    for i in range(3):
        store.start_run(f"r{i}", {"inputs": [f"in{i}"]})
        time.sleep(0.01)
    store.finish_run("r0", "succeeded", {"chunks_written": 3})
    store.finish_run("r1", "failed", {"error": "boom"})
    store.report_progress("r2", {"documents_done": 2})
    runs = store.runs()
    assert [r["run_id"] for r in runs] == ["r2", "r1", "r0"]
    assert runs[0] == store.last_run()  # the same record as last_run
    assert set(runs[0]) == {"run_id", "started", "finished", "status", "info", "summary"}
    assert runs[0]["status"] == "running" and runs[0]["finished"] is None
    assert runs[0]["summary"] == {"documents_done": 2} and runs[0]["info"] == {"inputs": ["in2"]}
    assert runs[1]["status"] == "failed" and runs[1]["summary"] == {"error": "boom"}
    assert runs[2]["status"] == "succeeded" and runs[2]["finished"] >= runs[2]["started"]
    assert [r["run_id"] for r in store.runs(limit=2)] == ["r2", "r1"]
    assert store.runs(limit=0) == []


def test_concurrent_writers_converge_without_duplicates(store):
    """4 threads write overlapping batches (every document by 2 threads, in different orders)."""
    corpus = random_corpus(n_chunks=120, per_doc=6, seed=11)
    docs = sorted(corpus)
    plans = [docs[i::2] for i in range(2)] * 2
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            order = plans[t][:]
            random.Random(t).shuffle(order)
            for i in range(0, len(order), 3):
                group = order[i:i + 3]
                store.upsert_documents([DocumentRecord(d, d, "en", "h1", len(corpus[d])) for d in group])
                parts = [batch(d, corpus[d]) for d in group]
                store.upsert_chunks([c for p in parts for c in p[0]], [m for p in parts for m in p[1]],
                                    [e for p in parts for e in p[2]])
                store.complete_documents(group)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    mentions = sum(len(es) for d in docs for es in corpus[d])
    entities = len({e for d in docs for es in corpus[d] for e in es})
    assert store.counts() == {"documents": len(docs), "documents_partial": 0, "chunks": 120,
                              "mentions": mentions, "entities": entities}


# --- graph queries -------------------------------------------------------------------------


def test_ppr_ranks_the_seed_chunks_first_and_follows_writes(store):
    write_doc(store, "d1", [["D1", "D2"], ["D2", "D3"], ["D3", "D4"], ["D5"]])
    hits = store.ppr({"D1": 1.0}, damping=0.5, top_k=10)
    assert [h.chunk_id for h in hits] == ["d1-h1-0", "d1-h1-1", "d1-h1-2"]  # D5's chunk is unreachable
    assert hits[0].score > hits[1].score > hits[2].score > 0
    assert hits[0].entity_path == ["D1"] and hits[1].entity_path[0] == "D2"
    assert store.ppr({"nope": 1.0}, 0.5, 10) == [] and store.ppr({"D1": 1.0}, 0.5, 0) == []
    write_doc(store, "d2", [["D1", "D9"]], doc_hash="z")  # a write is visible to the next query
    assert "d2-z-0" in [h.chunk_id for h in store.ppr({"D9": 1.0}, 0.5, 10)]


def _tie_aware_overlap(found: list[str], exact: dict[str, float], k: int = 10) -> tuple[float, float]:
    best = sorted(exact, key=lambda c: (-exact[c], c))[:k]
    kth = exact[best[-1]]
    strict = len(set(found[:k]) & set(best)) / len(best)
    tied = sum(1 for c in found[:k] if exact.get(c, 0.0) >= kth * (1 - 1e-6)) / len(best)
    return strict, tied


def test_ppr_rankings_agree_between_stores(both):
    embedded, neo = both
    corpus = random_corpus()
    for doc, ents in corpus.items():
        for s in both:
            write_doc(s, doc, ents)
    index = PPRIndex(*embedded.incidence())
    rng = np.random.default_rng(5)
    overlaps = []
    for damping in (0.5, 0.85):
        for q in range(6):
            picked = rng.choice(60, size=1 + q % 3, replace=False)
            seeds = {f"D{e:03d}": (1.0 if q < 3 else float(rng.uniform(0.5, 1.0))) for e in picked}
            exact = dict(zip(index.chunk_ids, index.exact(seeds, damping).tolist(), strict=True))
            got = {s: [h.chunk_id for h in s.ppr(seeds, damping=damping, top_k=10)] for s in both}
            strict, tied = _tie_aware_overlap(got[neo], exact)
            assert tied == 1.0, (seeds, damping, got[neo])
            overlaps.append(len(set(got[neo]) & set(got[embedded])) / 10)
            scores = {h.chunk_id: h.score for h in neo.ppr(seeds, damping=damping, top_k=10)}
            assert all(abs(scores[c] - exact[c]) <= 1e-3 * exact[c] for c in scores)  # same scale as PPRIndex
    assert min(overlaps) >= 0.9, overlaps


def test_neighbourhoods_are_equal_between_stores(both):
    embedded, neo = both
    corpus = random_corpus(n_chunks=150, n_ent=40, seed=3)
    for doc, ents in corpus.items():
        for s in both:
            write_doc(s, doc, ents)
    for mesh_id in ("D000", "D007", "D031", "missing"):
        for hops, limit in ((1, 25), (1, 3), (2, 4)):
            got = embedded.neighbourhood(mesh_id, hops=hops, limit=limit)
            assert neo.neighbourhood(mesh_id, hops=hops, limit=limit) == got
            assert mesh_id == "missing" or got
    assert embedded.neighbourhood("D000", 1, 3)[0][2] >= embedded.neighbourhood("D000", 1, 3)[-1][2]


def test_served_lookups_equal_each_stores_own_answers(store):
    """Retriever.served_graph (lookups over the in-process index's incidence) answers the relational
    channel's and the gap search's calls exactly as the store does (Cypher on Neo4j)."""
    from medgraph.retrieve.ppr import ProcessPPR
    from medgraph.retrieve.served_graph import ServedGraph

    corpus = random_corpus(n_chunks=120, n_ent=30, seed=11)
    for doc, ents in corpus.items():
        write_doc(store, doc, ents)
    served = ServedGraph(store, ProcessPPR(store, poll_s=3600))
    ids = [f"D{e:03d}" for e in range(30)] + ["missing"]
    rng = random.Random(4)
    pairs = [tuple(rng.sample(ids, 2)) for _ in range(40)] + [("D000", "D001"), ("D028", "D029")]
    for a, b in pairs:
        for limit in (1, 10):
            assert served.connecting_evidence(a, b, limit) == store.connecting_evidence(a, b, limit), (a, b, limit)
    for mesh_id in ("D000", "D013", "D029", "missing"):
        for hops, limit in ((1, 25), (2, 4)):
            assert served.neighbourhood(mesh_id, hops, limit) == store.neighbourhood(mesh_id, hops, limit)


# --- Neo4j specifics -----------------------------------------------------------------------


def test_unreachable_neo4j_fails_fast_with_store_unavailable():
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="unavailable"):
        make_graph_store(NEO4J.model_copy(update={"uri": "bolt://127.0.0.1:9"}))
    assert time.monotonic() - started < 10


def test_neo4j_schema_labels_and_relationships(neo4j_available):
    store = make_graph_store(NEO4J)
    wipe(store)
    try:
        write_doc(store, "d1", [["D1", "R2"]])
        write_doc(store, "d1b", [["R2"]])
        store.upsert_chunks([], [], [Entity("R2", "renamed", "Disease")])  # category change relabels
        with store._driver.session(database=NEO4J.database) as s:
            labels = {r["id"]: sorted(r["labels"]) for r in s.run(
                "MATCH (e:Entity) RETURN e.mesh_id AS id, labels(e) AS labels")}
            path = s.run("MATCH (e:Entity {mesh_id: 'D1'})-[m:MENTIONED_IN]->(c:Chunk)-[:FROM_DOC]->(d:Document) "
                         "RETURN m.surface AS surface, m.`end` AS end, c.token_count AS tokens, d.doc_id AS doc").single()
            constraints = {r["name"] for r in s.run("SHOW CONSTRAINTS YIELD name RETURN name")}
        assert labels == {"D1": ["Disease", "Entity"], "R2": ["Disease", "Entity"]}
        assert dict(path) == {"surface": "d1", "end": 2, "tokens": 12, "doc": "d1"}
        assert {"medgraph_entity", "medgraph_chunk", "medgraph_document", "medgraph_run"} <= constraints
    finally:
        wipe(store)
        store.close()


# --- connecting evidence (gap completion) --------------------------------------------------


def test_connecting_evidence_shared_chunks_bridges_and_gaps(store):
    write_doc(store, "d1", [["D1", "D2"], ["D2", "D3"]])  # D1-D2 share a chunk; D2 bridges D1 and D3
    write_doc(store, "d2", [["D4"], ["D3", "D5"]])
    both = store.connecting_evidence("D1", "D2")
    assert both.chunk_ids == ["d1-h1-0"] and both.connected
    bridged = store.connecting_evidence("D1", "D3")
    assert bridged.chunk_ids == [] and bridged.bridges == ["D2"] and bridged.connected
    assert store.connecting_evidence("D3", "D1").bridges == ["D2"]
    assert store.connecting_evidence("D1", "D5").connected is False  # three hops: D1-D2-D3-D5
    assert store.connecting_evidence("D1", "D4").connected is False
    assert store.connecting_evidence("D1", "D404").connected is False  # unknown entity
    write_doc(store, "d3", [["D1", "D5", "D2", "D3"]])
    assert store.connecting_evidence("D1", "D5").chunk_ids == ["d3-h1-0"]
    assert store.connecting_evidence("D1", "D3", limit=1).bridges == ["D2"]


def test_connecting_evidence_is_parameterised(store):
    write_doc(store, "d1", [["D1", "D2"]])
    hostile = "D1' OR 1=1 --"
    assert store.connecting_evidence(hostile, "D2").connected is False
    assert store.connecting_evidence('D1"}) MATCH (n) DETACH DELETE n //', "D2").connected is False
    assert store.counts()["chunks"] == 1
