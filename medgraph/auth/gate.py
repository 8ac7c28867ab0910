"""In-process admission control for expensive requests (asyncio).

Input: requests entering ``async with gate.slot(on_queued): ...``. Output: at most
``max_concurrent`` bodies run at once; the others wait in FIFO order and are told their queue
position once (``on_queued(position)``, position 1 = next to run), so an HTTP handler can stream
"you are number 3 in line". Waiting never times out here (the caller may cancel); only a queue
longer than ``max_queue`` refuses at once with ``GateFull``. A cancelled waiter leaves the queue,
and a slot handed to a waiter that is cancelled at that moment passes on to the next one.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

OnQueued = Callable[[int], Awaitable[None] | None]


class GateFull(Exception):
    """The wait queue is full: the request is refused instead of queued."""

    def __init__(self, max_queue: int) -> None:
        self.max_queue = max_queue
        super().__init__(f"too many requests waiting (queue limit {max_queue})")


class ConcurrencyGate:
    """A FIFO semaphore with a bounded queue; use from one event loop."""

    def __init__(self, max_concurrent: int, max_queue: int | None = None) -> None:
        if max_concurrent < 1:
            raise ValueError("max_concurrent must be >= 1")
        if max_queue is not None and max_queue < 0:
            raise ValueError("max_queue must be >= 0 (or None: unbounded)")
        self.max_concurrent = max_concurrent
        self.max_queue = max_queue
        self.active = 0  # bodies running now
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def queued(self) -> int:
        """Requests waiting for a slot."""
        return len(self._waiters)

    @asynccontextmanager
    async def slot(self, on_queued: OnQueued | None = None) -> AsyncIterator[None]:
        """Hold one of the ``max_concurrent`` slots for the body of the ``async with``."""
        await self._acquire(on_queued)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, on_queued: OnQueued | None) -> None:
        if self.active < self.max_concurrent and not self._waiters:
            self.active += 1
            return
        if self.max_queue is not None and len(self._waiters) >= self.max_queue:
            raise GateFull(self.max_queue)
        ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(ticket)
        try:
            if on_queued is not None:
                result = on_queued(len(self._waiters))
                if inspect.isawaitable(result):
                    await result
            await ticket
        except BaseException:
            if ticket.done() and not ticket.cancelled():
                self._release()  # the slot was handed over as we were cancelled: pass it on
            else:
                ticket.cancel()
                if ticket in self._waiters:  # ``_release`` may have dropped it already
                    self._waiters.remove(ticket)
            raise

    def _release(self) -> None:
        """Hand the slot to the first live waiter (``active`` unchanged), or free it."""
        while self._waiters:
            ticket = self._waiters.popleft()
            if not ticket.done():
                ticket.set_result(None)
                return
        self.active -= 1
