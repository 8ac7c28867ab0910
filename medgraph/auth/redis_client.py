"""Redis connections for the state shared by replicas, and outage tracking.

``connect`` / ``connect_async``: a client with short timeouts (``timeout_s`` per command) and the
password from the environment variable ``password_env``. ``Outage``: remembers that Redis failed,
logs it once, and says when to try again (``RETRY_S`` after the last failure), so callers fall back
to local state instead of waiting on a server that is down. Used by the shared quotas and gate
(``redis_state``, ``redis_gate``) and the query-analysis cache.
"""


from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import redis
    import redis.asyncio as aioredis


log = logging.getLogger(__name__)

DAY_MARGIN_S = 86400  # a day's quota hash lives this long after the day ends
RETRY_S = 5.0  # after a failure, Redis is tried again this much later



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
