"""Users and API keys: who is calling, and with which role.

Input: user IDs and roles from operators (``python -m medgraph.auth``), the key in each request.
Output: ``Principal(user_id, role, key_id)`` for a valid key, None otherwise.

A key reads ``mgk_<key_id>_<secret>``: ``key_id`` (12 hex digits) names the key in listings and
logs, ``secret`` is 256 random bits. Only a hash of the secret is stored: HMAC-SHA256 keyed with
the pepper (a server secret from the environment, ``auth.pepper_env``) when there is one, else
SHA-256 (enough for a 256-bit random secret). Verification compares hashes in constant time.
The plaintext key is returned once, by ``issue_key``, and never stored or listed.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medgraph.memory.backends import open_app_database
from medgraph.memory.database import clock

_SCHEMA = """
CREATE TABLE IF NOT EXISTS auth_users (
    user_id TEXT PRIMARY KEY, role TEXT NOT NULL, disabled INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS auth_keys (
    key_id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES auth_users(user_id),
    scheme TEXT NOT NULL, hash TEXT NOT NULL, created_at REAL NOT NULL,
    last_used_at REAL, revoked_at REAL);
CREATE INDEX IF NOT EXISTS auth_keys_user ON auth_keys(user_id);
"""

ROLES = ("admin", "user")
ANONYMOUS = "anonymous"  # the shared identity of unauthenticated callers; not a user ID
ADMIN_USER = "admin"  # the user that owns the bootstrap key
KEY_PREFIX = "mgk_"
_USER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
_KEY = re.compile(r"mgk_([0-9a-f]{12})_([A-Za-z0-9_-]{32,128})")
_DUMMY_HASH = "0" * 64
LAST_USED_RESOLUTION_S = 60.0  # ``last_used_at`` is rewritten at most this often (not on every request)


@dataclass(frozen=True)
class Principal:
    user_id: str
    role: str  # "admin" | "user"
    key_id: str

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


def new_key() -> str:
    """A fresh key in the ``mgk_<key_id>_<secret>`` format (for ``auth.admin_key_env``)."""
    return f"{KEY_PREFIX}{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}"


class ApiKeyStore:
    """Users and hashed API keys in the app database (``app.path``: SQLite file or PostgreSQL URL); thread-safe."""

    def __init__(self, path: str | Path, pepper: str | None = None) -> None:
        self._pepper = pepper.encode() if pepper else None
        self._db = open_app_database(path, _SCHEMA)

    # --- users --------------------------------------------------------------------------

    def create_user(self, user_id: str, role: str = "user", now: float | None = None) -> None:
        """Add a user (ValueError for a bad ID or role, or an ID that exists)."""
        _check_user_id(user_id)
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, not {role!r}")
        with self._db.write() as db:
            if db.execute("SELECT 1 FROM auth_users WHERE user_id = ?", (user_id,)).fetchone():
                raise ValueError(f"user {user_id!r} exists")
            db.execute(
                "INSERT INTO auth_users (user_id, role, disabled, created_at) VALUES (?,?,0,?)",
                (user_id, role, clock(now)),
            )

    def set_disabled(self, user_id: str, disabled: bool = True) -> bool:
        """Disable (or enable again) a user: a disabled user's keys do not verify. False: no such user."""
        with self._db.write() as db:
            return bool(
                db.execute(
                    "UPDATE auth_users SET disabled = ? WHERE user_id = ?", (int(disabled), user_id)
                ).rowcount
            )

    def count_users(self) -> int:
        return int(self._db.query("SELECT COUNT(*) AS n FROM auth_users")[0]["n"])

    def has_user(self, user_id: str) -> bool:
        return bool(self._db.query("SELECT 1 AS one FROM auth_users WHERE user_id = ?", (user_id,)))

    def list_users(self, limit: int | None = None, offset: int = 0) -> list[dict[str, Any]]:
        """Users by ID (one page with ``limit`` / ``offset``) with their role, state and number of
        active keys (never a secret or a hash)."""
        sql = ("SELECT u.user_id, u.role, u.disabled, u.created_at, "
               "(SELECT COUNT(*) FROM auth_keys k WHERE k.user_id = u.user_id AND k.revoked_at IS NULL) "
               "AS active_keys FROM auth_users u ORDER BY u.user_id")
        params: tuple[Any, ...] = ()
        if limit is not None or offset:
            sql, params = sql + " LIMIT ? OFFSET ?", (1 << 62 if limit is None else max(0, limit), max(0, offset))
        rows = self._db.query(sql, params)
        return [
            {
                "user_id": r["user_id"],
                "role": r["role"],
                "disabled": bool(r["disabled"]),
                "created_at": r["created_at"],
                "active_keys": r["active_keys"],
            }
            for r in rows
        ]

    # --- keys ---------------------------------------------------------------------------

    def issue_key(self, user_id: str, now: float | None = None) -> tuple[str, str]:
        """A new key for an existing user: (key_id, plaintext key). The plaintext is not kept."""
        key = new_key()
        key_id, secret = _parse(key) or ("", "")
        with self._db.write() as db:
            if not db.execute("SELECT 1 FROM auth_users WHERE user_id = ?", (user_id,)).fetchone():
                raise ValueError(f"unknown user {user_id!r}: create it first")
            self._insert_key(db, key_id, user_id, secret, clock(now))
        return key_id, key

    def verify(self, key: str, now: float | None = None) -> Principal | None:
        """The caller a key belongs to; None for a malformed, unknown, revoked or disabled user's key."""
        parsed = _parse(key) if isinstance(key, str) else None
        key_id, secret = parsed or ("", "")
        rows = self._db.query(
            "SELECT k.user_id, k.scheme, k.hash, k.revoked_at, k.last_used_at, u.role, u.disabled "
            "FROM auth_keys k "
            "JOIN auth_users u ON u.user_id = k.user_id WHERE k.key_id = ?",
            (key_id,),
        )
        row = rows[0] if rows else None
        # hash and compare even for an unknown key, so timing does not tell which key IDs exist
        scheme = row["scheme"] if row is not None else ("hmac" if self._pepper else "sha256")
        computed = self._hash(scheme, key_id, secret)
        stored = row["hash"] if row is not None else _DUMMY_HASH
        if computed is None or not hmac.compare_digest(computed, stored):
            return None
        if row is None or parsed is None or row["revoked_at"] is not None or row["disabled"]:
            return None
        t = clock(now)
        if row["last_used_at"] is None or abs(t - row["last_used_at"]) >= LAST_USED_RESOLUTION_S:
            with self._db.write() as db:
                db.execute("UPDATE auth_keys SET last_used_at = ? WHERE key_id = ?", (t, key_id))
        return Principal(row["user_id"], row["role"], key_id)

    def revoke(self, key_id: str, now: float | None = None) -> bool:
        """Revoke a key for good; False when there is no such active key."""
        with self._db.write() as db:
            return bool(
                db.execute(
                    "UPDATE auth_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL",
                    (clock(now), key_id),
                ).rowcount
            )

    def list_keys(self, user_id: str | None = None, user_ids: list[str] | None = None,
                  limit: int | None = None) -> list[dict[str, Any]]:
        """Keys (all, one user's, or those of ``user_ids``; at most ``limit``), oldest first:
        key_id, user_id, created_at, last_used_at (+-1 min), revoked_at."""
        sql = "SELECT key_id, user_id, created_at, last_used_at, revoked_at FROM auth_keys"
        params: tuple[Any, ...] = ()
        if user_id is not None:
            sql, params = sql + " WHERE user_id = ?", (user_id,)
        elif user_ids is not None:
            if not user_ids:
                return []
            sql, params = sql + f" WHERE user_id IN ({', '.join('?' * len(user_ids))})", tuple(user_ids)
        sql += " ORDER BY created_at, key_id"
        if limit is not None:
            sql, params = sql + " LIMIT ?", (*params, max(0, limit))
        rows = self._db.query(sql, params)
        return [dict(r) for r in rows]

    def bootstrap_admin(self, key: str, now: float | None = None) -> None:
        """Install an operator-provided admin key (``auth.admin_key_env``), idempotently.

        ``key`` must have the ``mgk_<12 hex>_<secret of 32+ URL-safe characters>`` format
        (``python -m medgraph.auth new-key`` prints one). Creates the ``admin`` user (role admin)
        when missing and stores the key under its own key ID; running again with the same key
        changes nothing. A key ID already stored with a different secret, or an ``admin`` user
        without the admin role, is a ValueError. A revoked bootstrap key stays revoked.
        """
        parsed = _parse(key)
        if parsed is None:
            raise ValueError("the admin key must read mgk_<12 hex digits>_<32+ URL-safe characters>")
        key_id, secret = parsed
        t = clock(now)
        with self._db.write() as db:
            user = db.execute("SELECT role FROM auth_users WHERE user_id = ?", (ADMIN_USER,)).fetchone()
            if user is None:
                db.execute(
                    "INSERT INTO auth_users (user_id, role, disabled, created_at) VALUES (?,?,0,?)",
                    (ADMIN_USER, "admin", t),
                )
            elif user["role"] != "admin":
                raise ValueError(f"user {ADMIN_USER!r} exists without the admin role")
            existing = db.execute(
                "SELECT user_id, scheme, hash FROM auth_keys WHERE key_id = ?", (key_id,)
            ).fetchone()
            if existing is None:
                self._insert_key(db, key_id, ADMIN_USER, secret, t)
                return
            computed = self._hash(existing["scheme"], key_id, secret)
            if existing["user_id"] != ADMIN_USER or computed is None or not hmac.compare_digest(
                computed, existing["hash"]
            ):
                raise ValueError(f"key {key_id} is stored with another secret or user")

    def close(self) -> None:
        self._db.close()

    # --- hashing ------------------------------------------------------------------------

    def _insert_key(self, db: Any, key_id: str, user_id: str, secret: str, now: float) -> None:
        scheme = "hmac" if self._pepper else "sha256"
        digest = self._hash(scheme, key_id, secret)
        db.execute(
            "INSERT INTO auth_keys (key_id, user_id, scheme, hash, created_at) VALUES (?,?,?,?,?)",
            (key_id, user_id, scheme, digest, now),
        )

    def _hash(self, scheme: str, key_id: str, secret: str) -> str | None:
        """Hex digest of ``key_id:secret``; None for an HMAC key when this store has no pepper."""
        message = f"{key_id}:{secret}".encode()
        if scheme == "sha256":
            return hashlib.sha256(message).hexdigest()
        if self._pepper is None:
            return None
        return hmac.new(self._pepper, message, hashlib.sha256).hexdigest()


def _parse(key: str) -> tuple[str, str] | None:
    match = _KEY.fullmatch(key.strip())
    return (match.group(1), match.group(2)) if match else None


def _check_user_id(user_id: str) -> None:
    if not _USER_ID.fullmatch(user_id):
        raise ValueError("a user ID is 1-64 characters of A-Z, a-z, 0-9, '.', '_', '@', '-' (not first)")
    if user_id == ANONYMOUS:
        raise ValueError(f"{ANONYMOUS!r} is reserved for unauthenticated callers")
