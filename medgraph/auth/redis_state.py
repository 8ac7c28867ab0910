"""Daily quotas and the concurrency cap shared by every ingress replica, in Redis.

Input: ``cfg.redis`` (``url``, ``password_env``, ``prefix``, ``timeout_s``, ``slot_lease_s``) and
the limits of ``cfg.auth``. Output: the interfaces of ``QuotaTracker`` (``consume``, ``usage``,
``close``) and of ``ConcurrencyGate`` (``async with gate.slot(on_queued)``, ``active``,
``queued``, ``GateFull``), with one count and one line for the whole app instead of one per
replica. ``make_quota(cfg)`` and ``make_gate(cfg)`` return the in-process versions when
``cfg.redis.url`` is None.

Keys (all under ``<prefix>:``):

- ``quota:<YYYY-MM-DD>``: a hash per UTC day, field ``global`` and ``user:<user ID>``; checked
  and counted by one Lua script (user limit first, then global; a refused request is not
  counted), so replicas never overshoot a limit. It expires a day after its day ends.
- ``gate:holders``: a sorted set of held slots, scored by their lease expiry (Redis server
  time, ms). A holder renews its lease every third of ``slot_lease_s``; a replica that dies
  stops renewing and its slots free themselves after at most ``slot_lease_s``.
- ``gate:queue`` (tickets scored by arrival order, from the counter ``gate:seq``) and
  ``gate:alive`` (tickets scored by the expiry of their waiter's heartbeat): the FIFO line.
  Waiters poll every ``poll_s``; each poll renews the heartbeat and is admitted when its rank
  in the line is below the number of free slots, so slots go out in arrival order across
  replicas. A waiter that stops polling (its replica died) drops out of the line after
  ``waiter_ttl_s``; a waiter that finds its ticket gone (Redis restarted, or its loop stalled
  longer than that) joins the line again at the back and logs it. A cancelled waiter leaves
  the line (and frees a slot handed to it at that moment).

Redis down, or slower than ``timeout_s`` per command: ``SharedQuota`` and ``SharedGate`` fall
back to the replica's own ``QuotaTracker`` / ``ConcurrencyGate`` with the same limits (fail
open to local limits: during an outage each replica counts on its own). The outage is logged
once; Redis is tried again ``retry_s`` (5 s) after the last failure. A request never hangs on
Redis and never fails because of it. A body admitted by Redis keeps running when Redis goes
away (its lease simply lapses); counts made locally during an outage are not copied to Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medgraph.auth.gate import ConcurrencyGate, GateFull, OnQueued
from medgraph.auth.keys import ANONYMOUS
from medgraph.auth.quota import QuotaExceeded, QuotaTracker, _day, _scope
from medgraph.memory.database import clock

if TYPE_CHECKING:
    import redis
    import redis.asyncio as aioredis

    from medgraph.config import MedGraphConfig

log = logging.getLogger(__name__)

DAY_MARGIN_S = 86400  # a day's quota hash lives this long after the day ends
RETRY_S = 5.0  # after a failure, Redis is tried again this much later


# --- connection and outage tracking ------------------------------------------------------------


def _client_kwargs(password_env: str | None, timeout_s: float) -> dict[str, Any]:
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    password = os.environ.get(password_env) if password_env else None
    kwargs: dict[str, Any] = {
        "socket_timeout": timeout_s,
        "socket_connect_timeout": timeout_s,
        "retry": Retry(NoBackoff(), 0),  # a failed command is an outage now, not after retries
        "decode_responses": True,
        "health_check_interval": 30,
    }
    if password:
        kwargs["password"] = password
    return kwargs


def connect(url: str, password_env: str | None = "REDIS_PASSWORD", timeout_s: float = 0.5) -> redis.Redis:
    """A blocking client of ``url`` whose commands give up after ``timeout_s`` without retrying."""
    import redis

    return redis.Redis.from_url(url, **_client_kwargs(password_env, timeout_s))


def connect_async(url: str, password_env: str | None = "REDIS_PASSWORD", timeout_s: float = 0.5) -> aioredis.Redis:
    """An asyncio client of ``url`` (bound to the event loop that first uses it)."""
    import redis.asyncio as aioredis

    return aioredis.Redis.from_url(url, **_client_kwargs(password_env, timeout_s))


def redis_errors() -> tuple[type[BaseException], ...]:
    """What counts as "Redis is down": any client error, a socket error, a timeout."""
    import redis

    return (redis.RedisError, OSError, asyncio.TimeoutError)


class Outage:
    """Whether to try Redis now: after a failure, not for ``retry_s``; logs the start and end of
    each outage once (``what`` names the user of Redis in the log line)."""

    def __init__(self, what: str, retry_s: float = RETRY_S) -> None:
        self.what = what
        self.retry_s = retry_s
        self.down_since: float | None = None
        self._retry_at = 0.0
        self._lock = threading.Lock()

    def available(self) -> bool:
        return self.down_since is None or time.monotonic() >= self._retry_at

    def failed(self, exc: BaseException) -> None:
        with self._lock:
            now = time.monotonic()
            self._retry_at = now + self.retry_s
            if self.down_since is None:
                self.down_since = now
                log.warning("redis unavailable for %s (%s: %s); using this replica's own state, retrying every %.0f s",
                            self.what, type(exc).__name__, exc, self.retry_s)

    def succeeded(self) -> None:
        if self.down_since is None:
            return
        with self._lock:
            if self.down_since is not None:
                log.warning("redis back for %s after %.1f s", self.what, time.monotonic() - self.down_since)
                self.down_since = None


# --- quotas -------------------------------------------------------------------------------------

# KEYS[1] the day's hash; ARGV: user field, per-user limit, global limit, seconds to keep it.
# Returns {status, used by the user, used in total} before this request; status 0 counted,
# 1 user limit reached, 2 global limit reached (nothing counted).
_CONSUME = """
local used_user = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if used_user >= tonumber(ARGV[2]) then return {1, used_user, 0} end
local used_global = tonumber(redis.call('HGET', KEYS[1], 'global') or '0')
if used_global >= tonumber(ARGV[3]) then return {2, used_user, used_global} end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('HINCRBY', KEYS[1], 'global', 1)
redis.call('EXPIRE', KEYS[1], ARGV[4])
return {0, used_user, used_global}
"""


class RedisQuotaTracker:
    """``QuotaTracker`` with its counts in Redis: one per-user and one global count per UTC day for
    all replicas. Raises the client's errors when Redis does not answer (see ``SharedQuota``)."""

    def __init__(self, client: redis.Redis, per_user_daily: int, global_daily: int, prefix: str = "medgraph") -> None:
        if per_user_daily < 1 or global_daily < 1:
            raise ValueError("quota limits must be >= 1")
        self.per_user_daily = int(per_user_daily)
        self.global_daily = int(global_daily)
        self.prefix = prefix
        self.client = client
        self._consume = client.register_script(_CONSUME)

    def _key(self, day: str) -> str:
        return f"{self.prefix}:quota:{day}"

    def consume(self, user_id: str | None, now: float | None = None) -> dict[str, Any]:
        """Count one request, or raise ``QuotaExceeded`` (user first, then global) without counting it.

        Returns ``{"user": remaining for this caller, "global": remaining in total, "resets_at"}``.
        """
        t = clock(now)
        day, resets_at = _day(t)
        name = ANONYMOUS if user_id is None else user_id
        keep_s = int(resets_at - t) + 1 + DAY_MARGIN_S  # relative, so a caller's ``now`` works too
        status, used_user, used_global = (int(x) for x in self._consume(
            keys=[self._key(day)], args=[f"user:{name}", self.per_user_daily, self.global_daily, keep_s]))
        if status == 1:
            raise QuotaExceeded("user", self.per_user_daily, resets_at)
        if status == 2:
            raise QuotaExceeded("global", self.global_daily, resets_at)
        return {
            "user": self.per_user_daily - used_user - 1,
            "global": self.global_daily - used_global - 1,
            "resets_at": resets_at,
        }

    def usage(self, user_id: str | None = None, now: float | None = None) -> dict[str, Any]:
        """Today's counts, as ``QuotaTracker.usage``: ``global`` always; ``user`` for ``user_id``;
        without ``user_id``, ``users`` maps every bucket to its count."""
        day, resets_at = _day(clock(now))
        counts = {str(k): int(v) for k, v in self.client.hgetall(self._key(day)).items()}
        report: dict[str, Any] = {
            "day": day,
            "resets_at": resets_at,
            "global": _scope(counts.get("global", 0), self.global_daily),
        }
        if user_id is None:
            report["users"] = {k[5:]: n for k, n in sorted(counts.items()) if k.startswith("user:")}
        else:
            report["user"] = {"user_id": user_id, **_scope(counts.get(f"user:{user_id}", 0), self.per_user_daily)}
        return report

    def close(self) -> None:
        self.client.close()


