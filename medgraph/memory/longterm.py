"""Long-term memory of authenticated users: interests and past answers, anchored on MeSH IDs.

Input: a user ID, the MeSH IDs a question mentions, and each answered question. Output: the
user's strongest interests (``top_interests``) and the past questions and answers about the
entities of a new question (``recall``), each with an age label in the question's language.

Two graph-shaped records, stored as tables of the app database (SQLite or PostgreSQL):

- ``(:User)-[:INTERESTED_IN {weight, last_seen}]->(:Entity)``: one edge per (user, MeSH ID);
- ``(:User)-[:REMEMBERS]->(:Memory {text, weight, last_seen})-[:ABOUT]->(:Entity)``: one node
  per answered question, linked to the entities it mentions.

Weights decay exponentially with a half-life (``half_life_days``): the weight as of ``now`` is
``w * exp(-lambda * (now - last_seen))`` with ``lambda = ln 2 / half_life``. The stored weight is
always the weight *as of last_seen*: an update first decays it to ``now``, then applies
``w = decayed * 0.9 + 1.0`` and sets ``last_seen = now``. A first mention stores 1.0.

Each (user, entity) keeps at most ``capacity_per_entity`` memories; a new memory beyond that
evicts the memory of that entity with the lowest decayed weight (not the oldest one).
Anonymous callers (``user_id`` None) have no long-term memory: their writes do nothing and
their reads are empty. One user never sees another user's records.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medgraph import lang
from medgraph.lang import LanguagePack
from medgraph.memory.backends import open_app_database
from medgraph.memory.database import Transaction, clock

_SCHEMA = """
CREATE TABLE IF NOT EXISTS user_interests (
    user_id TEXT NOT NULL, mesh_id TEXT NOT NULL, weight REAL NOT NULL, last_seen REAL NOT NULL,
    PRIMARY KEY (user_id, mesh_id));
CREATE TABLE IF NOT EXISTS user_memories (
    memory_id TEXT PRIMARY KEY, user_id TEXT NOT NULL, text TEXT NOT NULL, weight REAL NOT NULL,
    created_at REAL NOT NULL, last_seen REAL NOT NULL);
CREATE INDEX IF NOT EXISTS user_memories_user ON user_memories(user_id);
CREATE TABLE IF NOT EXISTS user_memory_entities (
    memory_id TEXT NOT NULL REFERENCES user_memories(memory_id) ON DELETE CASCADE,
    user_id TEXT NOT NULL, mesh_id TEXT NOT NULL, PRIMARY KEY (memory_id, mesh_id));
