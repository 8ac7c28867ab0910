"""The read endpoints the web interface uses (``/graph/entity`` by ID, ``/graph/edge``,
``/chunks/{id}``, ``/corpus``), without Ray: the real FastAPI app and ``Ingress`` routes, the
replica's instance found through a patched replica context, and handles that call a real
``RetrieverService`` over an embedded graph store in process. The Serve app over HTTP is
tests/integration/test_serve.py."""

from __future__ import annotations

import gzip
import re
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from medgraph.config import load_config
from medgraph.config.models import ChunkingConfig
from medgraph.ingest.chunking import Chunker
from medgraph.schemas import Chunk, Document, Entity, Failure, Mention, Section, content_hash
from medgraph.stores.embedded import EmbeddedGraphStore
from medgraph.stores.graph import DocumentRecord
from serve.api_models import CHUNK_ID, MESH_ID
from serve.services import GraphExplorer, RetrieverService

REPO = Path(__file__).resolve().parents[2]


def cid(doc: str, i: int) -> str:
    return content_hash(doc, "h1", str(i))  # as medgraph.ingest.chunking makes chunk IDs


def write(graph: EmbeddedGraphStore, doc: str, ents: list[list[str]], source_id: str = "") -> None:
    chunks = [Chunk(cid(doc, i), doc, i, f"chunk {i} of {doc} mentions {' and '.join(es)}", ["Results"], "", "",
                    10, "en", title=f"Title {doc}", page=i + 1, doc_hash="h1") for i, es in enumerate(ents)]
    mentions = [Mention(3 * j, 3 * j + 2, e.lower(), e, "Disease", "exact", 1.0, c.chunk_id)
                for c, es in zip(chunks, ents, strict=True) for j, e in enumerate(es)]
    entities = [Entity(e, f"name {e}", "Disease", [], {"en": [f"name {e}"], "de": [f"Name {e}"]})
                for e in sorted({e for es in ents for e in es})]
    graph.upsert_documents([DocumentRecord(doc, f"Title {doc}", "en", "h1", len(ents), source_id)])
    graph.upsert_chunks(chunks, mentions, entities)
    graph.complete_documents([doc])


