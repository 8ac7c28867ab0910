"""API keys (hashed storage, revoke, roles), daily quotas with rollover, the concurrency gate, the CLI."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
from datetime import UTC, datetime

import pytest

from medgraph.auth import (
    ApiKeyStore,
    ConcurrencyGate,
    GateFull,
    Principal,
    QuotaExceeded,
    QuotaTracker,
    new_key,
)
from medgraph.auth.__main__ import main as cli_main
from medgraph.config import load_config

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC).timestamp()
MIDNIGHT = datetime(2026, 3, 11, tzinfo=UTC).timestamp()


@pytest.fixture()
def db_path(tmp_path):
    return str(tmp_path / "app.sqlite")


def _db_bytes(db_path: str) -> bytes:
    """The SQLite file with its write-ahead log and shared-memory index, as raw bytes."""
    data = b""
    for suffix in ("", "-wal", "-shm"):
        try:
            with open(db_path + suffix, "rb") as f:
                data += f.read()
        except FileNotFoundError:
            pass
    return data


# --- keys -------------------------------------------------------------------------------------


@pytest.mark.parametrize("pepper", [None, "server-side pepper"])
def test_keys_are_stored_hashed_and_verify(db_path, pepper):
    store = ApiKeyStore(db_path, pepper=pepper)
    store.create_user("alice")
    key_id, key = store.issue_key("alice", now=T0)
    assert re.fullmatch(r"mgk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", key) and key.startswith(f"mgk_{key_id}_")
    assert store.verify(key, now=T0 + 1) == Principal("alice", "user", key_id)
    secret = key.split("_", 2)[2]
    raw = _db_bytes(db_path)
    assert key.encode() not in raw and secret.encode() not in raw and secret[:16].encode() not in raw
    for listing in (store.list_keys(), store.list_keys("alice"), store.list_users()):
        assert secret not in json.dumps(listing)
        assert not any("hash" in row for row in listing)
    assert store.list_keys("alice")[0]["last_used_at"] == T0 + 1
    store.verify(key, now=T0 + 30)  # within a minute: no write
    assert store.list_keys("alice")[0]["last_used_at"] == T0 + 1
    store.verify(key, now=T0 + 61)
    assert store.list_keys("alice")[0]["last_used_at"] == T0 + 61


def test_verify_refuses_wrong_malformed_and_foreign_pepper_keys(db_path):
    store = ApiKeyStore(db_path, pepper="p1")
    store.create_user("alice")
    key_id, key = store.issue_key("alice")
    tampered = key[:-1] + ("A" if key[-1] != "A" else "B")
    for bad in (tampered, "", "mgk_", "Bearer " + key, key.replace(key_id, "0" * 12), "x" * 80):
        assert store.verify(bad) is None
    assert ApiKeyStore(db_path, pepper="p2").verify(key) is None  # another pepper
    assert ApiKeyStore(db_path, pepper=None).verify(key) is None  # pepper missing
    assert ApiKeyStore(db_path, pepper="p1").verify(key) is not None


def test_unpeppered_hash_is_sha256_of_the_key_material(db_path):
    store = ApiKeyStore(db_path)
    store.create_user("alice")
    key_id, key = store.issue_key("alice")
    secret = key.split("_", 2)[2]
    assert hashlib.sha256(f"{key_id}:{secret}".encode()).hexdigest().encode() in _db_bytes(db_path)


def test_revoke_and_disable(db_path):
    store = ApiKeyStore(db_path)
    store.create_user("alice")
    k1, key1 = store.issue_key("alice")
    _, key2 = store.issue_key("alice")
    assert store.revoke(k1) is True
    assert store.revoke(k1) is False and store.revoke("nope") is False
    assert store.verify(key1) is None and store.verify(key2) is not None
    assert store.list_users()[0]["active_keys"] == 1
    assert store.set_disabled("alice") is True
    assert store.verify(key2) is None
    store.set_disabled("alice", False)
    assert store.verify(key2) is not None
    assert store.set_disabled("nobody") is False


def test_roles_users_and_bad_input(db_path):
    store = ApiKeyStore(db_path)
    store.create_user("root", role="admin")
    store.create_user("bob")
    _, admin_key = store.issue_key("root")
    _, bob_key = store.issue_key("bob")
    admin, bob = store.verify(admin_key), store.verify(bob_key)
    assert admin is not None and admin.role == "admin" and admin.is_admin
    assert bob is not None and bob.role == "user" and not bob.is_admin
    assert [u["user_id"] for u in store.list_users()] == ["bob", "root"]
    assert {k["user_id"] for k in store.list_keys()} == {"bob", "root"}
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


def test_bootstrap_admin_is_idempotent(db_path):
    key = new_key()
    store = ApiKeyStore(db_path, pepper="p")
    store.bootstrap_admin(key)
    store.bootstrap_admin(key)
    ApiKeyStore(db_path, pepper="p").bootstrap_admin(key)  # a restart
    principal = store.verify(key)
    assert principal is not None and principal.user_id == "admin" and principal.role == "admin"
    assert len(store.list_keys("admin")) == 1
    assert key.encode() not in _db_bytes(db_path)
    same_id_other_secret = key[: len("mgk_") + 12] + "_" + "s" * 43
    with pytest.raises(ValueError, match="another secret"):
        store.bootstrap_admin(same_id_other_secret)
    with pytest.raises(ValueError, match="mgk_"):
        store.bootstrap_admin("too-short")
    # a second bootstrap key adds a key to the same admin user
    store.bootstrap_admin(new_key())
    assert len(store.list_keys("admin")) == 2 and len(store.list_users()) == 1


def test_bootstrap_refuses_an_admin_user_without_the_admin_role(db_path):
    store = ApiKeyStore(db_path)
    store.create_user("admin", role="user")
    with pytest.raises(ValueError, match="admin role"):
        store.bootstrap_admin(new_key())


# --- quotas -----------------------------------------------------------------------------------


def test_per_user_quota_and_day_rollover(db_path):
    quota = QuotaTracker(db_path, per_user_daily=3, global_daily=100)
    remaining = [quota.consume("alice", now=T0 + i)["user"] for i in range(3)]
    assert remaining == [2, 1, 0]
    with pytest.raises(QuotaExceeded) as exc:
        quota.consume("alice", now=T0 + 10)
    assert exc.value.scope == "user" and exc.value.limit == 3 and exc.value.resets_at == MIDNIGHT
    assert quota.consume("bob", now=T0)["user"] == 2  # other users are unaffected
    assert quota.usage("alice", now=T0)["user"] == {"user_id": "alice", "used": 3, "limit": 3, "remaining": 0}
    # one second before midnight UTC: still refused; at midnight: a new day
    with pytest.raises(QuotaExceeded):
        quota.consume("alice", now=MIDNIGHT - 1)
    result = quota.consume("alice", now=MIDNIGHT)
    assert result["user"] == 2 and result["resets_at"] == MIDNIGHT + 86400


def test_global_quota_and_refusals_are_not_counted(db_path):
    quota = QuotaTracker(db_path, per_user_daily=10, global_daily=4)
    for user in ("a", "b", "c", "d"):
        quota.consume(user, now=T0)
    with pytest.raises(QuotaExceeded) as exc:
        quota.consume("e", now=T0)
    assert exc.value.scope == "global" and exc.value.limit == 4
    usage = quota.usage(now=T0)
    assert usage["global"] == {"used": 4, "limit": 4, "remaining": 0}
    assert usage["users"] == {"a": 1, "b": 1, "c": 1, "d": 1}  # "e" was refused, not counted
    assert quota.consume("e", now=MIDNIGHT)["global"] == 3


def test_anonymous_callers_share_one_bucket(db_path):
    quota = QuotaTracker(db_path, per_user_daily=2, global_daily=100)
    quota.consume(None, now=T0)
    quota.consume(None, now=T0)
    with pytest.raises(QuotaExceeded, match="user"):
        quota.consume(None, now=T0)
    assert quota.usage(now=T0)["users"] == {"anonymous": 2}
    assert quota.consume("alice", now=T0)["user"] == 1


def test_quota_counts_are_exact_under_concurrency(db_path):
    trackers = [QuotaTracker(db_path, per_user_daily=1000, global_daily=50) for _ in range(4)]
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


def test_quota_limits_must_be_positive(db_path):
    with pytest.raises(ValueError):
        QuotaTracker(db_path, per_user_daily=0, global_daily=10)


# --- concurrency gate ---------------------------------------------------------------------------


def test_gate_caps_concurrency_and_queues_fifo():
    async def scenario() -> tuple[int, list[int], list[tuple[int, int]], int, int]:
        gate = ConcurrencyGate(max_concurrent=2)
        running = peak = 0
        started: list[int] = []
        positions: list[tuple[int, int]] = []
        release = asyncio.Event()

        async def task(i: int) -> None:
            nonlocal running, peak

            def on_queued(position: int) -> None:
                positions.append((i, position))

            async with gate.slot(on_queued):
                started.append(i)
                running += 1
                peak = max(peak, running)
                await release.wait()
                await asyncio.sleep(0)
                running -= 1

        tasks = []
        for i in range(5):
            tasks.append(asyncio.create_task(task(i)))
            await asyncio.sleep(0)  # task i reaches the gate before task i + 1
        await asyncio.sleep(0)
        active, queued = gate.active, gate.queued
        release.set()
        await asyncio.gather(*tasks)
        assert gate.active == 0 and gate.queued == 0
        return peak, started, positions, active, queued

    peak, started, positions, active, queued = asyncio.run(scenario())
    assert peak == 2
    assert (active, queued) == (2, 3)
    assert started == [0, 1, 2, 3, 4]  # FIFO
    assert positions == [(2, 1), (3, 2), (4, 3)]  # called once per waiting task, with its position


def test_gate_async_on_queued_and_gate_full():
    async def scenario() -> list[str]:
        gate = ConcurrencyGate(max_concurrent=1, max_queue=1)
        events: list[str] = []
        hold = asyncio.Event()

        async def announce(position: int) -> None:
            events.append(f"queued {position}")

        async def task(name: str) -> None:
            async with gate.slot(announce):
                events.append(f"run {name}")
                await hold.wait()

        first = asyncio.create_task(task("a"))
        await asyncio.sleep(0)
        second = asyncio.create_task(task("b"))
        await asyncio.sleep(0)
        with pytest.raises(GateFull):
            async with gate.slot():
                pass
        hold.set()
        await asyncio.gather(first, second)
        return events

    assert asyncio.run(scenario()) == ["run a", "queued 1", "run b"]


def test_gate_cancelled_waiter_leaves_the_queue():
    async def scenario() -> list[str]:
        gate = ConcurrencyGate(max_concurrent=1)
        order: list[str] = []
        hold = asyncio.Event()

        async def task(name: str) -> None:
            async with gate.slot():
                order.append(name)
                await hold.wait()

        tasks = {name: asyncio.create_task(task(name)) for name in "abc"}
        for _ in range(3):
            await asyncio.sleep(0)
        assert gate.queued == 2
        tasks["b"].cancel()
        await asyncio.sleep(0)
        assert gate.queued == 1
        hold.set()
        await asyncio.gather(tasks["a"], tasks["c"])
        assert gate.active == 0
        return order

    assert asyncio.run(scenario()) == ["a", "c"]


def test_gate_waiter_cancelled_just_as_the_slot_frees():
    async def scenario() -> tuple[list[str], bool, int, int]:
        gate = ConcurrencyGate(max_concurrent=1)
        order: list[str] = []
        hold = asyncio.Event()

        async def task(name: str) -> None:
            async with gate.slot():
                order.append(name)
                await hold.wait()

        tasks = {name: asyncio.create_task(task(name)) for name in "abc"}
        for _ in range(3):
            await asyncio.sleep(0)
        hold.set()  # "a" will leave first and hand its slot on, skipping "b"'s cancelled ticket
        tasks["b"].cancel()
        results = await asyncio.gather(*tasks.values(), return_exceptions=True)
        b_cancelled = isinstance(results[1], asyncio.CancelledError)
        return order, b_cancelled, gate.active, gate.queued

    assert asyncio.run(scenario()) == (["a", "c"], True, 0, 0)


def test_gate_releases_on_error_and_validates():
    async def scenario() -> int:
        gate = ConcurrencyGate(max_concurrent=1)
        with pytest.raises(RuntimeError):
            async with gate.slot():
                raise RuntimeError("boom")
        async with gate.slot():
            return gate.active

    assert asyncio.run(scenario()) == 1
    with pytest.raises(ValueError):
        ConcurrencyGate(0)
    with pytest.raises(ValueError):
        ConcurrencyGate(1, max_queue=-1)


# --- config and CLI ---------------------------------------------------------------------------


def test_local_yaml_has_app_memory_and_auth_sections(repo_root):
    cfg = load_config(repo_root / "configs" / "local.yaml", env={"MEDGRAPH_HOME": "/srv/mg"})
    assert cfg.app.path == "/srv/mg/app.sqlite"
    assert (cfg.memory.half_life_days, cfg.memory.capacity_per_entity, cfg.memory.history_turns) == (30, 5, 5)
    assert cfg.auth.required is False and cfg.auth.admin_key_env == "MEDGRAPH_ADMIN_KEY"
    assert cfg.auth.max_concurrent >= 1 and cfg.auth.per_user_daily <= cfg.auth.global_daily


def test_cli_create_issue_verify_revoke(tmp_path, capsys, monkeypatch, repo_root):
    monkeypatch.delenv("MEDGRAPH_KEY_PEPPER", raising=False)
    db = str(tmp_path / "cli.sqlite")
    base = ["--config", str(repo_root / "configs" / "local.yaml"), "--set", f"app.path={db}", "--json"]
    assert cli_main([*base, "create-user", "alice", "--role", "admin"]) == 0
    capsys.readouterr()
    assert cli_main([*base, "issue-key", "alice"]) == 0
    issued = json.loads(capsys.readouterr().out)
    principal = ApiKeyStore(db).verify(issued["key"])
    assert principal is not None and principal.role == "admin"
    assert cli_main([*base, "list"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["users"][0]["user_id"] == "alice" and issued["key"] not in json.dumps(listing)
    assert cli_main([*base, "revoke", issued["key_id"]]) == 0
    assert ApiKeyStore(db).verify(issued["key"]) is None
    assert cli_main([*base, "revoke", issued["key_id"]]) == 1  # nothing left to revoke
    assert cli_main([*base, "create-user", "alice"]) == 2  # exists: a clear error
    assert "exists" in capsys.readouterr().err


def test_cli_new_key_disable_and_usage(tmp_path, capsys, monkeypatch, repo_root):
    monkeypatch.delenv("MEDGRAPH_KEY_PEPPER", raising=False)
    db = str(tmp_path / "cli.sqlite")
    base = ["--config", str(repo_root / "configs" / "local.yaml"), "--set", f"app.path={db}", "--json"]
    assert cli_main([*base, "new-key"]) == 0
    fresh = json.loads(capsys.readouterr().out)["key"]
    store = ApiKeyStore(db)
    store.bootstrap_admin(fresh)  # what the API does with $MEDGRAPH_ADMIN_KEY at start
    assert store.verify(fresh) == Principal("admin", "admin", fresh[4:16])
    assert cli_main([*base, "disable-user", "admin"]) == 0
    assert store.verify(fresh) is None
    assert cli_main([*base, "enable-user", "admin"]) == 0 and store.verify(fresh) is not None
    QuotaTracker(db, per_user_daily=5, global_daily=10).consume("admin")
    capsys.readouterr()
    assert cli_main([*base, "--set", "auth.per_user_daily=5", "usage", "--user", "admin"]) == 0
    usage = json.loads(capsys.readouterr().out)
    assert usage["user"] == {"user_id": "admin", "used": 1, "limit": 5, "remaining": 4}