CREATE INDEX IF NOT EXISTS user_memory_entities_entity ON user_memory_entities(user_id, mesh_id);
"""

REPEAT_FACTOR = 0.9  # share of the decayed weight kept on a repeat mention
MENTION_WEIGHT = 1.0  # added on each mention (and the weight of a first mention)
DAY_S = 86400.0


@dataclass(frozen=True)
class Memory:
    memory_id: str
    text: str
    mesh_ids: tuple[str, ...]
    weight: float  # decayed to the time of the recall
    created_at: float
    age_label: str  # "3 days ago" / "vor 3 Tagen" / "3天前"


class LongTermMemory:
    """Per-user interests and conversation memories; see the module docstring for the model."""

    def __init__(self, path: str | Path, half_life_days: float = 30.0, capacity_per_entity: int = 5) -> None:
        if not half_life_days > 0:
            raise ValueError("half_life_days must be > 0")
        if capacity_per_entity < 1:
            raise ValueError("capacity_per_entity must be >= 1")
        self.half_life_days = float(half_life_days)
        self.capacity_per_entity = int(capacity_per_entity)
        self.decay_rate = math.log(2) / (self.half_life_days * DAY_S)  # lambda, per second
        self._db = open_app_database(path, _SCHEMA)

    def decayed(self, weight: float, last_seen: float, now: float) -> float:
        """``weight`` (as of ``last_seen``) decayed to ``now`` (a ``now`` before ``last_seen``: no decay)."""
        return weight * math.exp(-self.decay_rate * max(0.0, now - last_seen))

    def reinforced(self, weight: float, last_seen: float, now: float) -> float:
        """The weight after one more mention (or use) at ``now``: ``decayed * 0.9 + 1.0``."""
        return self.decayed(weight, last_seen, now) * REPEAT_FACTOR + MENTION_WEIGHT

    def _reinforce_each(self, user_id: str | None, keys: Iterable[str], now: float | None, select: str,
                        write: Callable[[Transaction, str, float | None, float], None]) -> None:
        """In one transaction, for each distinct key: ``select`` (weight, last_seen) the row of
        (key, user), and pass its reinforced weight (None when there is no row) to
        ``write(db, key, weight, now)``. Does nothing for ``user_id`` None."""
        ids = _distinct(keys)
        if user_id is None or not ids:
            return
        t = clock(now)
        with self._db.write() as db:
            for key in ids:
                row = db.execute(select, (key, user_id)).fetchone()
                write(db, key, None if row is None else self.reinforced(row["weight"], row["last_seen"], t), t)

    # --- interests ----------------------------------------------------------------------

    def record_interests(
        self, user_id: str | None, mesh_ids: Iterable[str], now: float | None = None
    ) -> None:
        """Count one mention of each entity (duplicates in ``mesh_ids`` count once).

        A new (user, entity) edge gets weight 1.0. A repeat mention first decays the stored
        weight from its ``last_seen`` to ``now``, then sets ``weight = decayed * 0.9 + 1.0`` and
        ``last_seen = now``, so the stored weight is always the weight as of ``last_seen``.
        Does nothing for ``user_id`` None.
        """

        def upsert(db: Transaction, mesh_id: str, weight: float | None, t: float) -> None:
            db.execute(
                "INSERT INTO user_interests (user_id, mesh_id, weight, last_seen) VALUES (?,?,?,?) "
                "ON CONFLICT(user_id, mesh_id) DO UPDATE SET weight = excluded.weight, "
                "last_seen = excluded.last_seen",
                (user_id, mesh_id, MENTION_WEIGHT if weight is None else weight, t),
            )

        self._reinforce_each(user_id, mesh_ids, now,
                             "SELECT weight, last_seen FROM user_interests WHERE mesh_id = ? AND user_id = ?", upsert)

    def top_interests(
        self, user_id: str | None, k: int = 5, now: float | None = None
    ) -> list[tuple[str, float]]:
        """The user's ``k`` strongest interests as (MeSH ID, weight decayed to ``now``), strongest first."""
        if user_id is None or k <= 0:
            return []
        t = clock(now)
        rows = self._db.query(
            "SELECT mesh_id, weight, last_seen FROM user_interests WHERE user_id = ?", (user_id,)
        )
        scored = [(r["mesh_id"], self.decayed(r["weight"], r["last_seen"], t)) for r in rows]
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:k]

    # --- conversation memories ----------------------------------------------------------

    def remember(
        self,
        user_id: str | None,
        question: str,
        answer: str,
        mesh_ids: Iterable[str],
        now: float | None = None,
    ) -> str | None:
        """Store a question and its answer as a memory about ``mesh_ids``; returns its ID.

        Returns None (and stores nothing) for an anonymous user or when no entity is given (a
        memory is found again only through its entities). The new memory starts at weight 1.0
        and is never the one evicted by its own insertion: for each of its entities that then
        holds more than ``capacity_per_entity`` memories, the others with the lowest decayed
        weight (ties: the oldest) are deleted.
        """
        ids = _distinct(mesh_ids)
        if user_id is None or not ids:
            return None
        if not question.strip() or not answer.strip():
            raise ValueError("a memory needs a non-empty question and answer")
        t = clock(now)
        memory_id = secrets.token_hex(8)
        text = f"Q: {question.strip()}\nA: {answer.strip()}"
        with self._db.write() as db:
            db.execute(
                "INSERT INTO user_memories (memory_id, user_id, text, weight, created_at, last_seen) "
                "VALUES (?,?,?,?,?,?)",
                (memory_id, user_id, text, MENTION_WEIGHT, t, t),
            )
            db.executemany(
                "INSERT INTO user_memory_entities (memory_id, user_id, mesh_id) VALUES (?,?,?)",
                [(memory_id, user_id, mesh_id) for mesh_id in ids],
            )
            for mesh_id in ids:
                for victim in self._over_capacity(db, user_id, mesh_id, memory_id, t):
                    db.execute("DELETE FROM user_memories WHERE memory_id = ?", (victim,))
        return memory_id

    def _over_capacity(
        self, db: Transaction, user_id: str, mesh_id: str, keep: str, now: float
    ) -> list[str]:
        """Memories of (user, entity) to evict down to ``capacity_per_entity``; never ``keep``."""
        rows = db.execute(
            "SELECT m.memory_id, m.weight, m.last_seen, m.created_at FROM user_memories m "
            "JOIN user_memory_entities e ON e.memory_id = m.memory_id "
            "WHERE e.user_id = ? AND e.mesh_id = ?",
            (user_id, mesh_id),
        ).fetchall()
        excess = len(rows) - self.capacity_per_entity
        if excess <= 0:
            return []
        others = [r for r in rows if r["memory_id"] != keep]
        others.sort(key=lambda r: (self.decayed(r["weight"], r["last_seen"], now), r["created_at"]))
        return [r["memory_id"] for r in others[:excess]]

    def recall(
        self,
        user_id: str | None,
        mesh_ids: Iterable[str],
        k: int = 3,
        language: str = lang.PIVOT,
        now: float | None = None,
    ) -> list[Memory]:
        """This user's memories about any of ``mesh_ids``, best first.

        Score = decayed weight x overlap, where overlap is the share of ``mesh_ids`` that the
        memory is about. Ties go to the newer memory. Empty for an anonymous user. Recalling does
        not reinforce: call ``reinforce`` for the memories an answer actually used.
        """
        label_language = _time_labels(language).code
        ids = _distinct(mesh_ids)
        if user_id is None or not ids or k <= 0:
            return []
        t = clock(now)
        wanted = set(ids)
        marks = ",".join("?" * len(ids))
        # one row per (memory, entity it is about); grouped here, not with an SQL aggregate, so
        # the statement runs unchanged on SQLite and PostgreSQL
        rows = self._db.query(
            "SELECT m.memory_id, m.text, m.weight, m.last_seen, m.created_at, all_e.mesh_id "
            "FROM user_memories m "
            "JOIN user_memory_entities all_e ON all_e.memory_id = m.memory_id "
            "WHERE m.user_id = ? AND m.memory_id IN ("
            f"  SELECT memory_id FROM user_memory_entities WHERE user_id = ? AND mesh_id IN ({marks}))",
            (user_id, user_id, *ids),
        )
        found: dict[str, tuple[Any, set[str]]] = {}
        for r in rows:
            found.setdefault(r["memory_id"], (r, set()))[1].add(r["mesh_id"])
        scored: list[tuple[float, Memory]] = []
        for r, entities in found.values():
            about = tuple(sorted(entities))
            weight = self.decayed(r["weight"], r["last_seen"], t)
            overlap = len(wanted.intersection(about)) / len(wanted)
            label = relative_time_label(t - r["created_at"], label_language)
            memory = Memory(r["memory_id"], r["text"], about, weight, r["created_at"], label)
            scored.append((weight * overlap, memory))
        scored.sort(key=lambda item: (-item[0], -item[1].created_at, item[1].memory_id))
        return [memory for _, memory in scored[:k]]

    def reinforce(self, user_id: str | None, memory_ids: Iterable[str], now: float | None = None) -> None:
        """Memories used in an answer: ``weight = decayed * 0.9 + 1.0``, ``last_seen = now``.

        Only this user's memories are touched; unknown IDs and other users' IDs are ignored.
        """

        def update(db: Transaction, memory_id: str, weight: float | None, t: float) -> None:
            if weight is not None:  # not this user's memory, or no such memory
                db.execute("UPDATE user_memories SET weight = ?, last_seen = ? WHERE memory_id = ?",
                           (weight, t, memory_id))

        self._reinforce_each(user_id, memory_ids, now,
                             "SELECT weight, last_seen FROM user_memories WHERE memory_id = ? AND user_id = ?", update)

    def forget_user(self, user_id: str) -> int:
        """Delete everything remembered about a user; returns the number of memories deleted."""
        with self._db.write() as db:
            db.execute("DELETE FROM user_interests WHERE user_id = ?", (user_id,))
            return db.execute("DELETE FROM user_memories WHERE user_id = ?", (user_id,)).rowcount

    def close(self) -> None:
        self._db.close()


