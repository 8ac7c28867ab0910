"""The app's state database (sessions, memories, API keys, quotas), shared by its stores.

This module holds what every backend shares (the ``AppDatabase`` protocol, ``is_postgres_url``,
``clock``); ``medgraph.memory.backends.open_app_database`` opens one.

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

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
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


def clock(now: float | None) -> float:
    """``now`` when a caller (a test) controls time, else the wall clock (epoch seconds)."""
    return time.time() if now is None else float(now)
