"""Tier manager and the per-engine Serve deployment (``TierService``, deployed as ``llm-<engine>``).

``TierManager`` (asyncio, one per replica) owns the lifecycle of its engines:

- **wake on demand**: a request for a sleeping engine wakes it; concurrent requests arriving
  during a wake await the same wake (one load, not N);
- **idle sleep**: a background monitor puts an engine to sleep after ``idle_sleep_s`` without a
  request; it never sleeps an engine with requests in flight (a request counts as in flight
  from its arrival, including while it waits for a wake), and a wake that arrives during a sleep
  waits for the sleep to finish, then wakes;
- **stats**: wake / sleep counts and latencies, resident memory freed by the last sleep, state
  and in-flight count (served by ``/health/ready`` and ``/metrics``), and Ray metrics.

Engine calls (``medgraph.generate.engines``) block, so they run in worker threads; the event loop
stays free for other requests and for the monitor. ``TierService`` takes the config and the
engine name (plus, for the vLLM kind, the handle of its ``LLMServer`` deployment).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from medgraph.config import MedGraphConfig
from medgraph.generate.base import Answer
from medgraph.generate.engines import Engine, make_engine
from medgraph.llm.base import ChatParams, Message, resident_memory_bytes
from medgraph.retrieve.types import Candidate, QueryAnalysis

if TYPE_CHECKING:
    from ray.serve.handle import DeploymentHandle

log = logging.getLogger(__name__)

AWAKE, ASLEEP, WAKING, SLEEPING = "awake", "asleep", "waking", "going_to_sleep"


class TierUnavailable(RuntimeError):
    """The tier could not be woken in time (or its wake failed): the API answers 503."""


@dataclass
class _Lifecycle:
    engine: Engine
    idle_sleep_s: float | None
    state: str = AWAKE
    in_flight: int = 0
    last_used: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    wake_task: asyncio.Task[None] | None = None
    wakes: int = 0
    sleeps: int = 0
    requests: int = 0
    wake_s: deque[float] = field(default_factory=lambda: deque(maxlen=100))
    sleep_s: deque[float] = field(default_factory=lambda: deque(maxlen=100))
    memory_freed_bytes: int = 0
    last_error: str = ""


def _summary(values: deque[float]) -> dict[str, float | None]:
    if not values:
        return {"last": None, "p50": None, "max": None}
    ordered = sorted(values)
    return {"last": round(values[-1], 4), "p50": round(ordered[len(ordered) // 2], 4), "max": round(ordered[-1], 4)}


Observer = Callable[[str, str, float], None]  # (event: wake | sleep, engine, seconds)


class TierManager:
    def __init__(self, engines: dict[str, tuple[Engine, float | None]], monitor_interval_s: float = 1.0,
                 wake_timeout_s: float = 300.0, observer: Observer | None = None) -> None:
        self._tiers = {name: _Lifecycle(engine, idle) for name, (engine, idle) in engines.items()}
        for lc in self._tiers.values():
            lc.state = ASLEEP if lc.engine.is_sleeping() else AWAKE
        self.monitor_interval_s, self.wake_timeout_s = monitor_interval_s, wake_timeout_s
        self.observer = observer
        self._monitor: asyncio.Task[None] | None = None

    def _lc(self, name: str) -> _Lifecycle:
        try:
            return self._tiers[name]
        except KeyError:
            raise KeyError(f"unknown engine {name!r}; known: {sorted(self._tiers)}") from None

    # --- requests -------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def use(self, name: str) -> AsyncIterator[Engine]:
        """Hold the engine awake for one request (waking it first if needed)."""
        self.start_monitor()
        lc = self._lc(name)
        lc.in_flight += 1
        lc.requests += 1
        try:
            await self._ensure_awake(name, lc)
            yield lc.engine
        finally:
            lc.in_flight -= 1
            lc.last_used = time.monotonic()

    async def _ensure_awake(self, name: str, lc: _Lifecycle) -> None:
        if lc.state == AWAKE:
            return
        if lc.wake_task is None or lc.wake_task.done():
            lc.wake_task = asyncio.create_task(self._wake(name, lc))
        try:
            await asyncio.wait_for(asyncio.shield(lc.wake_task), self.wake_timeout_s)
        except TimeoutError as exc:
            raise TierUnavailable(f"{name} did not wake within {self.wake_timeout_s:.0f} s") from exc

    async def _wake(self, name: str, lc: _Lifecycle) -> None:
        async with lc.lock:  # waits for a sleep in progress
            if lc.state == AWAKE:
                return
            lc.state = WAKING
            start = time.perf_counter()
            try:
                await asyncio.to_thread(lc.engine.wake)
            except Exception as exc:
                lc.state, lc.last_error = ASLEEP, f"wake failed: {type(exc).__name__}: {exc}"
                raise TierUnavailable(f"{name}: {lc.last_error}") from exc
            seconds = time.perf_counter() - start
            lc.state, lc.wakes = AWAKE, lc.wakes + 1
            lc.wake_s.append(seconds)
            lc.last_used = time.monotonic()
        log.info("woke %s in %.3f s", name, seconds)
        if self.observer:
            self.observer("wake", name, seconds)

    # --- sleeping -------------------------------------------------------------------------

    async def sleep(self, name: str) -> bool:
        """Put an engine to sleep now; False (and nothing done) while it has requests in flight."""
        lc = self._lc(name)
        async with lc.lock:
            if lc.in_flight > 0 or lc.state != AWAKE:
                return False
            lc.state = SLEEPING
            before, start = resident_memory_bytes(), time.perf_counter()
            try:
                await asyncio.to_thread(lc.engine.sleep)
            except Exception as exc:
                lc.state, lc.last_error = AWAKE, f"sleep failed: {type(exc).__name__}: {exc}"
                log.exception("sleeping %s failed", name)
                return False
            seconds = time.perf_counter() - start
            lc.state, lc.sleeps = ASLEEP, lc.sleeps + 1
            lc.sleep_s.append(seconds)
            lc.memory_freed_bytes = max(0, before - resident_memory_bytes())
        log.info("put %s to sleep in %.3f s (%.0f MiB freed)", name, seconds, lc.memory_freed_bytes / 2**20)
        if self.observer:
            self.observer("sleep", name, seconds)
        return True

    async def wake(self, name: str) -> None:
        lc = self._lc(name)
        await self._ensure_awake(name, lc)

    async def sleep_idle(self, now: float | None = None) -> list[str]:
        """Sleep every engine idle for at least its ``idle_sleep_s``; returns their names."""
        now = time.monotonic() if now is None else now
        slept = []
        for name, lc in self._tiers.items():
            if (lc.idle_sleep_s is not None and lc.state == AWAKE and lc.in_flight == 0
                    and now - lc.last_used >= lc.idle_sleep_s and await self.sleep(name)):
                slept.append(name)
        return slept

    def start_monitor(self) -> None:
        """Start the idle monitor on the running loop (idempotent)."""
        if self._monitor is None or self._monitor.done():
            if any(lc.idle_sleep_s is not None for lc in self._tiers.values()):
                self._monitor = asyncio.get_running_loop().create_task(self._run_monitor())

    async def _run_monitor(self) -> None:
        while True:
            await asyncio.sleep(self.monitor_interval_s)
            try:
                await self.sleep_idle()
            except Exception:  # the monitor must outlive one failed sleep
                log.exception("idle monitor")

    async def close(self) -> None:
        if self._monitor is not None:
            self._monitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._monitor

    def stats(self) -> dict[str, dict[str, Any]]:
        now = time.monotonic()
        return {name: {
            "kind": lc.engine.kind, "model": lc.engine.name, "state": lc.state, "in_flight": lc.in_flight,
            "requests": lc.requests, "idle_s": round(now - lc.last_used, 2), "idle_sleep_s": lc.idle_sleep_s,
            "wakes": lc.wakes, "sleeps": lc.sleeps, "wake_s": _summary(lc.wake_s), "sleep_s": _summary(lc.sleep_s),
            "memory_freed_bytes": lc.memory_freed_bytes, "rss_bytes": resident_memory_bytes(),
            "last_error": lc.last_error,
            # the compiled generator program the engine prompts with (None: the hand-written prompt)
            "program": getattr(lc.engine, "program_path", None),
        } for name, lc in self._tiers.items()}


async def iterate_in_thread(items: Iterator[Any]) -> AsyncIterator[Any]:
    """Drive a blocking iterator in a worker thread; stop it when the consumer goes away."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue(maxsize=64)
    stop = threading.Event()

    def put(kind: str, value: Any) -> None:
        asyncio.run_coroutine_threadsafe(queue.put((kind, value)), loop).result()

    def run() -> None:
        try:
            for item in items:
                if stop.is_set():
                    break
                put("item", item)
            put("end", None)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            put("error", exc)
        finally:
            if isinstance(items, Generator):  # a generator engine's stream: run its cleanup now
                items.close()

    worker = loop.run_in_executor(None, run)
    try:
        while True:
            kind, value = await queue.get()
            if kind == "end":
                break
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        while not queue.empty():  # unblock a producer waiting on a full queue
            queue.get_nowait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(worker), 5)


