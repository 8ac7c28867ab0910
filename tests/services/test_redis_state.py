"""Quotas, the concurrency gate and the query-analysis cache shared through a real Redis server.

Uses ``$MEDGRAPH_REDIS_URL`` when set, else starts ``cluster/redis/redis-dev.sh`` on a free port
in a temporary directory (and stops it afterwards). Skips with the reason when no redis-server
is installed, unless ``MEDGRAPH_REQUIRE_REDIS=1``, in which case it fails. Every test writes
under its own key prefix and deletes only those keys (never FLUSHDB), so a shared server is safe.
The fallback tests point at a closed port and at a socket that never answers.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from medgraph.auth.gate import ConcurrencyGate, GateFull
from medgraph.auth.quota import QuotaExceeded, QuotaTracker
from medgraph.config import load_config
from medgraph.retrieve.analysis_cache import (
    LruAnalysisCache,
    RedisAnalysisCache,
    TieredAnalysisCache,
    make_analysis_cache,
)
from medgraph.retrieve.query import QueryAnalyzer
from medgraph.schemas import Mention
from medgraph.testing.net import free_port
from tests.helpers import REPO, require_module, unavailable

SCRIPT = REPO / "cluster" / "redis" / "redis-dev.sh"


def _unavailable(reason: str) -> None:
    unavailable(reason, "MEDGRAPH_REQUIRE_REDIS")


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    try:
        import redis
    except ImportError:
        _unavailable("python redis client not installed (pip install redis)")
    url = os.environ.get("MEDGRAPH_REDIS_URL")
    run_dir: Path | None = None
    if not url:
        run_dir = tmp_path_factory.mktemp("redis")
        env = {**os.environ, "REDIS_PORT": str(free_port())}
        done = subprocess.run(["bash", str(SCRIPT), "start", str(run_dir)], env=env, capture_output=True, text=True)
        if done.returncode == 3:
            _unavailable("redis-server not installed (apt-get install redis-server)")
        if done.returncode != 0:
            _unavailable(f"redis-dev.sh start failed: {done.stderr.strip()}")
        url = (run_dir / "url").read_text().strip()
    try:
        redis.Redis.from_url(url, socket_timeout=2).ping()
    except redis.RedisError as exc:
        _unavailable(f"no Redis answering at {url} ({exc})")
    yield url
    if run_dir is not None:
        subprocess.run(["bash", str(SCRIPT), "stop", str(run_dir)], env=env, check=False)


@pytest.fixture
def prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test alone; its keys are deleted afterwards."""
    import redis

    name = f"mgtest{uuid.uuid4().hex[:10]}"
    yield name
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=f"{name}:*", count=1000))
    if keys:
        client.delete(*keys)
    client.close()


def _client(url: str, timeout_s: float = 2.0) -> Any:
    from medgraph.auth.redis_client import connect

    return connect(url, None, timeout_s)


def _cfg(tmp_path: Path, url: str | None, prefix: str = "medgraph", **auth: Any) -> Any:
    overrides = [f"app.path={tmp_path / 'app.sqlite'}", f"redis.prefix={prefix}", "redis.timeout_s=0.2"]
    if url:
        overrides.append(f"redis.url={url}")
    overrides += [f"auth.{k}={v}" for k, v in auth.items()]
    return load_config(None, overrides)


NOON = datetime(2025, 3, 14, 12, 0, tzinfo=UTC).timestamp()


# --- in-process defaults ------------------------------------------------------------------------


def test_factories_return_in_process_versions_without_url(tmp_path: Path) -> None:
    from medgraph.auth.redis_state import make_gate, make_quota

    cfg = _cfg(tmp_path, None, per_user_daily=2, max_concurrent=3)
    quota, gate, cache = make_quota(cfg), make_gate(cfg), make_analysis_cache(cfg, "v1")
    assert type(quota) is QuotaTracker and quota.per_user_daily == 2
    assert type(gate) is ConcurrencyGate and gate.max_concurrent == 3
    assert type(cache) is LruAnalysisCache and cache.size == cfg.retrieval.analysis_cache
    quota.close()


