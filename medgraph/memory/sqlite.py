"""The SQLite backend of the app database (``medgraph.memory.database``): one WAL-mode file, a
connection guarded by a lock, writes in ``BEGIN IMMEDIATE`` transactions."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from medgraph.memory.database import Params, Transaction, is_postgres_url


class SQLiteDatabase:
    """A thread-safe connection to the app's SQLite file; the schema is created on open.

    A WAL-mode connection guarded by a lock; writes run in ``BEGIN IMMEDIATE`` transactions.
    """

    def __init__(self, path: str | Path, schema: str) -> None:
        if is_postgres_url(path):
            raise ValueError("a PostgreSQL URL is opened by open_app_database, not as a SQLite file")
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
    def write(self) -> Iterator[Transaction]:
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