# --- relative time labels ------------------------------------------------------------------

# (unit length in seconds, unit): each pack's ``AnswerStrings.time_units`` names the unit
_UNITS: tuple[tuple[float, str], ...] = (
    (365 * DAY_S, "year"),
    (30 * DAY_S, "month"),
    (7 * DAY_S, "week"),
    (DAY_S, "day"),
    (3600.0, "hour"),
    (60.0, "minute"),
)


def relative_time_label(seconds: float, language: str) -> str:
    """How long ago, in words: ``"just now"``, ``"3 days ago"``, ``"vor 3 Monaten"``, ``"3个月前"``.

    The largest whole unit (year = 365 days, month = 30 days, week, day, hour, minute), rounded
    down; under a minute (or a negative age, from clock skew) is "just now". ``language``: the
    code of a registered pack, whose ``just_now``, ``time_ago`` and ``time_units`` are used
    (ValueError otherwise).
    """
    strings = _time_labels(language).answer
    if math.isnan(seconds):
        raise ValueError("seconds must be a number")
    for length, unit in _UNITS:
        count = int(seconds // length) if seconds >= length else 0
        if count:
            one, many = strings.time_units[unit]
            return strings.time_ago.format(count=count, unit=one if count == 1 else many)
    return strings.just_now


def _time_labels(language: str) -> LanguagePack:
    """The pack whose time labels ``language`` asks for; ValueError for an unregistered language."""
    code = language.lower()
    if not lang.is_known(code):
        raise ValueError(f"no time labels for language {language!r} ({', '.join(lang.codes())})")
    return lang.get(code)


def _distinct(values: Iterable[str]) -> list[str]:
    """The distinct IDs of ``values`` in their first order (empty strings dropped)."""
    if isinstance(values, str):
        raise TypeError("expected an iterable of IDs, not one string")
    seen: dict[str, None] = {}
    for value in values:
        if not isinstance(value, str):
            raise TypeError(f"an ID must be a string, not {type(value).__name__}")
        if value:
            seen.setdefault(value, None)
    return list(seen)

