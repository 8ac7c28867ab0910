"""Daily quotas and the concurrency cap shared by every ingress replica, in Redis.

This module holds the quotas and the factories; the shared gate is ``redis_gate``, the connections
and outage tracking ``redis_client``.

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

import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medgraph.auth.gate import ConcurrencyGate
from medgraph.auth.keys import ANONYMOUS
from medgraph.auth.quota import USAGE_USERS, QuotaExceeded, QuotaTracker, _day, _scope
from medgraph.auth.redis_client import Outage, connect, connect_async, redis_errors
from medgraph.auth.redis_gate import RedisConcurrencyGate, SharedGate
from medgraph.memory.database import clock

if TYPE_CHECKING:
    import redis

    from medgraph.config import MedGraphConfig

log = logging.getLogger(__name__)

DAY_MARGIN_S = 86400  # a day's quota hash lives this long after the day ends
RETRY_S = 5.0  # after a failure, Redis is tried again this much later


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
        if user_id is None:  # as QuotaTracker.usage: the busiest USAGE_USERS, and how many there are
            users = {k[5:]: n for k, n in counts.items() if k.startswith("user:")}
            busiest = sorted(users.items(), key=lambda kv: (-kv[1], kv[0]))[:USAGE_USERS]
            report["users"], report["users_counted"] = dict(sorted(busiest)), len(users)
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


__all__ = ["QuotaExceeded", "RedisQuotaTracker", "SharedQuota", "make_gate", "make_quota"]