def test_query_analysis_json_round_trip() -> None:
    from medgraph.retrieve.types import QueryAnalysis

    a = QueryAnalysis("Was hilft bei Diabetes?", "de",
                      (Mention(14, 22, "Diabetes", "D003920", "Disease", "exact", 1.0),),
                      (("en", "What helps with diabetes?"),), (("D001", 0.5),), (("D003920", "zh", "糖尿病"),))
    import json

    assert QueryAnalysis.from_dict(json.loads(json.dumps(a.to_dict()))) == a


# --- quotas -------------------------------------------------------------------------------------


def _hammer_quota(url: str, prefix: str, user: str, per_user: int, global_daily: int, tries: int,
                  start: Any, out: Any) -> None:
    from medgraph.auth.redis_state import RedisQuotaTracker

    tracker = RedisQuotaTracker(_client(url), per_user, global_daily, prefix)
    start.wait(10)
    admitted = 0
    for _ in range(tries):
        try:
            tracker.consume(user, now=NOON)
            admitted += 1
        except QuotaExceeded as exc:
            assert exc.scope == "user"
    tracker.close()
    out.put(admitted)


def _run_processes(target: Any, args_of: list[tuple[Any, ...]]) -> list[Any]:
    ctx = multiprocessing.get_context("fork")  # each child opens its own clients after the fork
    start, out = ctx.Barrier(len(args_of)), ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, start, out)) for args in args_of]
    for p in procs:
        p.start()
    results = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    return results


def test_user_quota_admits_exactly_n_across_two_processes(redis_url: str, prefix: str) -> None:
    from medgraph.auth.redis_state import RedisQuotaTracker

    n = 300
    admitted = _run_processes(_hammer_quota, [(redis_url, prefix, "alice", n, 10_000, 400)] * 2)
    assert sum(admitted) == n and all(a > 0 for a in admitted)
    tracker = RedisQuotaTracker(_client(redis_url), n, 10_000, prefix)
    usage = tracker.usage("alice", now=NOON)
    assert usage["user"] == {"user_id": "alice", "used": n, "limit": n, "remaining": 0}
    assert usage["global"]["used"] == n  # refused requests are not counted
    tracker.close()


def test_global_quota_and_user_checked_first(redis_url: str, prefix: str) -> None:
    from medgraph.auth.redis_state import RedisQuotaTracker

    tracker = RedisQuotaTracker(_client(redis_url), 2, 5, prefix)
    first = tracker.consume("u0", now=NOON)
    assert first["user"] == 1 and first["global"] == 4
    tracker.consume("u0", now=NOON)
    with pytest.raises(QuotaExceeded) as exc:
        tracker.consume("u0", now=NOON)
    assert exc.value.scope == "user" and exc.value.limit == 2
    for user in ("u1", "u2", None):
        tracker.consume(user, now=NOON)
    with pytest.raises(QuotaExceeded) as exc:
        tracker.consume("u3", now=NOON)
    assert exc.value.scope == "global" and exc.value.limit == 5
    with pytest.raises(QuotaExceeded) as exc:  # both exhausted: the user's limit is named
        tracker.consume("u0", now=NOON)
    assert exc.value.scope == "user"
    usage = tracker.usage(now=NOON)
    assert usage["global"] == {"used": 5, "limit": 5, "remaining": 0}
    assert usage["users"] == {"anonymous": 1, "u0": 2, "u1": 1, "u2": 1} and usage["users_counted"] == 4
    assert usage["day"] == "2025-03-14"
    local = QuotaTracker(":memory:", 2, 5)
    assert set(local.usage(now=NOON)) == set(usage)
    local.close()
    import medgraph.auth.redis_state as redis_state

    with pytest.MonkeyPatch.context() as mp:  # the busiest callers only, as the SQL tracker lists them
        mp.setattr(redis_state, "USAGE_USERS", 2)
        assert tracker.usage(now=NOON)["users"] == {"anonymous": 1, "u0": 2}
    tracker.close()


