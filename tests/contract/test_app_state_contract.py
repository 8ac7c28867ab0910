"""The app-state contract (users and keys, quotas, sessions, long-term memory), run on SQLite
and on PostgreSQL.

The PostgreSQL parameter uses the server named by ``MEDGRAPH_APP_DB_URL`` (``make test`` sets it
from ``cluster/postgres/pg-dev.sh``'s ``DIR/url``); without it, a private pg-dev server is started
in a temporary directory on a free port for the session and stopped afterwards. When no server
answers (or ``psycopg`` is missing) the PostgreSQL cases skip with the reason, unless
``MEDGRAPH_REQUIRE_POSTGRES=1``, in which case they fail. Each PostgreSQL test works in a schema
of its own (``search_path`` in the URL), dropped after it: it never touches data it did not create.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from medgraph.auth import ApiKeyStore, Principal, QuotaExceeded, QuotaTracker, new_key
from medgraph.memory import LongTermMemory, SessionForbidden, SessionNotFound, SessionStore
from medgraph.memory.backends import open_app_database
from medgraph.memory.database import is_postgres_url
from medgraph.memory.sqlite import SQLiteDatabase
from medgraph.stores.errors import StoreUnavailable
from tests.helpers import require_module, unavailable

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC).timestamp()
MIDNIGHT = datetime(2026, 3, 11, tzinfo=UTC).timestamp()
DAY = 86400.0
MI, ASPIRIN, DIABETES = "D009203", "D001241", "D003920"
REPO = Path(__file__).resolve().parents[2]
PG_DEV = REPO / "cluster" / "postgres" / "pg-dev.sh"
TABLES = ("auth_users", "auth_keys", "quota_counts", "chat_sessions", "chat_messages",
          "user_interests", "user_memories", "user_memory_entities")


# --- backends ---------------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (as tests/helpers.py, without
    its store imports, so the spawned quota processes start fast)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _unavailable(reason: str) -> None:
    unavailable(reason, "MEDGRAPH_REQUIRE_POSTGRES")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A reachable PostgreSQL URL: ``MEDGRAPH_APP_DB_URL``, else a pg-dev server of this session."""
    try:
        import psycopg
    except ImportError:
        _unavailable("psycopg is not installed (pip install 'psycopg[binary]')")
    url = os.environ.get("MEDGRAPH_APP_DB_URL", "").strip()
    started = ""
    if not url:
        started = tempfile.mkdtemp(prefix="medgraph-pg-", dir="/tmp")
        done = subprocess.run([str(PG_DEV), "start", started], capture_output=True, text=True,
                              env={**os.environ, "PG_PORT": str(free_port())}, timeout=180)
        if done.returncode != 0:
            shutil.rmtree(started, ignore_errors=True)
            _unavailable(f"MEDGRAPH_APP_DB_URL is not set and pg-dev.sh could not start a server "
                         f"(exit {done.returncode}: {done.stderr.strip()[-300:]})")
        with open(os.path.join(started, "url")) as f:
            url = f.read().strip()
    try:
        psycopg.connect(url, connect_timeout=5).close()
    except psycopg.Error as exc:
        _unavailable(f"no PostgreSQL answering at {url} ({str(exc).strip()}); start one with "
                     "cluster/postgres/pg-dev.sh start DIR and set MEDGRAPH_APP_DB_URL=$(cat DIR/url)")
    yield url
    if started:
        subprocess.run([str(PG_DEV), "stop", started], capture_output=True, timeout=120)
        shutil.rmtree(started, ignore_errors=True)


def _with_schema(url: str, schema: str) -> str:
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-csearch_path={schema}', safe='')}"


