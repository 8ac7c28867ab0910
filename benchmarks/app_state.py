"""Cost per request of the app state on SQLite vs PostgreSQL, measured in the same run.

    python benchmarks/app_state.py [--url postgresql://user@host:port/db] [--calls 500]

``--url`` (else ``MEDGRAPH_APP_DB_URL``) names the PostgreSQL server; the benchmark works in a
schema of its own there and drops it afterwards. SQLite is a file in a temporary directory.
Each figure is the median (p50) and p95 time of one call in microseconds, one process, one
thread, after 20 warm-up calls:

- ``consume``: ``QuotaTracker.consume`` (check two counters and increment them in one write
  transaction; on PostgreSQL after taking the app's advisory lock), one user, limits not reached.
- ``append``: ``SessionStore.add_message`` (touch the session, insert one message).

Prints JSON: the figures per backend, ``ratio_p50`` (PostgreSQL / SQLite), the date, the
PostgreSQL server version and where it runs (its host), and the machine's load (``uptime``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.auth import QuotaTracker  # noqa: E402
from medgraph.memory import SessionStore  # noqa: E402

WARMUP = 20


def timings_us(fn: Callable[[int], Any], calls: int) -> dict[str, float]:
    for i in range(WARMUP):
        fn(-1 - i)
    times = []
    for i in range(calls):
        start = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - start)
    times.sort()
    return {
        "p50_us": round(statistics.median(times) * 1e6, 1),
        "p95_us": round(times[int(0.95 * (len(times) - 1))] * 1e6, 1),
    }


def measure(location: str, calls: int) -> dict[str, dict[str, float]]:
    quota = QuotaTracker(location, per_user_daily=10 * (calls + WARMUP), global_daily=10 * (calls + WARMUP))
    sessions = SessionStore(location)
    sid = sessions.open_session(None, "alice").session_id
    try:
        return {
            "consume": timings_us(lambda i: quota.consume("alice"), calls),
            "append": timings_us(
                lambda i: sessions.add_message(sid, "user", f"question {i}", [("D009203", "MI")]), calls
            ),
        }
    finally:
        quota.close()
        sessions.close()


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except OSError:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("MEDGRAPH_APP_DB_URL"))
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    if not args.url:
        parser.error("give --url or set MEDGRAPH_APP_DB_URL (cluster/postgres/pg-dev.sh start DIR; DIR/url)")
    import psycopg

    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "uptime_before": uptime(),
        "calls": args.calls,
    }
    with tempfile.TemporaryDirectory() as tmp:
        report["sqlite"] = measure(str(Path(tmp) / "app.sqlite"), args.calls)
    schema = f"medgraph_bench_{uuid.uuid4().hex[:12]}"
    sep = "&" if "?" in args.url else "?"
    url = f"{args.url}{sep}options={quote(f'-csearch_path={schema}', safe='')}"
    with psycopg.connect(args.url, autocommit=True) as admin:
        report["postgres_server"] = {
            "version": admin.execute("SHOW server_version").fetchone()[0],  # type: ignore[index]
            "host": urlsplit(args.url).hostname,
        }
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            report["postgres"] = measure(url, args.calls)
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
    report["ratio_p50"] = {
        op: round(report["postgres"][op]["p50_us"] / report["sqlite"][op]["p50_us"], 2)
        for op in ("consume", "append")
    }
    report["uptime_after"] = uptime()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
