"""Cost per request of the app-state stores: long-term memory, API keys, quotas, the concurrency gate.

    python benchmarks/memory_auth.py [--users 10] [--memories 1000] [--entities 200] [--calls 400]

Each figure is the median time of one call (microseconds) on a SQLite file in a temporary
directory, next to a baseline measured in the same run, and their ratio:

- ``recall``: ``LongTermMemory.recall`` (2 query entities) for a user with ``--memories`` memories
  over ``--entities`` MeSH IDs, among ``--users`` users of that size; baseline ``scan``: load all of
  the user's memories with their entities and score them in Python (what an unindexed store does).
- ``remember``: a memory at capacity (so it evicts) vs a plain one-row INSERT into the same file.
- ``verify``: ``ApiKeyStore.verify`` (lookup, HMAC, constant-time compare, last-used write) vs
  a primary-key SELECT plus one SHA-256 (the read alone).
- ``consume``: ``QuotaTracker.consume`` (two counters, check and increment in one transaction) vs
  one counter UPDATE in its own transaction.
- ``gate``: ``ConcurrencyGate.slot`` vs ``asyncio.Semaphore``, uncontended and with 8 tasks on 2 slots.

Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.auth import ApiKeyStore, ConcurrencyGate, QuotaTracker  # noqa: E402
from medgraph.memory import LongTermMemory  # noqa: E402

T0 = 1_700_000_000.0


def _connect(path: str, **kwargs: Any) -> sqlite3.Connection:
    """A baseline connection with the stores' durability settings (WAL, synchronous=NORMAL)."""
    db = sqlite3.connect(path, **kwargs)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


def median_us(fn: Callable[[int], Any], calls: int) -> float:
    times = []
    for i in range(calls):
        start = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def pair(name: str, value: float, base_name: str, base: float) -> dict[str, float]:
    return {f"{name}_us": round(value, 1), f"{base_name}_us": round(base, 1), "ratio": round(value / base, 2)}


def bench_memory(path: str, args: argparse.Namespace, rng: random.Random) -> dict[str, Any]:
    ltm = LongTermMemory(path, capacity_per_entity=10**6)  # fill without eviction
    entities = [f"D{n:06d}" for n in range(args.entities)]
    for u in range(args.users):
        for m in range(args.memories):
            ids = rng.sample(entities, rng.randint(1, 4))
            created = T0 - rng.random() * 90 * 86400
            ltm.remember(f"user{u}", f"question {m}", f"answer {m}", ids, now=created)
    queries = [rng.sample(entities, 2) for _ in range(args.calls)]
    raw = _connect(path)

    def scan(i: int) -> list[tuple[float, str]]:
        wanted = set(queries[i])
        rows = raw.execute(
            "SELECT m.memory_id, m.weight, m.last_seen, e.mesh_id FROM user_memories m "
            "JOIN user_memory_entities e ON e.memory_id = m.memory_id WHERE m.user_id = ?", ("user0",)
        ).fetchall()
        by_memory: dict[str, tuple[float, float, set[str]]] = {}
        for memory_id, weight, last_seen, mesh_id in rows:
            by_memory.setdefault(memory_id, (weight, last_seen, set()))[2].add(mesh_id)
        scored = [(ltm.decayed(w, seen, T0) * len(wanted & about) / 2, mid)
                  for mid, (w, seen, about) in by_memory.items() if wanted & about]
        return sorted(scored, reverse=True)[:3]

    for i in range(min(5, args.calls)):  # the same answers, so the baseline is a fair one
        assert [m.memory_id for m in ltm.recall("user0", queries[i], now=T0)] == [s[1] for s in scan(i)]
    recall = median_us(lambda i: ltm.recall("user0", queries[i], now=T0), args.calls)
    base = median_us(scan, args.calls)
    out: dict[str, Any] = {"recall": pair("recall", recall, "scan", base)}

    capped = LongTermMemory(path, capacity_per_entity=5)
    remember = median_us(lambda i: capped.remember("user1", "q", "a", queries[i], now=T0 + i), args.calls)

    def insert(i: int) -> None:
        with raw:
            row = (f"x{i}", "userX", "q", 1.0, T0, T0)
            raw.execute("INSERT INTO user_memories VALUES (?,?,?,?,?,?)", row)

    out["remember"] = pair("remember", remember, "insert", median_us(insert, args.calls))
    raw.close()
    return out


def bench_keys(path: str, calls: int) -> dict[str, Any]:
    store = ApiKeyStore(path, pepper="benchmark pepper")
    store.create_user("alice")
    key_id, key = store.issue_key("alice")
    raw = _connect(path)

    def lookup(_: int) -> None:
        raw.execute("SELECT hash FROM auth_keys WHERE key_id = ?", (key_id,)).fetchone()
        hashlib.sha256(key.encode()).hexdigest()

    verify = median_us(lambda _: store.verify(key), calls)
    out = {"verify": pair("verify", verify, "lookup", median_us(lookup, calls))}
    raw.close()
    return out


def bench_quota(path: str, calls: int) -> dict[str, Any]:
    quota = QuotaTracker(path, per_user_daily=10**9, global_daily=10**9)
    raw = _connect(path, isolation_level=None)
    raw.execute("CREATE TABLE plain_counter (name TEXT PRIMARY KEY, n INTEGER)")
    raw.execute("INSERT INTO plain_counter VALUES ('a', 0)")

    def update(_: int) -> None:
        raw.execute("BEGIN IMMEDIATE")
        raw.execute("UPDATE plain_counter SET n = n + 1 WHERE name = 'a'")
        raw.execute("COMMIT")

    consume = median_us(lambda _: quota.consume("alice", now=T0), calls)
    out = {"consume": pair("consume", consume, "update", median_us(update, calls))}
    raw.close()
    return out


def bench_gate(calls: int) -> dict[str, Any]:
    async def uncontended(enter: Callable[[], Any]) -> float:
        start = time.perf_counter()
        for _ in range(calls):
            async with enter():
                pass
        return (time.perf_counter() - start) / calls * 1e6

    async def contended(enter: Callable[[], Any]) -> float:
        async def worker() -> None:
            for _ in range(calls // 8):
                async with enter():
                    await asyncio.sleep(0)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(8)))
        return (time.perf_counter() - start) / (8 * (calls // 8)) * 1e6

    async def run() -> dict[str, Any]:
        gate, sem = ConcurrencyGate(2), asyncio.Semaphore(2)
        gate1, sem1 = ConcurrencyGate(1), asyncio.Semaphore(1)
        await uncontended(gate1.slot), await uncontended(lambda: sem1)  # warm-up
        solo = pair("gate", await uncontended(gate1.slot), "semaphore", await uncontended(lambda: sem1))
        busy = pair("gate", await contended(gate.slot), "semaphore", await contended(lambda: sem))
        return {"uncontended": solo, "contended_8_on_2": busy}

    return asyncio.run(run())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--users", type=int, default=10)
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--entities", type=int, default=200)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        out: dict[str, Any] = {"config": vars(args)}
        out.update(bench_memory(str(Path(tmp) / "memory.sqlite"), args, rng))
        out.update(bench_keys(str(Path(tmp) / "keys.sqlite"), args.calls))
        out.update(bench_quota(str(Path(tmp) / "quota.sqlite"), args.calls))
        out["gate"] = bench_gate(args.calls * 10)
        out["total_s"] = round(time.perf_counter() - start, 1)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