class SharedQuota:
    """``RedisQuotaTracker`` while Redis answers, else the replica's own ``QuotaTracker``."""

    def __init__(self, shared: RedisQuotaTracker, local: QuotaTracker, retry_s: float = RETRY_S) -> None:
        self.shared, self.local = shared, local
        self.per_user_daily, self.global_daily = shared.per_user_daily, shared.global_daily
        self.outage = Outage("quotas", retry_s)

    def _run(self, method: str, *args: Any) -> dict[str, Any]:
        if self.outage.available():
            try:
                result: dict[str, Any] = getattr(self.shared, method)(*args)
            except redis_errors() as exc:
                self.outage.failed(exc)
            else:
                self.outage.succeeded()
                return result
        return getattr(self.local, method)(*args)  # type: ignore[no-any-return]

    def consume(self, user_id: str | None, now: float | None = None) -> dict[str, Any]:
        return self._run("consume", user_id, now)

    def usage(self, user_id: str | None = None, now: float | None = None) -> dict[str, Any]:
        return self._run("usage", user_id, now)

    def close(self) -> None:
        with contextlib.suppress(*redis_errors()):
            self.shared.close()
        self.local.close()


# --- concurrency gate ---------------------------------------------------------------------------

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
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
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
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
            try:
                await self.shared.release(ticket)
            except redis_errors() as exc:  # the lease lapses on its own
                self.outage.failed(exc)

    async def aclose(self) -> None:
        with contextlib.suppress(*redis_errors()):
            await self.shared.aclose()