class _RayMetrics:
    """Ray metrics of the tier manager (exported by Ray's Prometheus endpoint on each node)."""

    def __init__(self) -> None:
        from ray.util import metrics

        tags = ("engine",)
        self.counts = {e: metrics.Counter(f"medgraph_tier_{e}s", f"engine {e}s", tag_keys=tags) for e in ("wake", "sleep")}
        bounds = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]
        self.seconds = {e: metrics.Histogram(f"medgraph_tier_{e}_seconds", f"engine {e} latency",
                                             boundaries=bounds, tag_keys=tags) for e in ("wake", "sleep")}

    def __call__(self, event: str, engine: str, seconds: float) -> None:
        self.counts[event].inc(1, tags={"engine": engine})
        self.seconds[event].observe(seconds, tags={"engine": engine})


class TierService:
    """One engine as a Serve deployment: answers, streams, chats (router), sleeps, wakes, reports."""

    def __init__(self, cfg: MedGraphConfig, name: str, llm_server: DeploymentHandle | None = None,
                 ray_metrics: bool = True) -> None:
        """``llm_server``: the vLLM server deployment of a ``vllm`` engine (bound in ``serve/app.py``)."""
        ecfg = cfg.tiers.engines[name]
        model = None
        if ecfg.kind == "vllm":
            from serve.vllm_engine import VLLMChatModel

            model = VLLMChatModel(llm_server, ecfg)
        self.name, self.top_k = name, cfg.retrieval.top_k
        embedder = None
        if ecfg.kind == "extractive" and cfg.answer.sentence_dense != "off":
            from medgraph.embed import make_embedder  # the sentences' dense feature: the corpus' dense model

            embedder = make_embedder(cfg.embedding, cfg.serve.embedding_cache)
        self.engine = make_engine(ecfg, cfg.answer, model, embedder)
        observer = _RayMetrics() if ray_metrics else None
        self.manager = TierManager({name: (self.engine, ecfg.idle_sleep_s)}, cfg.tiers.monitor_interval_s,
                                   cfg.tiers.wake_timeout_s, observer)

    async def answer(self, question: str, analysis: QueryAnalysis, ranked: list[Candidate]) -> Answer:
        async with self.manager.use(self.name) as engine:
            return await asyncio.to_thread(engine.generate, question, analysis, ranked[: self.top_k])

    async def stream(self, question: str, analysis: QueryAnalysis, ranked: list[Candidate]
                     ) -> AsyncIterator[dict[str, str | Answer]]:
        """Events: ``{"delta": text}`` ..., then ``{"answer": Answer}``."""
        async with self.manager.use(self.name) as engine:
            async for event in iterate_in_thread(engine.stream(question, analysis, ranked[: self.top_k])):
                yield {"answer": event} if isinstance(event, Answer) else {"delta": event}

    async def chat(self, messages: list[Message], params: ChatParams) -> str:
        async with self.manager.use(self.name) as engine:
            return await asyncio.to_thread(engine.chat, messages, params)

    async def sleep(self) -> dict[str, Any]:
        slept = await self.manager.sleep(self.name)
        return {"slept": slept, **self.manager.stats()[self.name]}

    async def wake(self) -> dict[str, Any]:
        await self.manager.wake(self.name)
        return self.manager.stats()[self.name]

    async def stats(self) -> dict[str, Any]:
        self.manager.start_monitor()
        return self.manager.stats()[self.name]
