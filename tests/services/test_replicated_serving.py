"""The Serve app as the cluster runs it: server stores and shared state, every deployment replicated.

The corpus is built into Neo4j + GDS and the Qdrant server; the app state (users, keys, sessions,
memories) is on PostgreSQL, quotas and the concurrency cap in Redis. The app runs with two ingress,
two retriever and two agent replicas, keys required, through real Serve HTTP. Every response
names its ingress replica (``X-MedGraph-Replica``), so the tests see both replicas at work:
- the agent answers with citations from the server stores;
- a key issued through one ingress replica works on the other;
- a daily quota of N admits exactly N questions across replicas;
- a concurrency cap of 1 never has two questions in flight (Redis's slot set, sampled throughout);
- gap completion writes a fetched document into the server stores through whichever retriever
  replica ran it, and the next questions, through both ingress replicas, find it.

Services come from ``make test`` (``MEDGRAPH_QDRANT_URL``, ``MEDGRAPH_REDIS_URL``,
``MEDGRAPH_APP_DB_URL``, the Neo4j dev server); a missing one skips the module with the reason,
or fails it under the matching ``MEDGRAPH_REQUIRE_*`` flag (CI). The test writes only a Qdrant
collection, a Redis key prefix and a PostgreSQL schema of its own, and Neo4j only on the
disposable dev server.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from benchmarks.replicated import start_replicated
from tests.helpers import REPO, require_module, server_services
from tests.integration.test_agent_http import CORPUS

pytestmark = pytest.mark.integration
LITERATURE = REPO / "tests" / "fixtures" / "agent" / "literature"
DAILY = 6  # auth.per_user_daily
ZIKA = "Is Zika virus infection in pregnancy linked to microcephaly?"


@pytest.fixture(scope="module")
def services() -> dict[str, str]:
    return server_services()


@pytest.fixture(scope="module")
def app(services: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Any:
    require_module("psycopg", "MEDGRAPH_REQUIRE_POSTGRES")
    redis = require_module("redis", "MEDGRAPH_REQUIRE_REDIS")
    served = start_replicated(services, tmp_path_factory.mktemp("replicas"), CORPUS, LITERATURE, [
        f"auth.per_user_daily={DAILY}", "auth.global_daily=100000", "auth.max_concurrent=1", "auth.max_queue=32"])
    yield {"url": served.url, "cfg": served.cfg, "admin": served.admin,
           "redis": redis.Redis.from_url(services["redis"]), "prefix": served.prefix}
    served.close()


def _user(app: dict[str, Any], name: str) -> tuple[dict[str, str], str]:
    r = httpx.post(f"{app['url']}/admin/users", json={"user_id": name}, headers=app["admin"], timeout=60)
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['api_key']}"}, r.headers["x-medgraph-replica"]


def test_the_agent_answers_from_the_server_stores(app: dict[str, Any]) -> None:
    headers, _ = _user(app, "reader")
    r = httpx.post(f"{app['url']}/chat", json={"message": "What are the side effects of metformin?"},
                   headers=headers, timeout=180)
    assert r.status_code == 200, r.text
    body = r.json()
    assert not body["refused"] and body["citations"] and "metformin" in {c["doc_id"] for c in body["citations"]}
    assert body["agent"] and body["model_used"]
    ready = httpx.get(f"{app['url']}/health/ready", headers=app["admin"], timeout=60).json()
    assert ready["stores"]["documents"] >= len(CORPUS) and ready["stores"]["vectors"] == ready["stores"]["chunks"]


def test_a_key_issued_through_one_replica_works_on_the_other(app: dict[str, Any]) -> None:
    headers, issued_by = _user(app, "roamer")
    seen: dict[str, int] = {}
    for _ in range(40):
        r = httpx.get(f"{app['url']}/v1/models", headers=headers, timeout=60)
        assert r.status_code == 200, r.text
        seen[r.headers["x-medgraph-replica"]] = seen.get(r.headers["x-medgraph-replica"], 0) + 1
        if len(seen) == 2:
            break
    assert len(seen) == 2 and issued_by in seen, seen  # verified by the replica that did not issue it


def test_a_daily_quota_of_n_admits_exactly_n_across_replicas(app: dict[str, Any]) -> None:
    headers, _ = _user(app, "counted")

    def ask(_: int) -> tuple[int, str]:
        r = httpx.post(f"{app['url']}/route", json={"message": "metformin side effects?"}, headers=headers, timeout=120)
        return r.status_code, r.headers.get("x-medgraph-replica", "")

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(ask, range(3 * DAILY)))
    codes = [c for c, _ in results]
    assert codes.count(200) == DAILY and codes.count(429) == 2 * DAILY, codes
    assert len({rep for _, rep in results}) == 2


def test_the_concurrency_cap_holds_across_replicas(app: dict[str, Any]) -> None:
    headers, _ = _user(app, "crowd")
    holders = f"{app['prefix']}:gate:holders"
    peak, stop = [0], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], int(app["redis"].zcard(holders)))
            time.sleep(0.005)

    def stream(i: int) -> tuple[bool, str]:
        queued = False
        with httpx.stream("POST", f"{app['url']}/chat/stream", headers=headers, timeout=180,
                          json={"message": f"What are the side effects of contrast media? ({i})"}) as r:
            assert r.status_code == 200
            for line in r.iter_lines():
                if line.startswith("data: ") and '"queued"' in line:
                    queued = True
            return queued, r.headers.get("x-medgraph-replica", "")

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        with ThreadPoolExecutor(max_workers=5) as pool:
            results = list(pool.map(stream, range(5)))
    finally:
        stop.set()
        sampler.join()
    assert peak[0] == 1, peak  # one question in flight at a time, in all replicas together
    assert any(q for q, _ in results) and len({rep for _, rep in results}) == 2, results


def test_gap_completion_writes_through_a_replica_and_every_replica_finds_it(app: dict[str, Any]) -> None:
    headers, _ = _user(app, "curious")
    first = httpx.post(f"{app['url']}/chat", json={"message": ZIKA}, headers=headers, timeout=300).json()
    rounds = first["agent"]["gap_completion"]["rounds"]
    assert rounds and rounds[0]["ingested"], first["agent"]
    new_doc = rounds[0]["ingested"][0]
    assert not first["refused"] and new_doc in {c["doc_id"] for c in first["citations"]}
    ready = httpx.get(f"{app['url']}/health/ready", headers=app["admin"], timeout=60).json()["stores"]
    assert ready["documents"] == len(CORPUS) + 1 and ready["vectors"] == ready["chunks"]
    replicas: set[str] = set()
    askers = [_user(app, f"curious{i}")[0] for i in range(4)]  # each has its own daily quota
    for i in range(4 * (DAILY - 1)):  # until both ingress replicas (and the retrievers behind them) answered
        r = httpx.post(f"{app['url']}/chat", json={"message": ZIKA}, headers=askers[i % 4], timeout=300)
        assert r.status_code == 200, r.text
        body = r.json()
        replicas.add(r.headers["x-medgraph-replica"])
        assert new_doc in {c["doc_id"] for c in body["citations"]}
        assert not body["agent"]["gap_completion"]["rounds"]  # found, not fetched again
        if len(replicas) == 2 and i >= 3:
            break
    assert len(replicas) == 2