@pytest.fixture(params=["sqlite", "postgres"])
def app_db(request, tmp_path) -> Iterator[str]:
    """``app.path`` for one test: a fresh SQLite file, or a URL into a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield str(tmp_path / "app.sqlite")
        return
    import psycopg

    base = request.getfixturevalue("postgres_url")
    schema = f"medgraph_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield _with_schema(base, schema)
    finally:
        with psycopg.connect(base, autocommit=True) as admin:
            admin.execute("SET lock_timeout = '10s'")
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def stored_text(location: str) -> str:
    """Every row of every app-state table, as one text (to look for what must not be stored)."""
    rows: dict[str, list[list[object]]] = {}
    if is_postgres_url(location):
        import psycopg

        with psycopg.connect(location) as db:
            for table in TABLES:
                exists = db.execute("SELECT to_regclass(%s)", (table,)).fetchone()
                if exists and exists[0] is not None:
                    rows[table] = [list(r) for r in db.execute(f"SELECT * FROM {table}").fetchall()]
    else:
        with sqlite3.connect(location) as db:
            for table in TABLES:
                if db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
                    rows[table] = [list(r) for r in db.execute(f"SELECT * FROM {table}").fetchall()]
    return json.dumps(rows, default=str)


def row_counts(location: str, tables: tuple[str, ...]) -> list[int]:
    db = open_app_database(location, "")
    try:
        return [int(db.query(f"SELECT COUNT(*) AS n FROM {t}")[0]["n"]) for t in tables]
    finally:
        db.close()


# --- users and keys ---------------------------------------------------------------------------


@pytest.mark.parametrize("pepper", [None, "server-side pepper"])
def test_keys_are_stored_hashed_and_verify(app_db, pepper):
    store = ApiKeyStore(app_db, pepper=pepper)
    store.create_user("alice")
    key_id, key = store.issue_key("alice", now=T0)
    assert store.verify(key, now=T0 + 1) == Principal("alice", "user", key_id)
    secret = key.split("_", 2)[2]
    text = stored_text(app_db)
    assert key_id in text and key not in text and secret not in text and secret[:16] not in text
    for listing in (store.list_keys(), store.list_keys("alice"), store.list_users()):
        assert secret not in json.dumps(listing)
        assert not any("hash" in row for row in listing)
    assert store.list_keys("alice")[0]["last_used_at"] == T0 + 1
    store.verify(key, now=T0 + 30)  # within a minute: no write
    assert store.list_keys("alice")[0]["last_used_at"] == T0 + 1
    store.verify(key, now=T0 + 61)
    assert store.list_keys("alice")[0]["last_used_at"] == T0 + 61
    assert set(store.list_keys()[0]) == {"key_id", "user_id", "created_at", "last_used_at", "revoked_at"}


def test_verify_refuses_wrong_malformed_and_foreign_pepper_keys(app_db):
    store = ApiKeyStore(app_db, pepper="p1")
    store.create_user("alice")
    key_id, key = store.issue_key("alice")
    tampered = key[:-1] + ("A" if key[-1] != "A" else "B")
    for bad in (tampered, "", "mgk_", "Bearer " + key, key.replace(key_id, "0" * 12), "x" * 80):
        assert store.verify(bad) is None
    assert ApiKeyStore(app_db, pepper="p2").verify(key) is None
    assert ApiKeyStore(app_db, pepper=None).verify(key) is None
    assert ApiKeyStore(app_db, pepper="p1").verify(key) is not None


def test_revoke_disable_and_list(app_db):
    store = ApiKeyStore(app_db)
    store.create_user("alice", now=T0)
    k1, key1 = store.issue_key("alice", now=T0)
    k2, key2 = store.issue_key("alice", now=T0 + 1)
    assert [k["key_id"] for k in store.list_keys("alice")] == [k1, k2]  # by creation time
    assert store.revoke(k1, now=T0 + 2) is True
    assert store.revoke(k1) is False and store.revoke("nope") is False
    assert store.verify(key1) is None and store.verify(key2) is not None
    assert store.list_keys("alice")[0]["revoked_at"] == T0 + 2
    assert store.list_users() == [
        {"user_id": "alice", "role": "user", "disabled": False, "created_at": T0, "active_keys": 1}]
    assert store.set_disabled("alice") is True
    assert store.verify(key2) is None and store.list_users()[0]["disabled"] is True
    store.set_disabled("alice", False)
    assert store.verify(key2) is not None
    assert store.set_disabled("nobody") is False


def test_roles_users_and_bad_input(app_db):
    store = ApiKeyStore(app_db)
    store.create_user("root", role="admin")
    store.create_user("bob")
    _, admin_key = store.issue_key("root")
    _, bob_key = store.issue_key("bob")
    admin, bob = store.verify(admin_key), store.verify(bob_key)
    assert admin is not None and admin.is_admin and bob is not None and not bob.is_admin
    assert [u["user_id"] for u in store.list_users()] == ["bob", "root"]
    with pytest.raises(ValueError, match="role"):
        store.create_user("carol", role="superuser")
    with pytest.raises(ValueError, match="exists"):
        store.create_user("bob")
    with pytest.raises(ValueError, match="reserved"):
        store.create_user("anonymous")
    with pytest.raises(ValueError, match="user ID"):
        store.create_user("bob'; DROP TABLE auth_users; --")
    with pytest.raises(ValueError, match="unknown user"):
        store.issue_key("carol")
    assert len(store.list_users()) == 2  # the refused writes left nothing behind


def test_bootstrap_admin_is_idempotent(app_db):
    key = new_key()
    store = ApiKeyStore(app_db, pepper="p")
    store.bootstrap_admin(key)
    store.bootstrap_admin(key)
    ApiKeyStore(app_db, pepper="p").bootstrap_admin(key)  # a restart
    principal = store.verify(key)
    assert principal is not None and principal.user_id == "admin" and principal.role == "admin"
    assert len(store.list_keys("admin")) == 1
    with pytest.raises(ValueError, match="another secret"):
        store.bootstrap_admin(key[: len("mgk_") + 12] + "_" + "s" * 43)
    store.bootstrap_admin(new_key())
    assert len(store.list_keys("admin")) == 2 and len(store.list_users()) == 1
    other = ApiKeyStore(app_db.replace("app.sqlite", "other.sqlite")) if not is_postgres_url(app_db) else None
    if other is not None:
        other.create_user("admin", role="user")
        with pytest.raises(ValueError, match="admin role"):
            other.bootstrap_admin(new_key())


def test_a_key_issued_by_one_replica_verifies_on_another(app_db):
    one, two = ApiKeyStore(app_db, pepper="p"), ApiKeyStore(app_db, pepper="p")  # two connections
    one.create_user("alice")
    key_id, key = one.issue_key("alice")
    assert two.verify(key) == Principal("alice", "user", key_id)
    with pytest.raises(ValueError, match="exists"):
        two.create_user("alice")
    assert two.revoke(key_id) is True
    assert one.verify(key) is None
    one.close()
    two.close()


def test_users_and_keys_are_listed_a_page_at_a_time(app_db):
    store = ApiKeyStore(app_db)
    for name in ("carol", "alice", "bob", "dave"):
        store.create_user(name, now=T0)
        store.issue_key(name, now=T0)
    store.issue_key("bob", now=T0 + 1)
    assert store.count_users() == 4 and store.has_user("bob") and not store.has_user("bo")
    page = store.list_users(limit=2, offset=1)
    assert [u["user_id"] for u in page] == ["bob", "carol"]
    assert [u["user_id"] for u in store.list_users(offset=3)] == ["dave"]
    keys = store.list_keys(user_ids=["bob", "carol"])
    assert sorted(k["user_id"] for k in keys) == ["bob", "bob", "carol"]
    assert len(store.list_keys(user_ids=["bob", "carol"], limit=2)) == 2
    assert store.list_keys(user_ids=[]) == []


# --- quotas -----------------------------------------------------------------------------------


def test_usage_lists_the_busiest_callers_and_counts_them_all(app_db, monkeypatch):
    from medgraph.auth import quota as quota_module

    monkeypatch.setattr(quota_module, "USAGE_USERS", 2)
    quota = QuotaTracker(app_db, per_user_daily=10, global_daily=100)
    for user, n in (("a", 1), ("b", 3), ("c", 2), ("d", 1)):
        for _ in range(n):
            quota.consume(user, now=T0)
    usage = quota.usage(now=T0)
    assert usage["users"] == {"b": 3, "c": 2} and usage["users_counted"] == 4
    assert usage["global"]["used"] == 7
    assert quota.usage("d", now=T0)["user"]["used"] == 1


def test_per_user_quota_and_day_rollover(app_db):
    quota = QuotaTracker(app_db, per_user_daily=3, global_daily=100)
    assert [quota.consume("alice", now=T0 + i)["user"] for i in range(3)] == [2, 1, 0]
    with pytest.raises(QuotaExceeded) as exc:
        quota.consume("alice", now=T0 + 10)
    assert exc.value.scope == "user" and exc.value.limit == 3 and exc.value.resets_at == MIDNIGHT
    assert quota.consume("bob", now=T0)["user"] == 2
    assert quota.usage("alice", now=T0)["user"] == {"user_id": "alice", "used": 3, "limit": 3, "remaining": 0}
    with pytest.raises(QuotaExceeded):
        quota.consume("alice", now=MIDNIGHT - 1)
    result = quota.consume("alice", now=MIDNIGHT)
    assert result["user"] == 2 and result["resets_at"] == MIDNIGHT + 86400


def test_global_quota_anonymous_bucket_and_refusals_are_not_counted(app_db):
    quota = QuotaTracker(app_db, per_user_daily=2, global_daily=5)
    for user in ("a", "b", "c", None):
        quota.consume(user, now=T0)
    quota.consume(None, now=T0)
    with pytest.raises(QuotaExceeded, match="user"):
        quota.consume(None, now=T0)
    with pytest.raises(QuotaExceeded) as exc:
        quota.consume("e", now=T0)
    assert exc.value.scope == "global" and exc.value.limit == 5
    usage = quota.usage(now=T0)
    assert usage["global"] == {"used": 5, "limit": 5, "remaining": 0}
    assert usage["users"] == {"a": 1, "anonymous": 2, "b": 1, "c": 1}
    assert quota.consume("e", now=MIDNIGHT)["global"] == 4


def test_old_quota_buckets_are_pruned(app_db):
    quota = QuotaTracker(app_db, per_user_daily=5, global_daily=50)
    quota.consume("alice", now=T0)
    QuotaTracker(app_db, per_user_daily=5, global_daily=50).consume("alice", now=T0 + 40 * DAY)
    assert row_counts(app_db, ("quota_counts",)) == [2]  # user + global of the new day only


def test_quota_counts_are_exact_under_thread_concurrency(app_db):
    trackers = [QuotaTracker(app_db, per_user_daily=1000, global_daily=50) for _ in range(4)]
    accepted, refused = [], []

    def hammer(tracker: QuotaTracker) -> None:
        for _ in range(20):
            try:
                tracker.consume("alice", now=T0)
                accepted.append(1)
            except QuotaExceeded:
                refused.append(1)

    threads = [threading.Thread(target=hammer, args=(t,)) for t in trackers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(accepted) == 50 and len(refused) == 30
    assert trackers[0].usage("alice", now=T0)["user"]["used"] == 50


def _consume_many(location: str, limit: int, attempts: int, ready: Any, results: Any) -> None:
    """One process: 4 threads (a connection each) making ``attempts`` consume calls for one user
    each, once every process is ready; puts (admitted, refused) of the process."""
    trackers = [QuotaTracker(location, per_user_daily=limit, global_daily=100_000) for _ in range(4)]
    for tracker in trackers:
        tracker.usage("alice", now=T0)  # connected before the race starts
    counts = [0, 0]
    lock = threading.Lock()

    def hammer(tracker: QuotaTracker) -> None:
        for _ in range(attempts):
            try:
                tracker.consume("alice", now=T0)
                outcome = 0
            except QuotaExceeded:
                outcome = 1
            with lock:
                counts[outcome] += 1

    threads = [threading.Thread(target=hammer, args=(t,)) for t in trackers]
    ready.wait(timeout=120)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for tracker in trackers:
        tracker.close()
    results.put((counts[0], counts[1]))


def test_two_processes_never_overshoot_a_per_user_limit(app_db):
    limit, attempts = 150, 50  # 2 processes x 4 threads x 50 calls = 400 for 150 admissions
    QuotaTracker(app_db, per_user_daily=limit, global_daily=100_000).close()  # schema before the race
    ctx = multiprocessing.get_context("spawn")  # fresh interpreters: no inherited connections
    ready, results = ctx.Barrier(2), ctx.Queue()
    workers = [ctx.Process(target=_consume_many, args=(app_db, limit, attempts, ready, results))
               for _ in range(2)]
    for w in workers:
        w.start()
    got = [results.get(timeout=180) for _ in workers]
    for w in workers:
        w.join(timeout=30)
        assert w.exitcode == 0
    assert sum(a for a, _ in got) == limit
    assert sum(r for _, r in got) == 2 * 4 * attempts - limit
    if is_postgres_url(app_db):  # lock waiters queue: both processes get admissions
        assert all(a > 0 for a, _ in got), got
    # (SQLite's busy handler backs off, so one process may take every admission: still exact)
    usage = QuotaTracker(app_db, per_user_daily=limit, global_daily=100_000).usage("alice", now=T0)
    assert usage["user"]["used"] == limit and usage["global"]["used"] == limit


# --- sessions ---------------------------------------------------------------------------------


def test_session_ownership(app_db):
    store = SessionStore(app_db)
    mine = store.open_session(None, "alice", now=T0)
    assert mine.user_id == "alice" and mine.created_at == T0 and len(mine.session_id) >= 16
    assert store.open_session(mine.session_id, "alice", now=T0 + 5) == mine
    with pytest.raises(SessionForbidden):
        store.open_session(mine.session_id, "bob", now=T0)
    with pytest.raises(SessionForbidden):
        store.open_session(mine.session_id, None, now=T0)
    anonymous = store.open_session(None, None, now=T0)
    assert anonymous.user_id is None
    assert store.open_session(anonymous.session_id, None, now=T0).user_id is None
    with pytest.raises(SessionForbidden):
        store.open_session(anonymous.session_id, "bob", now=T0)
    with pytest.raises(SessionForbidden):  # another replica sees the same owner
        SessionStore(app_db).open_session(mine.session_id, "bob", now=T0)
    fresh = store.open_session("client-chosen_id-1", "bob", now=T0)
    assert fresh.user_id == "bob" and fresh.session_id == "client-chosen_id-1"
    with pytest.raises(ValueError, match="session ID"):
        store.open_session("bad id; DROP TABLE", "bob", now=T0)


def test_messages_recent_oldest_first_with_entities(app_db):
    store = SessionStore(app_db)
    sid = store.open_session(None, "alice", now=T0).session_id
    for i in range(7):
        role = "user" if i % 2 == 0 else "assistant"
        entities = [(MI, "Herzinfarkt")] if i == 6 else []
        store.add_message(sid, role, f"m{i}", entities, now=T0 + i)
    last = store.recent(sid, 3)
    assert [m.content for m in last] == ["m4", "m5", "m6"]
    assert last[-1].entities == ((MI, "Herzinfarkt"),) and last[-1].role == "user"
    assert last[0].entities == () and last[0].created_at == T0 + 4
    assert [m.content for m in store.recent(sid)] == ["m2", "m3", "m4", "m5", "m6"]
    assert store.recent(sid, 0) == [] and store.recent("unknown") == []
    with pytest.raises(ValueError, match="role"):
        store.add_message(sid, "robot", "x", now=T0)
    with pytest.raises(SessionNotFound):
        store.add_message("never-opened", "user", "x", now=T0)


def test_message_text_is_stored_verbatim(app_db):
    store = SessionStore(app_db)
    sid = store.open_session(None, "alice", now=T0).session_id
    text = "100% sure? %s %(x)s '; DROP TABLE chat_messages; -- \"q\" 心肌梗死 \x1f"
    store.add_message(sid, "user", text, [(MI, "ä?%")], now=T0)
    got = SessionStore(app_db).recent(sid)[0]
    assert got.content == text and got.entities == ((MI, "ä?%"),)


def test_sessions_are_separate_and_expire_by_last_activity(app_db):
    store = SessionStore(app_db)
    idle = store.open_session(None, "alice", now=T0).session_id
    store.add_message(idle, "user", "old", now=T0)
    active = store.open_session(None, "alice", now=T0).session_id
    assert active != idle and store.recent(active) == []
    store.add_message(active, "user", "recent", now=T0 + 9 * DAY)
    assert store.delete_expired(7 * DAY, now=T0 + 10 * DAY) == 1
    assert store.recent(idle) == [] and [m.content for m in store.recent(active)] == ["recent"]
    assert row_counts(app_db, ("chat_sessions", "chat_messages")) == [1, 1]  # messages cascade
    assert store.open_session(idle, "bob", now=T0 + 10 * DAY).user_id == "bob"
    assert store.delete_expired(7 * DAY, now=T0 + 10 * DAY) == 0


def test_opening_sessions_prunes_expired_ones_when_a_max_age_is_set(app_db):
    store = SessionStore(app_db, max_age_s=7 * DAY, prune_every_s=DAY)
    old = store.open_session(None, "alice", now=T0).session_id
    store.add_message(old, "user", "old", now=T0)
    store.open_session(None, "bob", now=T0 + 8 * DAY)
    assert store.recent(old) == []


# --- long-term memory -------------------------------------------------------------------------


def test_interest_weights_decay_and_reinforce(app_db):
    ltm = LongTermMemory(app_db, half_life_days=30.0)
    ltm.record_interests("alice", [MI, MI], now=T0)
    assert ltm.top_interests("alice", now=T0 + 30 * DAY)[0][1] == pytest.approx(0.5, rel=1e-12)
    ltm.record_interests("alice", [MI], now=T0 + 30 * DAY)
    expected = 0.5 * 0.9 + 1.0
    assert ltm.top_interests("alice", now=T0 + 60 * DAY)[0][1] == pytest.approx(expected / 2, rel=1e-12)
    ltm.record_interests("alice", [ASPIRIN], now=T0 + 60 * DAY)
    ltm.record_interests("alice", [DIABETES], now=T0)
    top = ltm.top_interests("alice", k=3, now=T0 + 60 * DAY)
    assert [mesh for mesh, _ in top] == [ASPIRIN, MI, DIABETES]
    assert ltm.top_interests("alice", k=1, now=T0 + 60 * DAY) == top[:1]
    assert ltm.top_interests("bob", now=T0) == [] and ltm.top_interests(None, now=T0) == []


def test_concurrent_interest_updates_are_not_lost(app_db):
    stores = [LongTermMemory(app_db) for _ in range(4)]

    def mention(store: LongTermMemory) -> None:
        for _ in range(25):
            store.record_interests("alice", [MI], now=T0)

    threads = [threading.Thread(target=mention, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert stores[0].top_interests("alice", now=T0)[0][1] == pytest.approx(10 * (1 - 0.9**100))


def test_recall_ranks_labels_and_reinforces(app_db):
    ltm = LongTermMemory(app_db, half_life_days=30.0, capacity_per_entity=3)
    both = ltm.remember("alice", "MI and aspirin?", "Aspirin after MI.", [MI, ASPIRIN], now=T0)
    mi_only = ltm.remember("alice", "What is an MI?", "A heart attack.", [MI], now=T0)
    old_both = ltm.remember("alice", "Old MI aspirin", "Old answer.", [MI, ASPIRIN], now=T0 - 60 * DAY)
    got = ltm.recall("alice", [MI, ASPIRIN], k=3, now=T0)
    assert [m.memory_id for m in got] == [both, mi_only, old_both]
    assert got[0].text == "Q: MI and aspirin?\nA: Aspirin after MI."
    assert got[0].mesh_ids == tuple(sorted([MI, ASPIRIN])) and got[1].mesh_ids == (MI,)
    assert got[2].weight == pytest.approx(0.25)
    assert got[0].age_label == "just now" and got[2].age_label == "2 months ago"
    assert ltm.recall("alice", [MI], language="de", now=T0 + 3 * DAY)[0].age_label == "vor 3 Tagen"
    assert ltm.recall("alice", [DIABETES], now=T0) == []
    ltm.reinforce("alice", [mi_only], now=T0 + DAY)
    rate = math.log(2) / (30 * DAY)
    top = ltm.recall("alice", [MI], k=1, now=T0 + DAY)[0]
    assert top.memory_id == mi_only and top.weight == pytest.approx(math.exp(-rate * DAY) * 0.9 + 1.0)


def test_eviction_by_lowest_decayed_weight_per_entity(app_db):
    ltm = LongTermMemory(app_db, half_life_days=30.0, capacity_per_entity=3)
    oldest = ltm.remember("alice", "q old", "a old", [MI], now=T0)
    middle = ltm.remember("alice", "q mid", "a mid", [MI], now=T0 + 10 * DAY)
    newer = ltm.remember("alice", "q new", "a new", [MI], now=T0 + 20 * DAY)
    ltm.reinforce("alice", [oldest], now=T0 + 20 * DAY)
    only_aspirin = ltm.remember("alice", "aspirin", "a", [ASPIRIN], now=T0)
    fourth = ltm.remember("alice", "q 4th", "a 4th", [MI], now=T0 + 21 * DAY)
    kept = {m.memory_id for m in ltm.recall("alice", [MI], k=10, now=T0 + 21 * DAY)}
    assert kept == {oldest, newer, fourth} and middle not in kept
    assert [m.memory_id for m in ltm.recall("alice", [ASPIRIN], k=10, now=T0)] == [only_aspirin]
    assert row_counts(app_db, ("user_memories", "user_memory_entities")) == [4, 4]


def test_users_are_isolated_anonymous_is_a_no_op_and_forget_user(app_db):
    ltm = LongTermMemory(app_db)
    ltm.record_interests("alice", [MI], now=T0)
    a_memory = ltm.remember("alice", "alice's question", "alice's answer", [MI, ASPIRIN], now=T0)
    b_memory = ltm.remember("bob", "bob's question", "bob's answer", [MI], now=T0)
    assert [m.memory_id for m in ltm.recall("bob", [MI, ASPIRIN], k=10, now=T0)] == [b_memory]
    ltm.reinforce("bob", [a_memory], now=T0 + DAY)
    assert ltm.recall("alice", [MI], now=T0)[0].weight == pytest.approx(1.0)
    ltm.record_interests(None, [MI], now=T0)
    assert ltm.remember(None, "q", "a", [MI], now=T0) is None
    assert ltm.recall(None, [MI], now=T0) == []
    assert row_counts(app_db, ("user_interests", "user_memories")) == [1, 2]
    assert ltm.forget_user("alice") == 1
    assert ltm.recall("alice", [MI], now=T0) == [] and ltm.top_interests("alice", now=T0) == []
    assert [m.memory_id for m in LongTermMemory(app_db).recall("bob", [MI], now=T0)] == [b_memory]
    assert row_counts(app_db, ("user_interests", "user_memories", "user_memory_entities")) == [0, 1, 1]


# --- backend specifics ------------------------------------------------------------------------


def test_paths_choose_the_backend(tmp_path):
    db = open_app_database(str(tmp_path / "x.sqlite"), "CREATE TABLE t (a INTEGER)")
    assert isinstance(db, SQLiteDatabase) and (tmp_path / "x.sqlite").exists()
    db.close()
    assert is_postgres_url("postgresql://u@h/db") and is_postgres_url("postgres://u@h/db")
    assert not is_postgres_url("./.medgraph/app.sqlite") and not is_postgres_url(":memory:")
    with pytest.raises(ValueError, match="open_app_database"):
        SQLiteDatabase("postgresql://u@h/db", "")


def test_an_unreachable_server_is_store_unavailable_without_the_password():
    require_module("psycopg", "MEDGRAPH_REQUIRE_POSTGRES")
    url = f"postgresql://medgraph:s3cret-pw@127.0.0.1:{free_port()}/medgraph?connect_timeout=2"
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as exc:
        ApiKeyStore(url)
    assert time.monotonic() - started < 10
    assert "postgresql://medgraph@127.0.0.1:" in str(exc.value) and "s3cret" not in str(exc.value)


def test_postgres_reconnects_after_a_lost_connection(postgres_url):
    import psycopg

    schema = f"medgraph_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            quota = QuotaTracker(_with_schema(postgres_url, schema), per_user_daily=5, global_daily=50)
            quota.consume("alice", now=T0)
            pid = quota._db._conn.info.backend_pid
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            time.sleep(0.2)
            assert quota.consume("alice", now=T0)["user"] == 3  # a write reconnects
            admin.execute("SELECT pg_terminate_backend(%s)", (quota._db._conn.info.backend_pid,))
            time.sleep(0.2)
            assert quota.usage("alice", now=T0)["user"]["used"] == 2  # so does a read
            quota.close()
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def test_a_write_waiting_for_a_held_lock_gives_up_as_store_unavailable(postgres_url):
    """A writer that holds the app's advisory lock and never finishes (a half-dead connection) must
    not block every other write for ever: the wait ends at lock_timeout (here 300 ms) as a 503."""
    import psycopg

    from medgraph.memory.postgres import APP_LOCK_KEY, SESSION_LIMITS_MS

    assert SESSION_LIMITS_MS["lock_timeout"] <= 10_000 and SESSION_LIMITS_MS["idle_in_transaction_session_timeout"]
    schema = f"medgraph_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        try:
            url = _with_schema(postgres_url, schema)
            sep = "&" if "?" in postgres_url else "?"
            quota = QuotaTracker(url, per_user_daily=5, global_daily=50)
            shown = quota._db._conn.execute("SHOW lock_timeout").fetchone()[0]
            assert shown == f"{SESSION_LIMITS_MS['lock_timeout'] // 1000}s", shown  # the default limit is set
            quota.close()
            options = quote(f"-csearch_path={schema} -c lock_timeout=300", safe="")
            short = QuotaTracker(f"{postgres_url}{sep}options={options}", per_user_daily=5, global_daily=50)
            with psycopg.connect(postgres_url) as holder:  # a transaction that takes the lock and stalls
                holder.execute("SELECT pg_advisory_xact_lock(%s)", (APP_LOCK_KEY,))
                started = time.monotonic()
                with pytest.raises(StoreUnavailable):
                    short.consume("alice", now=T0)
                assert time.monotonic() - started < 3
                holder.rollback()
            short.consume("alice", now=T0)  # the lock is free again: writes go on
            assert short.usage("alice", now=T0)["user"]["used"] == 1
            short.close()
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
