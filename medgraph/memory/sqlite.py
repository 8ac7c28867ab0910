"""The app's state database (sessions, memories, API keys, quotas), shared by its stores.

Input: a location (``app.path``) and the schema of the store opening it. ``open_app_database``
picks the backend: a ``postgresql://`` or ``postgres://`` URL opens a PostgreSQL server
(``medgraph.memory.postgres``, needs ``psycopg``); anything else is a SQLite file (``":memory:"``
for a private in-memory database). Output: an ``AppDatabase`` for either, one instance usable
from many threads: ``write()`` is a transaction, ``query(sql, params)`` returns the rows of one
read-only statement, rows are read by column name (``row["user_id"]``, ``dict(row)``).

Both backends take the same SQL: ``?`` placeholders, SQLite column types in the schema (the
PostgreSQL backend translates both). Writes are exclusive: a read-then-write (a quota check, a
weight update) is atomic even against other connections, processes and replicas (SQLite:
``BEGIN IMMEDIATE`` on the file; PostgreSQL: one advisory lock per database, see ``postgres.py``).
Only parameterised SQL is ever executed.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

Params = Sequence[Any]
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class Cursor(Protocol):
    """What a statement run in a write transaction returns (a sqlite3 or psycopg cursor)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Transaction(Protocol):
    """The connection inside ``AppDatabase.write()``: ``execute`` and ``executemany`` with ``?``."""

    def execute(self, sql: str, params: Params = (), /) -> Cursor: ...

    def executemany(self, sql: str, seq_of_params: Sequence[Params], /) -> Any: ...


class AppDatabase(Protocol):
    """A thread-safe connection to the app's state (SQLite or PostgreSQL)."""

    path: str  # the file, or the server URL without a password

    def write(self) -> AbstractContextManager[Transaction]: ...

    def query(self, sql: str, params: Params = ()) -> list[Any]: ...

    def close(self) -> None: ...


def is_postgres_url(path: str | Path) -> bool:
    """True when ``app.path`` names a PostgreSQL server rather than a SQLite file."""
    return isinstance(path, str) and path.strip().lower().startswith(POSTGRES_SCHEMES)


def open_app_database(path: str | Path, schema: str) -> AppDatabase:
    """The app database at ``path`` (a SQLite file or a PostgreSQL URL) with ``schema`` created."""
    if is_postgres_url(path):
        from medgraph.memory.postgres import PostgresDatabase

        return PostgresDatabase(str(path).strip(), schema)
    return SQLiteDatabase(path, schema)


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


def clock(now: float | None) -> float:
    """``now`` when a caller (a test) controls time, else the wall clock (epoch seconds)."""
    return time.time() if now is None else float(now)