class Handle:
    """A deployment handle whose ``method.remote(*args)`` runs ``target.method`` in process."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def __getattr__(self, name: str) -> Any:
        async def run(*args: Any) -> Any:
            return getattr(self.target, name)(*args)
        return SimpleNamespace(remote=run)


class Analyzer:
    def link_name(self, name: str, language: str | None = None) -> str | None:
        return {"name d000001": "D000001"}.get(name.lower())


@pytest.fixture
def graph(tmp_path: Path) -> Any:
    store = EmbeddedGraphStore(tmp_path / "graph.sqlite")
    write(store, "d1", [["D000001", "D000002"], ["D000001", "D000002", "D000003"], ["D000003"]], "PMID:1")
    write(store, "d2", [["D000004"]])
    yield store
    store.close()


@pytest.fixture
def client(tmp_path: Path, graph: EmbeddedGraphStore, monkeypatch: pytest.MonkeyPatch) -> Any:
    import ray.serve

    from serve.api import Ingress

    retriever = RetrieverService.__new__(RetrieverService)
    retriever.graph = graph
    retriever.vectors = SimpleNamespace(count=lambda: 4)
    retriever.retriever = SimpleNamespace(ppr_index=None)
    retriever.explorer = GraphExplorer(graph)
    cfg = load_config(REPO / "configs" / "local.yaml", [f"app.path={tmp_path}/app.sqlite", "auth.per_user_daily=50",
                                                         "auth.global_daily=50"])
    # @serve.ingress keeps a copy of the class and of the app it serves (a replica's): run that class's
    # constructor, serve that app, and let Serve's route dependency find this instance
    user_class = Ingress.__mro__[1]
    served = user_class.__init__.__globals__["app"]
    ingress = user_class.__new__(user_class)
    user_class.__init__(ingress, cfg, Handle(Analyzer()), Handle(retriever), None, None, {})
    monkeypatch.setattr(ray.serve, "get_replica_context", lambda: SimpleNamespace(servable_object=ingress))
    with TestClient(served, base_url="http://127.0.0.1:8000") as c:
        yield c
    del served.state.ingress


def test_the_id_patterns_match_the_ids_the_stores_hold():
    doc = Document("pmid-1", "T", "en", [Section("Results", "Metformin lowers glucose. " * 200)])
    made = Chunker(ChunkingConfig()).chunk(doc)
    assert made and all(re.fullmatch(CHUNK_ID, c.chunk_id) for c in made)
    with gzip.open(REPO / "medgraph" / "ontology" / "data" / "mesh_entry_terms.tsv.gz", "rt") as fh:
        ids = {line.split("\t", 1)[0] for line in fh if line.strip()}
    assert len(ids) > 1000 and all(re.fullmatch(MESH_ID, i) for i in ids)
    for bad in ("D1", "d000001", "D000001 ", "C000001", "D0000000000", "D000001' OR 1=1"):
        assert not re.fullmatch(MESH_ID, bad)
    for bad in ("memory:ab", "0" * 15, "A" * 16, "../../etc/passwd"):
        assert not re.fullmatch(CHUNK_ID, bad)


def test_entity_by_id_is_the_entity_by_name(client: TestClient):
    by_id = client.get("/graph/entity", params={"id": "D000001"})
    assert by_id.status_code == 200, by_id.text
    assert by_id.json() == client.get("/graph/entity", params={"name": "name D000001"}).json()
    body = by_id.json()
    assert body["mesh_id"] == "D000001" and body["names"]["de"] == ["Name D000001"]
    assert {e["target"]: e["weight"] for e in body["edges"]} == {"D000002": 2, "D000003": 1}
    assert client.get("/graph/entity", params={"id": "D000001", "lang": "de"}).json()["name"] == "Name D000001"


@pytest.mark.parametrize("params,status", [
    ({}, 400), ({"id": "D000001", "name": "x"}, 400), ({"id": "d000001"}, 422), ({"id": "D1"}, 422),
    ({"id": "D000001' OR 1=1"}, 422), ({"id": "D999999"}, 404), ({"name": "unknown"}, 404),
])
def test_entity_lookups_that_fail(client: TestClient, params: dict[str, str], status: int):
    r = client.get("/graph/entity", params=params)
    assert r.status_code == status and r.json()["detail"], r.text


def test_edge_lists_the_shared_chunks(client: TestClient):
    r = client.get("/graph/edge", params={"source": "D000001", "target": "D000002"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["source"] == "D000001" and body["target"] == "D000002" and body["weight"] == 2
    assert [c["chunk_id"] for c in body["chunks"]] == sorted([cid("d1", 0), cid("d1", 1)])
    first = body["chunks"][0]
    assert set(first) == {"chunk_id", "doc_id", "title", "source_id", "section_path", "page", "text"}
    assert first["doc_id"] == "d1" and first["source_id"] == "PMID:1" and first["section_path"] == ["Results"]
    assert all("D000001" in c["text"] and "D000002" in c["text"] for c in body["chunks"])
    one = client.get("/graph/edge", params={"source": "D000002", "target": "D000001", "limit": 1}).json()
    assert one["weight"] == 1 and len(one["chunks"]) == 1


@pytest.mark.parametrize("params,status,says", [
    ({"source": "D000001", "target": "D000004"}, 404, "not mentioned together"),
    ({"source": "D000001", "target": "D999999"}, 404, "D999999"),
    ({"source": "D000001", "target": "D000001"}, 400, "different"),
    ({"source": "D000001"}, 422, ""), ({"source": "D000001", "target": "x"}, 422, ""),
    ({"source": "D000001", "target": "D000002", "limit": 0}, 422, ""),
    ({"source": "D000001", "target": "D000002", "limit": 101}, 422, ""),
])
def test_edges_that_do_not_exist_or_are_malformed(client: TestClient, params: dict[str, Any], status: int, says: str):
    r = client.get("/graph/edge", params=params)
    assert r.status_code == status and says in str(r.json()["detail"]), r.text


def test_a_chunk_by_its_id(client: TestClient):
    r = client.get(f"/chunks/{cid('d1', 1)}")
    assert r.status_code == 200, r.text
    assert r.json() == {"chunk_id": cid("d1", 1), "doc_id": "d1", "title": "Title d1", "source_id": "PMID:1",
                        "section_path": ["Results"], "page": 2, "language": "en",
                        "text": "chunk 1 of d1 mentions D000001 and D000002 and D000003"}
    assert client.get(f"/chunks/{'0' * 16}").status_code == 404
    for bad in ("memory:abc", "0" * 15, "0" * 17, "ABCDEF0123456789", "0123456789abcde'"):
        assert client.get(f"/chunks/{bad}").status_code == 422, bad
    assert client.get("/chunks/..%2F..%2Fapp.sqlite").status_code in (404, 422)


@pytest.mark.parametrize("path", [f"/chunks/{cid('d1', 0)}", "/corpus", "/graph/communities",
                                  "/graph/edge?source=D000001&target=D000002"])
def test_every_data_read_counts_against_the_daily_quota(client: TestClient, path: str, tmp_path: Path):
    from medgraph.auth.quota import QuotaTracker

    client.app.state.ingress.quota = QuotaTracker(tmp_path / "quota.sqlite", 3, 3)
    codes = [client.get(path).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    assert int(client.get(path).headers["Retry-After"]) >= 1


def test_data_reads_wait_for_a_slot_of_the_concurrency_cap(client: TestClient):
    """With every slot held, a read waits in the line (and with the line full, is a 503), as a
    question does: reads cannot be used to go around the cap."""
    import asyncio

    ingress = client.app.state.ingress
    ingress.gate = type(ingress.gate)(1, 0)  # one slot, no line

    async def hold() -> None:
        async with ingress.gate.slot():
            await asyncio.sleep(3600)

    held = client.portal.start_task_soon(hold)
    try:
        for path in (f"/chunks/{cid('d1', 0)}", "/corpus", "/graph/communities"):
            r = client.get(path)
            assert r.status_code == 503 and "capacity" in r.json()["detail"], (path, r.text)
    finally:
        held.cancel()


def test_corpus_lists_builds_newest_first_with_failures(client: TestClient, graph: EmbeddedGraphStore):
    graph.start_run("build-1", {"inputs": ["a"]})
    graph.record_failures("build-1", [Failure(f"f{i:02d}.pdf", "load", "unreadable") for i in range(60)])
    graph.finish_run("build-1", "succeeded", {"documents_written": 2})
    time.sleep(0.01)
    graph.start_run("build-2", {"inputs": ["b"]})
    graph.report_progress("build-2", {"documents_done": 1})
    r = client.get("/corpus")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["stores"]["documents"] == 2 and body["stores"]["vectors"] == 4 and "last_run" not in body["stores"]
    assert [run["run_id"] for run in body["runs"]] == ["build-2", "build-1"]
    running, done = body["runs"]
    assert running["status"] == "running" and running["finished"] is None
    assert running["summary"] == {"documents_done": 1} and running["failure_count"] == 0 and running["failures"] == []
    assert done["status"] == "succeeded" and done["info"] == {"inputs": ["a"]} and done["failure_count"] == 60
    assert len(done["failures"]) == 50
    assert done["failures"][0] == {"source": "f00.pdf", "stage": "load", "reason": "unreadable", "doc_id": ""}
    assert [run["run_id"] for run in client.get("/corpus", params={"limit": 1}).json()["runs"]] == ["build-2"]
    assert client.get("/corpus", params={"limit": 0}).status_code == 422
    assert client.get("/corpus", params={"limit": 201}).status_code == 422


def test_a_store_that_cannot_answer_is_a_503_on_every_new_route(client: TestClient, graph: EmbeddedGraphStore,
                                                               monkeypatch: pytest.MonkeyPatch):
    from medgraph.stores.errors import StoreUnavailable

    def down(*_: Any, **__: Any) -> Any:
        raise StoreUnavailable("Neo4j at bolt://10.3.4.5:7687 is unavailable: Connection refused")

    for method in ("get_entity", "get_chunks", "runs", "counts"):
        monkeypatch.setattr(graph, method, down)
    for path, params in (("/graph/entity", {"id": "D000001"}), ("/graph/edge", {"source": "D000001", "target": "D000002"}),
                         (f"/chunks/{cid('d1', 0)}", {}), ("/corpus", {})):
        r = client.get(path, params=params)
        assert r.status_code == 503 and "unavailable" in r.json()["detail"] and r.headers["retry-after"], (path, r.text)
        # what failed, in words: no host, port or driver text; the request's ID to look up in the log
        assert "10.3.4.5" not in r.text and "7687" not in r.text and "refused" not in r.text, r.text
        assert r.json()["request_id"] == r.headers["x-request-id"] and len(r.headers["x-request-id"]) == 32


def test_a_replica_that_died_during_the_call_is_a_503(client: TestClient, graph: EmbeddedGraphStore,
                                                     monkeypatch: pytest.MonkeyPatch):
    """A retriever replica killed while it answers: Serve raises ``ActorDiedError`` (or a
    ``RayTaskError`` wrapping it, from a call whose upstream replica died). The request may be
    retried on the replica Serve starts instead: a 503, like a store that is down, not a 500."""
    from ray.exceptions import ActorDiedError, RayTaskError

    for error in (ActorDiedError(), RayTaskError("retrieve", "traceback", ActorDiedError())):
        def died(*_: Any, error: Exception = error, **__: Any) -> Any:
            raise error

        monkeypatch.setattr(graph, "counts", died)
        r = client.get("/corpus")
        assert r.status_code == 503 and r.headers["retry-after"], (type(error), r.text)
        assert r.json()["detail"] == "a backend is unavailable; try again later"


def test_every_response_carries_the_request_id_the_caller_sent_or_a_new_one(client: TestClient):
    sent = client.get("/corpus", headers={"X-Request-ID": "trace-42.a_b"})
    assert sent.status_code == 200 and sent.headers["x-request-id"] == "trace-42.a_b"
    for bad in ("x" * 65, "a b", "<script>", ""):
        r = client.get("/corpus", headers={"X-Request-ID": bad})
        assert r.headers["x-request-id"] != bad and len(r.headers["x-request-id"]) == 32
    first, second = client.get("/health/live"), client.get("/health/live")
    assert first.headers["x-request-id"] != second.headers["x-request-id"]
    assert "request_id" not in client.get("/graph/entity", params={"id": "bad"}).json()  # a 4xx: only the reason


def test_a_run_with_many_failures_is_read_one_page_and_counted_in_the_store(client: TestClient,
                                                                            graph: EmbeddedGraphStore,
                                                                            monkeypatch: pytest.MonkeyPatch):
    from medgraph.schemas import Failure

    graph.start_run("big", {"inputs": ["x"]})
    graph.record_failures("big", [Failure(f"f{i:04d}.pdf", "load", "unreadable") for i in range(1000)])
    graph.finish_run("big", "failed", {})
    limits: list[Any] = []
    read = graph.failures
    monkeypatch.setattr(graph, "failures", lambda run_id=None, limit=None: limits.append(limit) or read(run_id, limit))
    run = client.get("/corpus", params={"limit": 1}).json()["runs"][0]
    assert run["run_id"] == "big" and run["failure_count"] == 1000 and len(run["failures"]) == 50
    assert limits == [50]  # never the whole list


def test_a_slow_key_store_does_not_stall_the_replicas_other_requests(client: TestClient):
    """Key checks and quota counts run in the replica's app-state threads: while one request waits on
    a paused database, the event loop still answers the others (liveness, reads without a key), and
    the waiting one is a 503 after serve.store_timeout_s."""
    import threading

    ingress = client.app.state.ingress  # type: ignore[attr-defined]
    ingress.cfg = ingress.cfg.model_copy(update={"store_timeout_s": 1.5})
    release = threading.Event()

    def stalled_verify(key: str) -> Any:
        release.wait(10)  # a PostgreSQL that does not answer
        return None

    ingress.keys.verify = stalled_verify
    slow: dict[str, Any] = {}
    waiting = threading.Thread(target=lambda: slow.update(r=client.get("/corpus", headers={"X-API-Key": "mgk_x_y"})))
    waiting.start()
    try:
        time.sleep(0.3)  # the keyed request is inside verify now
        started = time.monotonic()
        assert client.get("/health/live").status_code == 200
        assert client.get("/corpus").status_code == 200  # anonymous, a light read
        assert time.monotonic() - started < 1 and waiting.is_alive()
        waiting.join(5)  # the stalled check gives up at serve.store_timeout_s: a 503, not a hang
        assert not waiting.is_alive() and slow["r"].status_code == 503, slow
        assert slow["r"].json()["detail"] == "a data store is unavailable; try again later"
    finally:
        release.set()
        waiting.join(10)


def test_without_keys_other_host_names_and_other_sites_pages_are_refused(client: TestClient):
    """Keys are off in configs/local.yaml: a page on another site must not wake or sleep tiers (its
    POST carries its Origin) nor read the API by rebinding its own name to this address (Host)."""
    assert client.get("/corpus").status_code == 200  # Host 127.0.0.1:8000
    for host in ("localhost:8000", "LOCALHOST", "[::1]:8000", "127.0.0.1"):
        assert client.get("/health/live", headers={"Host": host}).status_code == 200, host
    for host in ("evil.example:8000", "127.0.0.1.evil.example", "attacker"):
        r = client.get("/corpus", headers={"Host": host})
        assert r.status_code == 421 and "allowed_hosts" in r.json()["detail"], host
    for origin in ("https://evil.example", "null", "http://127.0.0.1:9999"):
        r = client.post("/tiers/small/wake", headers={"Origin": origin})
        assert r.status_code == 403 and "another site" in r.json()["detail"], origin
    # the interface's own page, and clients that send no Origin, pass the check (whatever the route says)
    assert client.post("/tiers/small/wake", headers={"Origin": "http://127.0.0.1:8000"}).status_code != 403
    assert client.post("/tiers/small/wake").status_code != 403
    assert client.get("/corpus", headers={"Origin": "https://evil.example"}).status_code == 200  # a read: CORS guards it


def test_api_responses_carry_the_interfaces_security_headers(client: TestClient):
    for r in (client.get("/corpus"), client.get("/graph/entity", params={"id": "bad"})):
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["referrer-policy"] == "no-referrer"
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    ui = client.get("/ui/")
    assert ui.headers.get_list("content-security-policy") == [ui.headers["content-security-policy"]]
    assert "script-src 'self'" in ui.headers["content-security-policy"]  # the interface's own policy, once
    assert client.get("/docs").status_code == 404 and client.get("/redoc").status_code == 404  # no CDN scripts
    assert client.get("/openapi.json").json()["info"]["title"] == "MedGraph"
