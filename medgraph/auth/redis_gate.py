"""The concurrency cap shared by every ingress replica, in Redis (keys ``gate:*``; see
``medgraph.auth.redis_state`` for the layout, the lease and the FIFO line), and ``SharedGate``,
which falls back to the replica's own ``ConcurrencyGate`` while Redis is down.
"""


from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from medgraph.auth.gate import ConcurrencyGate, GateFull, OnQueued
from medgraph.auth.redis_client import Outage, redis_errors

if TYPE_CHECKING:
    import redis
    import redis.asyncio as aioredis


log = logging.getLogger(__name__)

DAY_MARGIN_S = 86400  # a day's quota hash lives this long after the day ends
RETRY_S = 5.0  # after a failure, Redis is tried again this much later



# Every script first drops expired holders and waiters whose heartbeat lapsed.
# KEYS: holders, queue, alive, seq. Time is Redis's own clock (ms), the same for every replica.
_PRUNE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local dead = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for _, d in ipairs(dead) do redis.call('ZREM', KEYS[2], d) end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
"""

# ARGV: ticket, max_concurrent, max_queue (-1: unbounded), lease ms, waiter ttl ms, new (1/0).
# Returns {status, position, active, queued}: status 1 admitted, 0 waiting at ``position``,
# -1 the line is full (nothing queued), -2 the ticket is not in the line (lost).
_ACQUIRE = _PRUNE + """
local ticket, max_c, max_q = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local lease, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
local active, queued = redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2])
if redis.call('ZSCORE', KEYS[1], ticket) then return {1, 0, active, queued} end
local rank = redis.call('ZRANK', KEYS[2], ticket)
if not rank then
  if ARGV[6] ~= '1' then return {-2, 0, active, queued} end
  if active < max_c and queued == 0 then
    redis.call('ZADD', KEYS[1], now + lease, ticket)
    return {1, 0, active + 1, queued}
  end
  if max_q >= 0 and queued >= max_q then return {-1, 0, active, queued} end
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), ticket)
  redis.call('ZADD', KEYS[3], now + ttl, ticket)
  return {0, queued + 1, active, queued + 1}
end
if rank < max_c - active then
  redis.call('ZREM', KEYS[2], ticket)
  redis.call('ZREM', KEYS[3], ticket)
  redis.call('ZADD', KEYS[1], now + lease, ticket)
  return {1, 0, active + 1, queued - 1}
end
redis.call('ZADD', KEYS[3], now + ttl, ticket)
return {0, rank + 1, active, queued}
"""

# ARGV: ticket, lease ms. Returns 1 when the lease was renewed, 0 when the slot had lapsed.
_RENEW = _PRUNE + """
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return 1
"""

# ARGV: ticket. Leaves the slot or the line, whichever holds the ticket.
_RELEASE = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
"""

_COUNTS = _PRUNE + """
return {redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2])}
"""