def test_day_rollover_and_key_expiry(redis_url: str, prefix: str) -> None:
    from medgraph.auth.redis_state import DAY_MARGIN_S, RedisQuotaTracker

    tracker = RedisQuotaTracker(_client(redis_url), 1, 100, prefix)
    late = datetime(2025, 3, 14, 23, 59, 59, tzinfo=UTC).timestamp()
    out = tracker.consume("bob", now=late)
    midnight = datetime(2025, 3, 15, tzinfo=UTC).timestamp()
    assert out["resets_at"] == midnight
    with pytest.raises(QuotaExceeded) as exc:
        tracker.consume("bob", now=late + 0.5)
    assert exc.value.resets_at == midnight
    assert tracker.consume("bob", now=midnight + 1)["user"] == 0  # a new day
    assert tracker.usage("bob", now=late)["user"]["used"] == 1
    assert tracker.usage("bob", now=midnight + 1)["user"]["used"] == 1
    ttl = tracker.client.ttl(f"{prefix}:quota:2025-03-14")  # the rest of its day and the margin
    assert DAY_MARGIN_S - 5 <= ttl <= DAY_MARGIN_S + 2
    tracker.close()


# --- concurrency gate ---------------------------------------------------------------------------


def _gate(url: str, prefix: str, max_concurrent: int, max_queue: int | None = None, **kw: Any) -> Any:
    from medgraph.auth.redis_client import connect_async
    from medgraph.auth.redis_gate import RedisConcurrencyGate

    return RedisConcurrencyGate(connect_async(url, None, 2.0), max_concurrent, max_queue, prefix,
                                sync_client=_client(url), **kw)


def _hammer_gate(url: str, prefix: str, cap: int, tasks: int, start: Any, out: Any) -> None:
    import redis.asyncio as aioredis

    async def main() -> int:
        gate = _gate(url, prefix, cap)
        counter = aioredis.Redis.from_url(url)
        inflight, peak = f"{prefix}:test:inflight", f"{prefix}:test:peak"
        bump = counter.register_script(
            "local n = redis.call('INCR', KEYS[1]) "
            "if n > tonumber(redis.call('GET', KEYS[2]) or '0') then redis.call('SET', KEYS[2], n) end return n")

        async def one() -> None:
            async with gate.slot():
                await bump(keys=[inflight, peak])
                await asyncio.sleep(0.02)
                await counter.decr(inflight)

        start.wait(10)
        await asyncio.gather(*(one() for _ in range(tasks)))
        await counter.aclose()
        await gate.aclose()
        return tasks

    out.put(asyncio.run(main()))


def test_gate_caps_in_flight_across_two_processes(redis_url: str, prefix: str) -> None:
    import redis

    cap = 3
    done = _run_processes(_hammer_gate, [(redis_url, prefix, cap, 15)] * 2)
    assert done == [15, 15]
    client = redis.Redis.from_url(redis_url)
    assert int(client.get(f"{prefix}:test:peak") or 0) == cap  # reached, never exceeded
    assert int(client.get(f"{prefix}:test:inflight") or 0) == 0
    assert client.zcard(f"{prefix}:gate:holders") == 0 and client.zcard(f"{prefix}:gate:queue") == 0
    client.close()


