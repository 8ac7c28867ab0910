"""One SQLite file for the app's state (sessions, memories, API keys, quotas), shared by its stores.

Input: a path (``app.path``; ``":memory:"`` for a private in-memory database) and the schema of
the store opening it. Output: ``AppDatabase``, a WAL-mode connection guarded by a lock, so one
instance may be used from many threads. Writes run in ``BEGIN IMMEDIATE`` transactions: a
read-then-write (a quota check, a weight update) is atomic even against other connections and
other processes on the same file. Only parameterised SQL is ever executed.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

Params = Sequence[Any]


class AppDatabase:
    """A thread-safe connection to the app's SQLite file; the schema is created on open."""

    def __init__(self, path: str | Path, schema: str) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE in ``write``)
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            with self.write() as db:
                for statement in schema.split(";"):
                    if statement.strip():
                        db.execute(statement)

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed when the block ends, rolled back when it raises."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def query(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """Rows of one read-only statement."""
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._db.close()


def clock(now: float | None) -> float:
    """``now`` when a caller (a test) controls time, else the wall clock (epoch seconds)."""
    return time.time() if now is None else float(now)