class RedisConcurrencyGate:
    """``ConcurrencyGate`` across processes: at most ``max_concurrent`` bodies run at once in all
    replicas together, the others wait in one FIFO line (``GateFull`` beyond ``max_queue``).

    ``client`` is an asyncio client used from one event loop; ``sync_client`` (optional) answers
    ``active`` and ``queued`` with fresh counts (without it they are those of the last call).
    Raises the client's errors when Redis does not answer (see ``SharedGate``).
    """

    def __init__(
        self,
        client: aioredis.Redis,
        max_concurrent: int,
        max_queue: int | None = None,
        prefix: str = "medgraph",
        slot_lease_s: float = 60.0,
        poll_s: float = 0.025,
        waiter_ttl_s: float = 5.0,
        sync_client: redis.Redis | None = None,
    ) -> None:
        if max_concurrent < 1:
            raise ValueError("max_concurrent must be >= 1")
        if max_queue is not None and max_queue < 0:
            raise ValueError("max_queue must be >= 0 (or None: unbounded)")
        self.max_concurrent, self.max_queue = max_concurrent, max_queue
        self.client, self.sync_client = client, sync_client
        self.slot_lease_s, self.poll_s, self.waiter_ttl_s = slot_lease_s, poll_s, waiter_ttl_s
        self.keys = [f"{prefix}:gate:{k}" for k in ("holders", "queue", "alive", "seq")]
        self._acquire_script = client.register_script(_ACQUIRE)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._counts_async = client.register_script(_COUNTS)
        self._counts_sync = sync_client.register_script(_COUNTS) if sync_client is not None else None
        self._seen = (0, 0)  # (active, queued) of the last answer

    @property
    def active(self) -> int:
        """Slots held now by all replicas."""
        return self._counts()[0]

    @property
    def queued(self) -> int:
        """Requests of all replicas waiting for a slot."""
        return self._counts()[1]

    def _counts(self) -> tuple[int, int]:
        if self._counts_sync is not None:
            try:
                active, queued = self._counts_sync(keys=self.keys[:3])
                self._seen = (int(active), int(queued))
            except redis_errors():
                pass
        return self._seen

    async def counts(self) -> tuple[int, int]:
        """``(active, queued)`` now, asked of Redis."""
        active, queued = await self._counts_async(keys=self.keys[:3])
        self._seen = (int(active), int(queued))
        return self._seen

    @asynccontextmanager
    async def slot(self, on_queued: OnQueued | None = None) -> AsyncIterator[None]:
        """Hold one of the ``max_concurrent`` slots (of all replicas) for the body."""
        ticket = await self.acquire(on_queued)
        renewer = asyncio.ensure_future(self.keep(ticket))
        try:
            yield
        finally:
            await _stop(renewer)
            await self.release(ticket)

    async def acquire(self, on_queued: OnQueued | None = None) -> str:
        """Wait for a slot; returns the ticket that holds it (give it to ``release``)."""
        ticket = uuid.uuid4().hex
        new, told = True, False
        try:
            while True:
                status, position, active, queued = (int(x) for x in await self._acquire_script(
                    keys=self.keys, args=[ticket, self.max_concurrent, -1 if self.max_queue is None else self.max_queue,
                                          int(self.slot_lease_s * 1000), int(self.waiter_ttl_s * 1000), int(new)]))
                self._seen = (active, queued)
                if status == 1:
                    return ticket
                if status == -1:
                    raise GateFull(self.max_queue if self.max_queue is not None else 0)
                if status == -2:  # dropped from the line (Redis restarted, or this loop stalled)
                    log.warning("gate ticket %s left the line unexpectedly; queueing again", ticket)
                    new = True
                    continue
                new = False
                if not told and on_queued is not None:
                    told = True
                    result = on_queued(position)
                    if inspect.isawaitable(result):
                        await result
                await asyncio.sleep(self.poll_s)
        except BaseException:
            with contextlib.suppress(*redis_errors()):
                await asyncio.shield(self.release(ticket))  # leave the line (or the slot just granted)
            raise

    async def release(self, ticket: str) -> None:
        await self._release(keys=self.keys[:3], args=[ticket])

    async def keep(self, ticket: str) -> None:
        """Renew the slot's lease every third of ``slot_lease_s`` while the body runs."""
        lease_ms = int(self.slot_lease_s * 1000)
        while True:
            await asyncio.sleep(self.slot_lease_s / 3)
            try:
                if not await self._renew(keys=self.keys[:3], args=[ticket, lease_ms]):
                    log.warning("gate slot %s lapsed before its body finished (lease %.0f s)", ticket, self.slot_lease_s)
                    return
            except redis_errors() as exc:
                log.warning("gate slot %s: lease not renewed (%s)", ticket, exc)

    async def aclose(self) -> None:
        await self.client.aclose()
        if self.sync_client is not None:
            self.sync_client.close()


class SharedGate:
    """``RedisConcurrencyGate`` while Redis answers, else the replica's own ``ConcurrencyGate``
    (its ``max_concurrent`` and ``max_queue`` then apply to this replica alone)."""

    def __init__(self, shared: RedisConcurrencyGate, local: ConcurrencyGate, retry_s: float = RETRY_S) -> None:
        self.shared, self.local = shared, local
        self.max_concurrent, self.max_queue = shared.max_concurrent, shared.max_queue
        self.outage = Outage("the concurrency gate", retry_s)

    @property
    def active(self) -> int:
        return (self.shared.active if self.outage.down_since is None else 0) + self.local.active

    @property
    def queued(self) -> int:
        return (self.shared.queued if self.outage.down_since is None else 0) + self.local.queued

    @asynccontextmanager
    async def slot(self, on_queued: OnQueued | None = None) -> AsyncIterator[None]:
        """A slot of the shared gate, or of the local one while Redis is down; ``on_queued`` is
        called at most once, even when the wait moves from Redis to the local gate."""
        told: list[int] = []

        async def once(position: int) -> None:
            if not told and on_queued is not None:
                told.append(position)
                result = on_queued(position)
                if inspect.isawaitable(result):
                    await result

        ticket: str | None = None
        if self.outage.available():
            try:
                ticket = await self.shared.acquire(once)
            except redis_errors() as exc:
                self.outage.failed(exc)
            else:
                self.outage.succeeded()
        if ticket is None:
            async with self.local.slot(once):
                yield
            return
        renewer = asyncio.ensure_future(self.shared.keep(ticket))
        try:
            yield
        finally:
            await _stop(renewer)
            try:
                await self.shared.release(ticket)
            except redis_errors() as exc:  # the lease lapses on its own
                self.outage.failed(exc)

    async def aclose(self) -> None:
        with contextlib.suppress(*redis_errors()):
            await self.shared.aclose()


async def _stop(renewer: asyncio.Future[None]) -> None:
    """Cancel a slot's lease renewer and wait until it has stopped."""
    renewer.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await renewer
