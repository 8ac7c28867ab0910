"""Chat sessions and their messages (short-term memory of a conversation).

Input: session IDs from clients (or none: a new one is made), the owner's user ID (``None`` for
anonymous callers), and the messages of each turn with the MeSH entities linked in them.
Output: ``ChatSession`` / ``ChatMessage`` records; ``recent`` gives the last turns that the agent
puts into its prompt and uses to resolve follow-up questions.

A session belongs to whoever opened it first: another user (or an anonymous caller, for a
user's session) presenting its ID gets ``SessionForbidden``. Sessions idle for longer than
``max_age_s`` are removed by ``delete_expired`` with their messages.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from medgraph.memory.backends import open_app_database
from medgraph.memory.database import clock

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_sessions (
    session_id TEXT PRIMARY KEY, user_id TEXT, created_at REAL NOT NULL, last_active REAL NOT NULL);
CREATE INDEX IF NOT EXISTS chat_sessions_active ON chat_sessions(last_active);
CREATE TABLE IF NOT EXISTS chat_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES chat_sessions(session_id) ON DELETE CASCADE,
    role TEXT NOT NULL, content TEXT NOT NULL, entities TEXT NOT NULL, created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS chat_messages_session ON chat_messages(session_id, seq);
"""

ROLES = ("user", "assistant", "system")
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


class SessionForbidden(PermissionError):
    """The session ID belongs to another user."""


class SessionNotFound(LookupError):
    """No session with this ID (never opened, or expired)."""


@dataclass(frozen=True)
class ChatSession:
    session_id: str
    user_id: str | None
    created_at: float


@dataclass(frozen=True)
class ChatMessage:
    session_id: str
    role: str
    content: str
    entities: tuple[tuple[str, str], ...]  # (MeSH ID, surface name as written in the message)
    created_at: float


class SessionStore:
    """Sessions and messages in the app database (``app.path``: SQLite file or PostgreSQL URL); safe to share between threads.

    With ``max_age_s`` (``memory.session_max_age_days``) set, ``open_session`` also runs
    ``delete_expired(max_age_s)`` at most once per ``prune_every_s``, so no separate job is needed.
    """

    def __init__(
        self, path: str | Path, max_age_s: float | None = None, prune_every_s: float = 3600.0
    ) -> None:
        if max_age_s is not None and max_age_s < 0:
            raise ValueError("max_age_s must be >= 0")
        self.max_age_s = max_age_s
        self.prune_every_s = prune_every_s
        self._last_prune = float("-inf")
        self._db = open_app_database(path, _SCHEMA)

    def open_session(
        self, session_id: str | None, user_id: str | None, now: float | None = None
    ) -> ChatSession:
        """The session to continue, or a new one.

        ``None`` makes a new session with a fresh random ID. An ID that exists must belong to
        ``user_id`` (else ``SessionForbidden``); an unknown ID (e.g. expired) is created for
        ``user_id``. Opening a session counts as activity for ``delete_expired``.
        """
        t = clock(now)
        if session_id is None:
            session_id = secrets.token_urlsafe(18)
        elif not _SESSION_ID.fullmatch(session_id):
            raise ValueError("a session ID is 1-128 characters of A-Z, a-z, 0-9, '_' and '-'")
        if self.max_age_s is not None and t - self._last_prune >= self.prune_every_s:
            self._last_prune = t
            self.delete_expired(self.max_age_s, now=t)
        with self._db.write() as db:
            row = db.execute(
                "SELECT user_id, created_at FROM chat_sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is None:
                db.execute(
                    "INSERT INTO chat_sessions (session_id, user_id, created_at, last_active) "
                    "VALUES (?,?,?,?)",
                    (session_id, user_id, t, t),
                )
                return ChatSession(session_id, user_id, t)
            if row["user_id"] != user_id:
                raise SessionForbidden(f"session {session_id} belongs to another user")
            db.execute("UPDATE chat_sessions SET last_active = ? WHERE session_id = ?", (t, session_id))
            return ChatSession(session_id, row["user_id"], row["created_at"])

    def add_message(
        self,
        session_id: str,
        role: str,
        content: str,
        entities: Iterable[tuple[str, str]] = (),
        now: float | None = None,
    ) -> ChatMessage:
        """Append a message to an open session (``SessionNotFound`` when there is none)."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, not {role!r}")
        pairs = tuple((str(mesh_id), str(name)) for mesh_id, name in entities)
        t = clock(now)
        with self._db.write() as db:
            updated = db.execute(
                "UPDATE chat_sessions SET last_active = ? WHERE session_id = ?", (t, session_id)
            ).rowcount
            if not updated:
                raise SessionNotFound(f"no session {session_id!r}: open it first")
            db.execute(
                "INSERT INTO chat_messages (session_id, role, content, entities, created_at) "
                "VALUES (?,?,?,?,?)",
                (session_id, role, content, json.dumps(pairs, ensure_ascii=False), t),
            )
        return ChatMessage(session_id, role, content, pairs, t)

    def recent(self, session_id: str, n: int = 5) -> list[ChatMessage]:
        """The last ``n`` messages of the session, oldest first (empty for an unknown session)."""
        if n < 0:
            raise ValueError("n must be >= 0")
        rows = self._db.query(
            "SELECT role, content, entities, created_at FROM chat_messages WHERE session_id = ? "
            "ORDER BY seq DESC LIMIT ?",
            (session_id, n),
        )
        return [
            ChatMessage(session_id, r["role"], r["content"], _entities(r["entities"]), r["created_at"])
            for r in reversed(rows)
        ]

    def delete_expired(self, max_age_s: float, now: float | None = None) -> int:
        """Delete sessions (and their messages) idle for more than ``max_age_s``; returns how many."""
        if max_age_s < 0:
            raise ValueError("max_age_s must be >= 0")
        cutoff = clock(now) - max_age_s
        with self._db.write() as db:
            return db.execute("DELETE FROM chat_sessions WHERE last_active < ?", (cutoff,)).rowcount

    def close(self) -> None:
        self._db.close()


def _entities(raw: str) -> tuple[tuple[str, str], ...]:
    return tuple((str(pair[0]), str(pair[1])) for pair in json.loads(raw))