# --- factories ----------------------------------------------------------------------------------


def make_quota(cfg: MedGraphConfig, path: str | Path | None = None) -> QuotaTracker | SharedQuota:
    """The app's quota tracker: ``QuotaTracker`` on ``path`` (default ``cfg.app.path``), wrapped
    in ``SharedQuota`` over Redis when ``cfg.redis.url`` is set."""
    local = QuotaTracker(path or cfg.app.path, cfg.auth.per_user_daily, cfg.auth.global_daily)
    r = cfg.redis
    if not r.url:
        return local
    shared = RedisQuotaTracker(connect(r.url, r.password_env, r.timeout_s), cfg.auth.per_user_daily,
                               cfg.auth.global_daily, r.prefix)
    return SharedQuota(shared, local)


def make_gate(cfg: MedGraphConfig) -> ConcurrencyGate | SharedGate:
    """The app's concurrency gate: ``ConcurrencyGate``, or ``SharedGate`` over Redis when
    ``cfg.redis.url`` is set (create it in, or before first use from, the serving event loop)."""
    local = ConcurrencyGate(cfg.auth.max_concurrent, cfg.auth.max_queue)
    r = cfg.redis
    if not r.url:
        return local
    shared = RedisConcurrencyGate(
        connect_async(r.url, r.password_env, r.timeout_s), cfg.auth.max_concurrent, cfg.auth.max_queue,
        r.prefix, r.slot_lease_s, sync_client=connect(r.url, r.password_env, r.timeout_s))
    return SharedGate(shared, local)


__all__ = [
    "GateFull", "Outage", "QuotaExceeded", "RedisConcurrencyGate", "RedisQuotaTracker", "SharedGate", "SharedQuota", "connect", "connect_async",
    "make_gate", "make_quota", "redis_errors",
]
