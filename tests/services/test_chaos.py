"""Chaos under load, shortened: ``benchmarks/chaos.py``'s cases, run by its own code, as goals.

The replicated app of test_replicated_serving.py (``benchmarks.replicated``), with the quotas
lifted, and four clients asking questions, streaming answers, continuing their sessions and issuing
keys, while one dependency goes away at a third of the case (12 s) and comes back at two thirds:
PostgreSQL paused (SIGSTOP, for longer than the app's ``serve.store_timeout_s``), Redis stopped,
one retriever replica killed. Every case must: answer every request (none without a response
within the client's timeout, no stream cut off) with no status >= 500 but 503; lose no
acknowledged write (each issued key works, each appended message is in its session's history);
answer a question well within 10 s of the dependency's return; and, with PostgreSQL paused, keep
``/health/live`` under 1 s. Each case restarts what it stopped and leaves the app ready, for the
tests after it. Neo4j and the Qdrant server stopped, PostgreSQL stopped and an ingress replica
killed are the benchmark's only: with the app's start (~110 s here) they would take this module
past 3 minutes on two CPUs (a Neo4j restart alone takes ~30 s).

Services as in test_replicated_serving.py (``make test`` starts them); the servers must also be
the ones of the make targets (their folders under ``MEDGRAPH_HOME``), which the cases stop and
start. A missing one skips the module with the reason, or fails it under the matching
``MEDGRAPH_REQUIRE_*`` flag.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks import chaos
from benchmarks.replicated import start_replicated
from tests.helpers import REPO, require_module, server_services, unavailable
from tests.integration.test_agent_http import CORPUS

pytestmark = pytest.mark.integration
LITERATURE = REPO / "tests" / "fixtures" / "agent" / "literature"
CLIENTS = 4
DURATION_S = 12.0  # each dependency is away for 4 s ...
STORE_TIMEOUT_S = 2  # ... longer than serve.store_timeout_s: a paused database's callers get their 503
FLAGS = {"postgres": "MEDGRAPH_REQUIRE_POSTGRES", "redis": "MEDGRAPH_REQUIRE_REDIS",
         "qdrant": "MEDGRAPH_REQUIRE_SHARED", "neo4j": "MEDGRAPH_REQUIRE_NEO4J"}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Any:
    services = server_services()
    require_module("psycopg", "MEDGRAPH_REQUIRE_POSTGRES")
    require_module("redis", "MEDGRAPH_REQUIRE_REDIS")
    control = chaos.Services(services)
    try:
        control.check()
    except chaos.NotControllable as exc:
        unavailable(f"the cases cannot stop and restart the servers: {exc}", FLAGS[exc.service])
    served = start_replicated(services, tmp_path_factory.mktemp("chaos"), CORPUS, LITERATURE,
                              [*chaos.app_overrides(), f"serve.store_timeout_s={STORE_TIMEOUT_S}"])
    try:
        yield served, control, chaos.user_keys(served.url, served.admin, CLIENTS)
    finally:
        served.close()


@pytest.mark.parametrize("case", ["postgres_pause", "redis_stop", "retriever_kill"])
def test_the_app_rides_out_a_dependency_going_away_under_load(app: Any, case: str) -> None:
    served, control, keys = app
    result = chaos.run_case(served, control, case, keys, DURATION_S, after_return_s=0)
    assert not result["goals_failed"], json.dumps(result, indent=1)
    assert result["requests"]["answered_2xx"] and result["writes"]["acknowledged"], result["requests"]
