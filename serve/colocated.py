"""Parts of the app that run inside the agent's replica instead of as deployments of their own
(``serve.colocate``): the analyzer, reranker, router and extractive tiers.

Every call between deployments costs a Serve round trip (routing, serialisation, another event
loop): seven handle calls per question (ingress → agent → analyzer, router, retriever, reranker,
retriever's relational channel, tier), three with these parts inside the agent. On the 2-CPU
machine that was ~30% of the machine's CPU per question (docs/benchmarks.md, "Serve load"); on a
cluster the parts are scaled on their own (``serve.colocate: []``).

``LocalHandle(service)``: a service object built in this process, with a deployment handle's call
shape: ``await handle.method.remote(*args)`` (plain methods run in a worker thread, coroutines on
the caller's loop) and ``handle.options(stream=True).method.remote(*args)`` for an async generator
method (``__anext__`` and ``cancel()``, as ``serve.calls.stream`` uses them).

``ViaAgent(agent, part)``: what the ingress calls a colocated part through: the agent deployment's
``colocated(part, method, *args)``, so there is one copy of each part and its state (a tier's
request counts, the analyzer's cache) whoever calls it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from medgraph.config import MedGraphConfig

SERVICES = ("analyzer", "reranker", "router")  # colocated by name; "extractive": the extractive engines


class _LocalStream:
    """An async generator with a streaming handle response's ``cancel()``."""

    def __init__(self, events: AsyncIterator[Any]) -> None:
        self.events = events
        self.closing: asyncio.Future[Any] | None = None  # kept: a task nobody holds may be collected unrun

    def __aiter__(self) -> _LocalStream:
        return self

    def __anext__(self) -> Any:
        return self.events.__anext__()

    def cancel(self) -> None:
        close = getattr(self.events, "aclose", None)
        if close is not None and self.closing is None:
            self.closing = asyncio.ensure_future(close())


class _LocalCall:
    """A plain method's call: awaited, it runs in a worker thread (CPU work off the caller's event
    loop); ``result()`` runs it in the calling thread (a worker thread waiting as on a handle)."""

    def __init__(self, fn: Any, args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args

    def __await__(self) -> Any:
        return asyncio.to_thread(self.fn, *self.args).__await__()

    def result(self, timeout_s: float | None = None) -> Any:
        return self.fn(*self.args)


class _LocalMethod:
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def remote(self, *args: Any) -> Any:
        if inspect.isasyncgenfunction(self.fn):
            return _LocalStream(self.fn(*args))
        if inspect.iscoroutinefunction(self.fn):
            return self.fn(*args)
        return _LocalCall(self.fn, args)


class LocalHandle:
    """``service`` (an object of ``serve.services`` or ``serve.tiers``) called like a deployment."""

    def __init__(self, service: Any) -> None:
        self.service = service

    def options(self, **_: Any) -> LocalHandle:
        return self  # stream=True: an async generator method streams by itself

    def __getattr__(self, name: str) -> _LocalMethod:
        return _LocalMethod(getattr(self.service, name))


class _ViaMethod:
    def __init__(self, agent: Any, part: str, method: str) -> None:
        self.agent, self.part, self.method = agent, part, method

    def remote(self, *args: Any) -> Any:
        return self.agent.colocated.remote(self.part, self.method, *args)


class ViaAgent:
    """Colocated part ``part`` of the agent deployment ``agent`` (a handle), for the ingress."""

    def __init__(self, agent: Any, part: str) -> None:
        self.agent, self.part = agent, part

    def options(self, **kwargs: Any) -> ViaAgent:
        return ViaAgent(self.agent.options(**kwargs), self.part)

    def __getattr__(self, name: str) -> _ViaMethod:
        return _ViaMethod(self.agent, self.part, name)


def colocated_engines(cfg: MedGraphConfig) -> list[str]:
    """The engines that run in the agent's replica: the extractive engines the tiers map to, when
    ``serve.colocate`` has ``extractive`` (an engine the model tiers chat with is never one)."""
    if "extractive" not in cfg.serve.colocate:
        return []
    return [name for name, e in cfg.tiers.used_engines().items() if e.kind == "extractive"]
