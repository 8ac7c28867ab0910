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

import json
import os
import shutil
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from medgraph.config import load_config
from medgraph.testing.net import free_port
from tests.helpers import require_disposable_neo4j, require_module, unavailable
from tests.integration.test_agent_http import CORPUS

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
NEO4J_URI = f"bolt://{os.environ.get('NEO4J_DEV_HOST', '127.0.0.1')}:{os.environ.get('NEO4J_DEV_PORT', '7687')}"
ADMIN_KEY = "mgk_00000000beef_" + "R" * 43
DAILY = 6  # auth.per_user_daily
ZIKA = "Is Zika virus infection in pregnancy linked to microcephaly?"


def _service_url(env: str, flag: str, what: str) -> str:
    url = os.environ.get(env, "").strip()
    if not url:
        unavailable(f"{env} is not set: start {what} (make test does)", flag)
    return url


@pytest.fixture(scope="module")
def services() -> dict[str, str]:
    require_disposable_neo4j(NEO4J_URI)
    qdrant = _service_url("MEDGRAPH_QDRANT_URL", "MEDGRAPH_REQUIRE_SHARED", "the Qdrant server (make qdrant-start)")
    redis_url = _service_url("MEDGRAPH_REDIS_URL", "MEDGRAPH_REQUIRE_REDIS", "Redis (make redis-start)")
    pg = _service_url("MEDGRAPH_APP_DB_URL", "MEDGRAPH_REQUIRE_POSTGRES", "PostgreSQL (make postgres-start)")
    try:
        httpx.get(f"{qdrant}/collections", timeout=5).raise_for_status()
    except httpx.HTTPError as exc:
        unavailable(f"no Qdrant server at {qdrant} ({exc})", "MEDGRAPH_REQUIRE_SHARED")
    return {"qdrant": qdrant, "redis": redis_url, "postgres": pg}


@pytest.fixture(scope="module")
def app(services: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Any:
    from ray import serve

    from jobs.build_corpus import build_corpus
    from medgraph.auth.keys import ApiKeyStore
    from serve.demo import start

    psycopg = require_module("psycopg", "MEDGRAPH_REQUIRE_POSTGRES")
    redis = require_module("redis", "MEDGRAPH_REQUIRE_REDIS")
    tag = uuid.uuid4().hex[:10]
    schema, prefix, collection = f"medgraph_replicas_{tag}", f"medgraph-test-{tag}", f"replicas_{tag}"
    with psycopg.connect(services["postgres"], autocommit=True) as db:
        db.execute(f'CREATE SCHEMA "{schema}"')  # a generated name, not user input
    app_db = f"{services['postgres']}?options={quote(f'-csearch_path={schema}', safe='')}"
    root = tmp_path_factory.mktemp("replicas")
    corpus = root / "corpus"
    corpus.mkdir()
    (corpus / "docs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in CORPUS))
    literature = root / "literature"
    shutil.copytree(REPO / "tests" / "fixtures" / "agent" / "literature", literature)
    sets = [
        f'stores.graph={{kind: neo4j, uri: "{NEO4J_URI}", password_env: NEO4J_DEV_PASSWORD}}',
        f'stores.vector={{kind: qdrant_server, url: "{services["qdrant"]}", collection: {collection}}}',
        f"app.path={app_db}", f"redis.url={services['redis']}", f"redis.prefix={prefix}",
        f"serve.port={free_port()}", "serve.tier_admin=false",
        "auth.required=true", f"auth.per_user_daily={DAILY}", "auth.global_daily=100000",
        "auth.max_concurrent=1", "auth.max_queue=32", "retrieval.ppr_refresh_s=0.5",
        "serve.ingress.num_replicas=2", "serve.retriever.num_replicas=2", "serve.agent.num_replicas=2",
        f'gaps.sources=[{{"kind": "local", "path": "{literature}"}}]',
    ]
    cfg = load_config(REPO / "configs" / "local.yaml", sets)
    _wipe_graph(cfg)
    assert build_corpus(cfg, [str(corpus)])["status"] == "succeeded"
    ApiKeyStore(cfg.app.path).bootstrap_admin(ADMIN_KEY)
    url = start(cfg)
    yield {"url": url, "cfg": cfg, "admin": {"Authorization": f"Bearer {ADMIN_KEY}"},
           "redis": redis.Redis.from_url(services["redis"]), "prefix": prefix}
    serve.shutdown()
    _wipe_graph(cfg)
    httpx.delete(f"{services['qdrant']}/collections/{collection}", timeout=30)
    client = redis.Redis.from_url(services["redis"])
    for key in client.scan_iter(match=f"{prefix}:*"):
        client.delete(key)
    with psycopg.connect(services["postgres"], autocommit=True) as db:
        db.execute(f'DROP SCHEMA "{schema}" CASCADE')


def _wipe_graph(cfg: Any) -> None:
    from medgraph.stores import make_graph_store

    store = make_graph_store(cfg.stores.graph)
    try:
        with store._driver.session() as session:
            session.run("MATCH (n) WHERE n:Entity OR n:Chunk OR n:Document OR n:Run OR n:Failure OR n:Community "
                        "OR n:CommunityBuild DETACH DELETE n").consume()
    finally:
        store.close()


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
