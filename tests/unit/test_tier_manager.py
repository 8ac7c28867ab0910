"""The tier manager: wake on demand (one shared wake), idle sleep, never asleep with requests in flight.

The engine here is a test double with a slow, counted wake and sleep (the real llama.cpp engine
runs the same manager in tests/integration/test_tiers.py); the manager, its monitor and the
thread hand-off are the real code.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from medgraph.config.models import AnswerConfig
from medgraph.generate.engines import ExtractiveEngine
from serve.tiers import TierManager, TierUnavailable, iterate_in_thread


class SlowEngine:
    """Records wakes/sleeps; its generate fails if the engine is asleep (as a real model would)."""

    kind = "test"
    name = "slow"

    def __init__(self, wake_s: float = 0.2, fail_wake: bool = False) -> None:
        self.wake_s, self.fail_wake = wake_s, fail_wake
        self.asleep = True
        self.wake_calls = self.sleep_calls = 0
        self.lock = threading.Lock()

    def wake(self) -> None:
        with self.lock:
            self.wake_calls += 1
        time.sleep(self.wake_s)
        if self.fail_wake:
            raise RuntimeError("model file missing")
        self.asleep = False

    def sleep(self) -> None:
        self.sleep_calls += 1
        time.sleep(0.05)
        self.asleep = True

    def is_sleeping(self) -> bool:
        return self.asleep

    def generate(self, *_: object) -> str:
        assert not self.asleep, "generate on a sleeping engine"
        time.sleep(0.1)
        assert not self.asleep, "engine put to sleep during a request"
        return "ok"


async def _request(manager: TierManager, name: str = "t") -> str:
    async with manager.use(name) as engine:
        return await asyncio.to_thread(engine.generate)


def test_concurrent_requests_share_one_wake() -> None:
    async def run() -> None:
        engine = SlowEngine(wake_s=0.3)
        manager = TierManager({"t": (engine, None)})
        results = await asyncio.gather(*(_request(manager) for _ in range(8)))
        assert results == ["ok"] * 8
        stats = manager.stats()["t"]
        assert engine.wake_calls == 1 and stats["wakes"] == 1 and stats["requests"] == 8
        assert stats["state"] == "awake" and stats["in_flight"] == 0
        assert stats["wake_s"]["last"] >= 0.3

    asyncio.run(run())


def test_idle_monitor_sleeps_and_next_request_wakes() -> None:
    async def run() -> None:
        engine = SlowEngine(wake_s=0.05)
        manager = TierManager({"t": (engine, 0.3)}, monitor_interval_s=0.05)
        await _request(manager)
        await asyncio.sleep(0.1)
        assert manager.stats()["t"]["state"] == "awake"  # not idle long enough yet
        await asyncio.sleep(0.5)
        stats = manager.stats()["t"]
        assert stats["state"] == "asleep" and stats["sleeps"] == 1 and engine.asleep
        assert stats["sleep_s"]["last"] is not None
        await _request(manager)  # wake on demand
        assert manager.stats()["t"]["wakes"] == 2 and not engine.asleep
        await manager.close()

    asyncio.run(run())


def test_never_sleeps_with_requests_in_flight() -> None:
    async def run() -> None:
        engine = SlowEngine(wake_s=0.01)
        manager = TierManager({"t": (engine, 0.01)}, monitor_interval_s=0.01)

        async def long_request() -> None:
            async with manager.use("t"):
                for _ in range(20):  # 0.4 s of work, far past idle_sleep_s, with the monitor running
                    await asyncio.sleep(0.02)
                    assert not engine.asleep

        await long_request()
        assert await manager.sleep("t") is True  # idle now: an explicit sleep works
        async with manager.use("t"):
            assert await manager.sleep("t") is False  # refused while a request is in flight
            assert not engine.asleep
        await manager.close()

    asyncio.run(run())


def test_request_during_sleep_waits_then_wakes() -> None:
    async def run() -> None:
        engine = SlowEngine(wake_s=0.05)
        manager = TierManager({"t": (engine, None)})
        await _request(manager)
        sleeping = asyncio.create_task(manager.sleep("t"))
        await asyncio.sleep(0.01)  # the sleep is under way
        assert await _request(manager) == "ok"
        assert await sleeping is True
        assert engine.sleep_calls == 1 and engine.wake_calls == 2 and not engine.asleep

    asyncio.run(run())


def test_failed_wake_is_unavailable_and_retried() -> None:
    async def run() -> None:
        engine = SlowEngine(wake_s=0.01, fail_wake=True)
        manager = TierManager({"t": (engine, None)})
        with pytest.raises(TierUnavailable, match="model file missing"):
            await _request(manager)
        assert manager.stats()["t"]["state"] == "asleep" and "model file missing" in manager.stats()["t"]["last_error"]
        engine.fail_wake = False
        assert await _request(manager) == "ok"  # the next request tries again
        assert manager.stats()["t"]["in_flight"] == 0

    asyncio.run(run())


def test_wake_timeout() -> None:
    async def run() -> None:
        manager = TierManager({"t": (SlowEngine(wake_s=0.5), None)}, wake_timeout_s=0.1)
        with pytest.raises(TierUnavailable, match="did not wake"):
            await _request(manager)

    asyncio.run(run())


def test_extractive_engine_starts_awake_and_sleeps_without_freeing_anything() -> None:
    async def run() -> None:
        manager = TierManager({"x": (ExtractiveEngine(AnswerConfig()), 0.05)}, monitor_interval_s=0.02)
        assert manager.stats()["x"]["state"] == "awake"
        manager.start_monitor()
        await asyncio.sleep(0.2)
        assert manager.stats()["x"]["state"] == "asleep"
        await manager.close()

    asyncio.run(run())


def test_iterate_in_thread_streams_and_propagates_errors() -> None:
    def items():
        yield "a"
        yield "b"
        raise ValueError("boom")

    async def run() -> None:
        got = []
        with pytest.raises(ValueError, match="boom"):
            async for item in iterate_in_thread(items()):
                got.append(item)
        assert got == ["a", "b"]

        closed = threading.Event()

        def endless():
            try:
                n = 0
                while True:
                    n += 1
                    yield n
            finally:
                closed.set()

        async for n in iterate_in_thread(endless()):
            if n == 3:
                break
        await asyncio.sleep(0.2)
        assert closed.is_set()  # the producer stopped when the consumer left

    asyncio.run(run())