async def _wait_for(cond: Any, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


def _run(main: Any, timeout_s: float = 120.0) -> None:
    """``asyncio.run(main())``, failing after ``timeout_s`` instead of waiting on a slot forever."""
    asyncio.run(asyncio.wait_for(main(), timeout_s))


def test_gate_fifo_positions_full_and_cancel(redis_url: str, prefix: str) -> None:
    async def main() -> None:
        # two "replicas". Waiters stay in the line for a minute without a heartbeat: with the default
        # 5 s, an event loop stalled that long (a loaded CI machine) dropped a waiter, the line was
        # no longer full, and the GateFull probe below queued behind the holder for good.
        a, b = (_gate(redis_url, prefix, 1, 3, waiter_ttl_s=60.0) for _ in range(2))
        order: list[str] = []
        positions: dict[str, int] = {}
        release = asyncio.Event()

        async def holder() -> None:
            async with a.slot():
                order.append("holder")
                await release.wait()

        async def waiter(gate: Any, name: str) -> None:
            async with gate.slot(lambda p: positions.__setitem__(name, p)):
                order.append(name)

        tasks = [asyncio.ensure_future(holder())]
        await _wait_for(lambda: order == ["holder"])
        for i, name in enumerate(("w1", "w2", "w3")):
            tasks.append(asyncio.ensure_future(waiter(b if i % 2 == 0 else a, name)))
            await _wait_for(lambda name=name: name in positions)
        assert positions == {"w1": 1, "w2": 2, "w3": 3}
        assert a.active == 1 and b.queued == 3
        with pytest.raises(GateFull):  # not queued: a wait here would be a TimeoutError
            await asyncio.wait_for(b.acquire(), 10.0)
        tasks[2].cancel()  # w2 leaves the line
        await asyncio.gather(tasks[2], return_exceptions=True)
        await _wait_for(lambda: a.queued == 2)
        release.set()
        await asyncio.gather(*tasks[:2], *tasks[3:])
        assert order == ["holder", "w1", "w3"]
        assert (await a.counts()) == (0, 0)
        await a.aclose()
        await b.aclose()

    _run(main)


def test_gate_lease_expiry_frees_a_dead_holders_slot(redis_url: str, prefix: str) -> None:
    async def main() -> None:
        dead = _gate(redis_url, prefix, 1, slot_lease_s=0.4)
        await dead.acquire()  # held and never renewed: its replica "died"
        live = _gate(redis_url, prefix, 1, slot_lease_s=0.4)
        t0 = time.monotonic()
        positions: list[int] = []
        async with live.slot(positions.append):
            waited = time.monotonic() - t0
            assert 0.2 < waited < 2.0 and positions == [1]
            # a live holder renews its lease: another replica stays out past the lease time
            other = asyncio.ensure_future(dead.acquire())
            await asyncio.sleep(1.0)
            assert not other.done()
        await asyncio.wait_for(other, 2.0)
        await dead.release(other.result())
        await dead.aclose()
        await live.aclose()

    _run(main)


def test_gate_lost_ticket_requeues(redis_url: str, prefix: str) -> None:
    async def main() -> None:
        gate = _gate(redis_url, prefix, 1, waiter_ttl_s=0.3)
        holder = await gate.acquire()
        waiting = asyncio.ensure_future(gate.acquire())
        await _wait_for(lambda: gate.queued == 1)
        await gate.client.delete(f"{prefix}:gate:queue", f"{prefix}:gate:alive")  # the line is lost
        await asyncio.sleep(0.1)
        assert gate.queued == 1  # queued again
        await gate.release(holder)
        ticket = await asyncio.wait_for(waiting, 2.0)
        await gate.release(ticket)
        await gate.aclose()

    _run(main)


# --- query-analysis cache -----------------------------------------------------------------------


class _Extractor:
    """NER + linking stand-in that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0
        entity = SimpleNamespace(name="Diabetes Mellitus", names={"de": ["Diabetes mellitus"], "zh": ["糖尿病"]})
        self.vocab = SimpleNamespace(get=lambda mesh_id: entity if mesh_id == "D003920" else None, glossary=None)

    def for_queries(self) -> _Extractor:  # the question-analysis copy: the same stand-in
        return self

    def extract(self, text: str, language: str) -> list[Mention]:
        self.calls += 1
        i = text.lower().find("diabetes")
        return [Mention(i, i + 8, text[i:i + 8], "D003920", "Disease", "exact", 1.0)] if i >= 0 else []


def _analyzer(url: str, prefix: str, version: str = "v1") -> tuple[QueryAnalyzer, _Extractor, TieredAnalysisCache]:
    ex = _Extractor()
    cache = TieredAnalysisCache(LruAnalysisCache(16), RedisAnalysisCache(_client(url), version, 60, prefix))
    return QueryAnalyzer(ex, cache=cache), ex, cache  # type: ignore[arg-type]


def test_second_replica_hits_the_shared_cache(redis_url: str, prefix: str) -> None:
    first, ex1, _ = _analyzer(redis_url, prefix)
    computed = first.analyze("What  treats diabetes?", "en")
    assert ex1.calls == 1 and first.misses == 1
    second, ex2, cache2 = _analyzer(redis_url, prefix)
    again = second.analyze("What treats   diabetes?", "en")
    assert again == computed and ex2.calls == 0  # no NER + linking on the second replica
    assert second.hits == 1 and cache2.shared_hits == 1
    second.analyze("What treats diabetes?", "en")
    assert cache2.local_hits == 1 and ex2.calls == 0
    keys = list(cache2.shared.client.scan_iter(match=f"{prefix}:qa:*"))
    assert len(keys) == 1 and len(keys[0].split(":")[-1]) == 64
    assert 0 < cache2.shared.client.ttl(keys[0]) <= 60
    rebuilt, ex3, _ = _analyzer(redis_url, prefix, version="v2")  # another vocabulary: no stale entry
    rebuilt.analyze("What treats diabetes?", "en")
    assert ex3.calls == 1


# --- Redis down ---------------------------------------------------------------------------------


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers (a Redis slower than any timeout)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        yield int(s.getsockname()[1])


@pytest.mark.parametrize("kind", ["closed", "silent"])
def test_redis_down_falls_back_to_local_state_quickly(tmp_path: Path, kind: str, silent_port: int,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    require_module("redis", "MEDGRAPH_REQUIRE_REDIS")
    from medgraph.auth.redis_gate import SharedGate
    from medgraph.auth.redis_state import SharedQuota, make_gate, make_quota

    port = free_port() if kind == "closed" else silent_port
    cfg = _cfg(tmp_path, f"redis://127.0.0.1:{port}/0", per_user_daily=2, max_concurrent=1, max_queue=1)
    caplog.set_level(logging.WARNING, logger="medgraph")
    quota = make_quota(cfg)
    assert isinstance(quota, SharedQuota)
    tried: list[str] = []  # calls that reach Redis
    for name in ("consume", "usage"):
        method = getattr(quota.shared, name)
        setattr(quota.shared, name, lambda *a, _m=method, _n=name: tried.append(_n) or _m(*a))
    t0 = time.monotonic()
    quota.consume("carol")
    first = time.monotonic() - t0
    quota.consume("carol")
    with pytest.raises(QuotaExceeded):  # the local limit applies
        quota.consume("carol")
    assert quota.usage("carol")["user"]["used"] == 2
    assert first < 1.0  # the client's timeout, not a hang
    assert tried == ["consume"]  # Redis is tried once; until its retry time, no call waits on it
    quota.close()

    async def gate_main() -> list[str]:
        gate = make_gate(cfg)
        assert isinstance(gate, SharedGate)
        order: list[str] = []

        async def run(name: str) -> None:
            async with gate.slot():
                order.append(name)
                await asyncio.sleep(0.01)

        await asyncio.wait_for(asyncio.gather(run("a"), run("b")), 3.0)
        await gate.aclose()
        return order

    assert asyncio.run(gate_main()) == ["a", "b"]

    cache = make_analysis_cache(cfg, "v1")
    assert isinstance(cache, TieredAnalysisCache)
    ex = _Extractor()
    analyzer = QueryAnalyzer(ex, cache=cache)  # type: ignore[arg-type]
    t0 = time.monotonic()
    analyzer.analyze("diabetes?", "en")
    analyzer.analyze("diabetes?", "en")
    assert ex.calls == 1 and time.monotonic() - t0 < 1.0
    outages = [r for r in caplog.records if "redis unavailable" in r.getMessage()]
    assert len(outages) == 3  # once each for quotas, gate and cache
