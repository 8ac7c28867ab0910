"""Calls to other deployments with a time limit and one error mapping, for the ingress and the agent.

``call(method, *args, timeout=..., late=..., translate=...)`` awaits one handle call;
``stream(gen, first_timeout=..., timeout=..., late=..., translate=...)`` iterates a streaming
handle response, the first item with its own limit (it may include a tier's wake). ``late()`` is
the exception for a call that ran out of time; ``translate(exc)`` maps a deployment's error to
the caller's (``None``: re-raise it as it is, a bug). A streaming call that runs out of time is
cancelled.

``StatePool``: a replica's own threads for the app-state stores' blocking calls (keys, quotas,
sessions, memories: SQLite, PostgreSQL or Redis clients), each call given ``serve.store_timeout_s``:
a database that does not answer (paused, a half-open connection) is ``StoreUnavailable`` (a 503)
for the caller, never a stalled event loop or a question held until the database is back, while
the call finishes or fails in its thread. ``BoundedStore`` puts a store's every method through it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from medgraph.stores.errors import StoreUnavailable

Late = Callable[[], Exception]
Translate = Callable[[BaseException], Exception | None]


async def _awaitable(response: Any) -> Any:
    return await response


def _mapped(exc: BaseException, translate: Translate) -> Exception:
    mapped = translate(exc)
    if mapped is None:
        raise exc
    return mapped


async def call(method: Any, *args: Any, timeout: float, late: Late, translate: Translate) -> Any:
    try:
        return await asyncio.wait_for(_awaitable(method.remote(*args)), timeout)
    except TimeoutError as exc:
        raise late() from exc
    except Exception as exc:
        raise _mapped(exc, translate) from exc


async def stream(gen: Any, *, first_timeout: float, timeout: float, late: Late,
                 translate: Translate) -> AsyncIterator[Any]:
    wait = first_timeout
    while True:
        try:
            item = await asyncio.wait_for(gen.__anext__(), wait)
        except StopAsyncIteration:
            return
        except TimeoutError as exc:
            gen.cancel()
            raise late() from exc
        except Exception as exc:
            raise _mapped(exc, translate) from exc
        wait = timeout
        yield item


STATE_THREADS = 8  # threads per replica (ingress, agent) for the app-state stores' blocking calls


class StatePool:
    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.pool = ThreadPoolExecutor(max_workers=STATE_THREADS, thread_name_prefix="app-state")

    def _late(self) -> StoreUnavailable:
        return StoreUnavailable(f"the app state did not answer within {self.timeout_s:g} s")

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in the pool, awaited from the event loop."""
        call = asyncio.get_running_loop().run_in_executor(self.pool, functools.partial(fn, *args))
        try:
            return await asyncio.wait_for(call, self.timeout_s)
        except TimeoutError:
            raise self._late() from None

    def run_blocking(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` in the pool, waited for from another thread."""
        call = self.pool.submit(fn, *args, **kwargs)
        try:
            return call.result(timeout=self.timeout_s)
        except TimeoutError:
            call.cancel()  # still waiting for a thread: it will not run
            raise self._late() from None


class BoundedStore:
    """A blocking app-state store (sessions, long-term memory) whose every method call goes through
    ``pool`` (``StatePool.run_blocking``)."""

    def __init__(self, store: Any, pool: StatePool) -> None:
        self._store, self._pool = store, pool

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)
        return functools.partial(self._pool.run_blocking, method) if callable(method) else method
