"""Daily request quotas: per user and for the whole app, in UTC-day buckets.

Input: the caller of each request (a user ID, or None for anonymous callers, who share one
``"anonymous"`` bucket). Output: the remaining counts, or ``QuotaExceeded`` naming the exhausted
scope (``"user"`` or ``"global"``), its limit and when it resets (the next UTC midnight).
A refused request is not counted. Check and increment happen in one write transaction, so
concurrent requests (threads, or processes and replicas sharing the app database) never overshoot a limit.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from medgraph.auth.keys import ANONYMOUS
from medgraph.memory.backends import open_app_database
from medgraph.memory.database import clock

_SCHEMA = """
CREATE TABLE IF NOT EXISTS quota_counts (
    day TEXT NOT NULL, scope TEXT NOT NULL, name TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (day, scope, name));
"""

KEEP_DAYS = 31  # buckets older than this are deleted
USAGE_USERS = 100  # usage() lists the day's busiest callers, at most this many


class QuotaExceeded(Exception):
    """A daily limit is reached; ``resets_at`` is the epoch second when the next day starts (UTC)."""

    def __init__(self, scope: str, limit: int, resets_at: float) -> None:
        self.scope = scope
        self.limit = limit
        self.resets_at = resets_at
        when = datetime.fromtimestamp(resets_at, UTC).isoformat()
        super().__init__(f"daily {scope} quota of {limit} requests reached; resets at {when}")


class QuotaTracker:
    """Counts requests per UTC day for each user (``per_user_daily``) and in total (``global_daily``)."""

    def __init__(self, path: str | Path, per_user_daily: int, global_daily: int) -> None:
        if per_user_daily < 1 or global_daily < 1:
            raise ValueError("quota limits must be >= 1")
        self.per_user_daily = int(per_user_daily)
        self.global_daily = int(global_daily)
        self._db = open_app_database(path, _SCHEMA)
        self._pruned_day = ""

    def consume(self, user_id: str | None, now: float | None = None) -> dict[str, Any]:
        """Count one request, or raise ``QuotaExceeded`` (user first, then global) without counting it.

        Returns ``{"user": remaining for this caller, "global": remaining in total, "resets_at"}``.
        """
        t = clock(now)
        day, resets_at = _day(t)
        name = _bucket(user_id)
        with self._db.write() as db:
            used_user = _count(db, day, "user", name)
            if used_user >= self.per_user_daily:
                raise QuotaExceeded("user", self.per_user_daily, resets_at)
            used_global = _count(db, day, "global", "*")
            if used_global >= self.global_daily:
                raise QuotaExceeded("global", self.global_daily, resets_at)
            for scope, key in (("user", name), ("global", "*")):
                db.execute(
                    "INSERT INTO quota_counts (day, scope, name, count) VALUES (?,?,?,1) "
                    "ON CONFLICT(day, scope, name) DO UPDATE SET count = quota_counts.count + 1",
                    (day, scope, key),
                )
            if self._pruned_day != day:
                oldest = _day(t - KEEP_DAYS * 86400.0)[0]
                db.execute("DELETE FROM quota_counts WHERE day < ?", (oldest,))
                self._pruned_day = day
        return {
            "user": self.per_user_daily - used_user - 1,
            "global": self.global_daily - used_global - 1,
            "resets_at": resets_at,
        }

    def usage(self, user_id: str | None = None, now: float | None = None) -> dict[str, Any]:
        """Today's counts: ``global`` always; ``user`` for ``user_id`` ("anonymous" for None callers
        is the name ``"anonymous"``); without ``user_id``, ``users`` maps the ``USAGE_USERS``
        busiest buckets to their counts and ``users_counted`` says how many there are.
        """
        t = clock(now)
        day, resets_at = _day(t)
        one = "SELECT count FROM quota_counts WHERE day = ? AND scope = ? AND name = ?"
        rows = self._db.query(one, (day, "global", "*"))
        report: dict[str, Any] = {
            "day": day,
            "resets_at": resets_at,
            "global": _scope(int(rows[0]["count"]) if rows else 0, self.global_daily),
        }
        if user_id is None:
            busiest = self._db.query("SELECT name, count FROM quota_counts WHERE day = ? AND scope = 'user' "
                                     "ORDER BY count DESC, name LIMIT ?", (day, USAGE_USERS))
            report["users"] = {r["name"]: int(r["count"]) for r in sorted(busiest, key=lambda r: r["name"])}
            report["users_counted"] = int(self._db.query(
                "SELECT COUNT(*) AS n FROM quota_counts WHERE day = ? AND scope = 'user'", (day,))[0]["n"])
        else:
            rows = self._db.query(one, (day, "user", user_id))
            report["user"] = {"user_id": user_id, **_scope(int(rows[0]["count"]) if rows else 0, self.per_user_daily)}
        return report

    def close(self) -> None:
        self._db.close()


def _bucket(user_id: str | None) -> str:
    return ANONYMOUS if user_id is None else user_id


def _day(t: float) -> tuple[str, float]:
    """The UTC day of ``t`` (YYYY-MM-DD) and the epoch second of the next UTC midnight."""
    moment = datetime.fromtimestamp(t, UTC)
    start = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return start.strftime("%Y-%m-%d"), (start + timedelta(days=1)).timestamp()


def _count(db: Any, day: str, scope: str, name: str) -> int:
    row = db.execute(
        "SELECT count FROM quota_counts WHERE day = ? AND scope = ? AND name = ?", (day, scope, name)
    ).fetchone()
    return int(row["count"]) if row else 0


def _scope(used: int, limit: int) -> dict[str, int]:
    return {"used": used, "limit": limit, "remaining": max(0, limit - used)}
