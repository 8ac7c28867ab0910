"""Opening the app database: the one place that knows both backends (``medgraph.memory.database``
describes what they share)."""

from __future__ import annotations

from pathlib import Path

from medgraph.memory.database import AppDatabase, is_postgres_url
from medgraph.memory.sqlite import SQLiteDatabase


def open_app_database(path: str | Path, schema: str) -> AppDatabase:
    """The app database at ``path`` (a SQLite file or a PostgreSQL URL) with ``schema`` created."""
    if is_postgres_url(path):
        from medgraph.memory.postgres import PostgresDatabase

        return PostgresDatabase(str(path).strip(), schema)
    return SQLiteDatabase(path, schema)
