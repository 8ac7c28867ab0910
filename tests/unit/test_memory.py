"""Sessions and long-term memory: decay math, eviction, recall, labels, isolation, ownership."""

from __future__ import annotations

import math
import threading

import pytest

from medgraph.memory import (
    LongTermMemory,
    SessionForbidden,
    SessionNotFound,
    SessionStore,
    relative_time_label,
)

DAY = 86400.0
T0 = 1_700_000_000.0  # a fixed clock: every call passes ``now``
MI, ASPIRIN, DIABETES, STATIN = "D009203", "D001241", "D003920", "D019161"


@pytest.fixture()
def db_path(tmp_path):
    return str(tmp_path / "app.sqlite")


@pytest.fixture()
def ltm(db_path):
    return LongTermMemory(db_path, half_life_days=30.0, capacity_per_entity=3)


# --- decay and interests ---------------------------------------------------------------------


def test_half_life_exactly_halves_an_interest(ltm):
    ltm.record_interests("alice", [MI], now=T0)
    assert ltm.top_interests("alice", now=T0) == [(MI, pytest.approx(1.0))]
    assert ltm.top_interests("alice", now=T0 + 30 * DAY)[0][1] == pytest.approx(0.5, rel=1e-12)
    assert ltm.top_interests("alice", now=T0 + 60 * DAY)[0][1] == pytest.approx(0.25, rel=1e-12)


def test_repeat_mention_decays_to_now_before_the_update(ltm):
    ltm.record_interests("alice", [MI], now=T0)
    ltm.record_interests("alice", [MI], now=T0 + 30 * DAY)  # stored 1.0 decays to 0.5 first
    expected = 0.5 * 0.9 + 1.0
    assert ltm.top_interests("alice", now=T0 + 30 * DAY)[0][1] == pytest.approx(expected)
    # the stored weight is "as of last_seen": a half-life later it is exactly half of that
    assert ltm.top_interests("alice", now=T0 + 60 * DAY)[0][1] == pytest.approx(expected / 2)
    # a third mention at the same instant: no decay, 0.9 * w + 1
    ltm.record_interests("alice", [MI], now=T0 + 30 * DAY)
    assert ltm.top_interests("alice", now=T0 + 30 * DAY)[0][1] == pytest.approx(expected * 0.9 + 1.0)


def test_repeat_mention_formula_with_an_arbitrary_gap(ltm):
    rate = math.log(2) / (30 * DAY)
    ltm.record_interests("alice", [MI], now=T0)
    ltm.record_interests("alice", [MI], now=T0 + 7 * DAY)
    w7 = math.exp(-rate * 7 * DAY) * 0.9 + 1.0
    ltm.record_interests("alice", [MI], now=T0 + 10 * DAY)
    w10 = w7 * math.exp(-rate * 3 * DAY) * 0.9 + 1.0
    assert ltm.top_interests("alice", now=T0 + 10 * DAY)[0][1] == pytest.approx(w10, rel=1e-12)


def test_duplicates_in_one_call_count_once_and_top_interests_ranks_by_decayed_weight(ltm):
    ltm.record_interests("alice", [MI, MI, MI], now=T0)
    assert ltm.top_interests("alice", now=T0)[0][1] == pytest.approx(1.0)
    ltm.record_interests("alice", [ASPIRIN], now=T0)
    ltm.record_interests("alice", [ASPIRIN], now=T0)  # 1.9
    ltm.record_interests("alice", [DIABETES], now=T0 + 60 * DAY)  # fresh 1.0 beats MI at 0.25
    top = ltm.top_interests("alice", k=3, now=T0 + 60 * DAY)
    assert [mesh for mesh, _ in top] == [DIABETES, ASPIRIN, MI]
    assert top[1][1] == pytest.approx(1.9 / 4)
    assert ltm.top_interests("alice", k=1, now=T0 + 60 * DAY) == top[:1]


# --- conversation memories ---------------------------------------------------------------------


def test_eviction_removes_the_lowest_decayed_weight_not_the_oldest(ltm):
    oldest = ltm.remember("alice", "q old", "a old", [MI], now=T0)
    middle = ltm.remember("alice", "q mid", "a mid", [MI], now=T0 + 10 * DAY)
    newer = ltm.remember("alice", "q new", "a new", [MI], now=T0 + 20 * DAY)
    ltm.reinforce("alice", [oldest], now=T0 + 20 * DAY)  # the oldest is now the strongest
    fourth = ltm.remember("alice", "q 4th", "a 4th", [MI], now=T0 + 21 * DAY)
    kept = {m.memory_id for m in ltm.recall("alice", [MI], k=10, now=T0 + 21 * DAY)}
    assert kept == {oldest, newer, fourth}  # ``middle`` had the lowest decayed weight
    assert middle not in kept


def test_a_new_memory_is_never_evicted_by_its_own_insertion(tmp_path):
    ltm = LongTermMemory(str(tmp_path / "a.sqlite"), capacity_per_entity=2)
    strong = [ltm.remember("alice", f"q{i}", f"a{i}", [MI], now=T0) for i in range(2)]
    for _ in range(5):
        ltm.reinforce("alice", strong, now=T0)  # weights far above a new memory's 1.0
    new = ltm.remember("alice", "q new", "a new", [MI], now=T0)
    kept = {m.memory_id for m in ltm.recall("alice", [MI], k=10, now=T0)}
    assert new in kept and len(kept) == 2


def test_capacity_is_per_entity(ltm):
    for i in range(4):
        ltm.remember("alice", f"mi {i}", "a", [MI], now=T0 + i)
    only_aspirin = ltm.remember("alice", "aspirin", "a", [ASPIRIN], now=T0)
    assert len(ltm.recall("alice", [MI], k=10, now=T0 + 10)) == 3
    assert [m.memory_id for m in ltm.recall("alice", [ASPIRIN], k=10, now=T0 + 10)] == [only_aspirin]


def test_recall_ranks_by_decayed_weight_times_overlap(ltm):
    both = ltm.remember("alice", "MI and aspirin?", "Aspirin after MI.", [MI, ASPIRIN], now=T0)
    mi_only = ltm.remember("alice", "What is an MI?", "A heart attack.", [MI], now=T0)
    old_both = ltm.remember("alice", "Old MI aspirin", "Old answer.", [MI, ASPIRIN], now=T0 - 60 * DAY)
    got = ltm.recall("alice", [MI, ASPIRIN], k=3, now=T0)
    assert [m.memory_id for m in got] == [both, mi_only, old_both]  # 1.0x1, 1.0x0.5, 0.25x1
    assert got[0].text == "Q: MI and aspirin?\nA: Aspirin after MI."
    assert got[0].mesh_ids == tuple(sorted([MI, ASPIRIN]))
    assert got[2].weight == pytest.approx(0.25)
    assert got[0].age_label == "just now" and got[2].age_label == "2 months ago"
    assert [m.memory_id for m in ltm.recall("alice", [MI, ASPIRIN], k=1, now=T0)] == [both]
    assert ltm.recall("alice", [DIABETES], now=T0) == []


def test_reinforcement_changes_the_ranking(ltm):
    first = ltm.remember("alice", "q1", "a1", [MI], now=T0)
    second = ltm.remember("alice", "q2", "a2", [MI], now=T0 + DAY)
    assert [m.memory_id for m in ltm.recall("alice", [MI], now=T0 + DAY)] == [second, first]
    ltm.reinforce("alice", [first], now=T0 + DAY)
    got = ltm.recall("alice", [MI], now=T0 + DAY)
    assert [m.memory_id for m in got] == [first, second]
    rate = math.log(2) / (30 * DAY)
    assert got[0].weight == pytest.approx(math.exp(-rate * DAY) * 0.9 + 1.0)
    # recall itself does not reinforce
    assert ltm.recall("alice", [MI], now=T0 + DAY)[0].weight == pytest.approx(got[0].weight)


def test_recall_labels_in_the_question_language(ltm):
    ltm.remember("alice", "q", "a", [MI], now=T0)
    assert ltm.recall("alice", [MI], language="de", now=T0 + 3 * DAY)[0].age_label == "vor 3 Tagen"
    assert ltm.recall("alice", [MI], language="zh", now=T0 + 95 * DAY)[0].age_label == "3个月前"
    with pytest.raises(ValueError, match="language"):
        ltm.recall("alice", [MI], language="fr", now=T0)


# --- isolation and anonymous callers ----------------------------------------------------------


def test_users_never_see_each_others_memories_or_interests(ltm):
    ltm.record_interests("alice", [MI, ASPIRIN], now=T0)
    a_memory = ltm.remember("alice", "alice's question", "alice's answer", [MI, ASPIRIN], now=T0)
    assert ltm.top_interests("bob", now=T0) == []
    assert ltm.recall("bob", [MI, ASPIRIN], k=10, now=T0) == []
    ltm.reinforce("bob", [a_memory], now=T0 + DAY)  # bob cannot touch alice's memory
    assert ltm.recall("alice", [MI], now=T0 + DAY)[0].weight == pytest.approx(
        math.exp(-math.log(2) / 30))
    # bob's own records on the same entities stay his, and alice's stay hers
    ltm.record_interests("bob", [MI], now=T0)
    b_memory = ltm.remember("bob", "bob's question", "bob's answer", [MI], now=T0)
    assert [m.memory_id for m in ltm.recall("bob", [MI, ASPIRIN], k=10, now=T0)] == [b_memory]
    assert [m.memory_id for m in ltm.recall("alice", [MI, ASPIRIN], k=10, now=T0)] == [a_memory]
    assert [mesh for mesh, _ in ltm.top_interests("bob", now=T0)] == [MI]
    # eviction for bob never removes alice's memories
    for i in range(5):
        ltm.remember("bob", f"b{i}", "a", [MI], now=T0 + i)
    assert [m.memory_id for m in ltm.recall("alice", [MI], k=10, now=T0 + 10)] == [a_memory]


def test_anonymous_writes_are_no_ops(ltm, db_path):
    ltm.record_interests(None, [MI], now=T0)
    assert ltm.remember(None, "q", "a", [MI], now=T0) is None
    ltm.reinforce(None, ["whatever"], now=T0)
    assert ltm.recall(None, [MI], now=T0) == []
    assert ltm.top_interests(None, now=T0) == []
    import sqlite3

    with sqlite3.connect(db_path) as db:
        counts = [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                  for t in ("user_interests", "user_memories", "user_memory_entities")]
    assert counts == [0, 0, 0]


def test_bad_input_is_refused(ltm, tmp_path):
    assert ltm.remember("alice", "q", "a", [], now=T0) is None  # nothing to find it by
    with pytest.raises(ValueError, match="non-empty"):
        ltm.remember("alice", " ", "a", [MI], now=T0)
    with pytest.raises(TypeError, match="one string"):
        ltm.record_interests("alice", MI, now=T0)
    with pytest.raises(ValueError):
        LongTermMemory(str(tmp_path / "b.sqlite"), half_life_days=0)
    with pytest.raises(ValueError):
        LongTermMemory(str(tmp_path / "b.sqlite"), capacity_per_entity=0)


def test_memories_survive_reopening_the_file(db_path):
    first = LongTermMemory(db_path).remember("alice", "q", "a", [MI], now=T0)
    assert [m.memory_id for m in LongTermMemory(db_path).recall("alice", [MI], now=T0)] == [first]


def test_concurrent_interest_updates_are_not_lost(db_path):
    stores = [LongTermMemory(db_path) for _ in range(4)]  # four connections to one file

    def mention(store: LongTermMemory) -> None:
        for _ in range(25):
            store.record_interests("alice", [MI], now=T0)

    threads = [threading.Thread(target=mention, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # 100 mentions at one instant: w_n = 0.9 w_{n-1} + 1 from w_1 = 1 -> 10 (1 - 0.9^n)
    assert stores[0].top_interests("alice", now=T0)[0][1] == pytest.approx(10 * (1 - 0.9**100))


# --- relative time labels ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "en", "de", "zh"),
    [
        (0, "just now", "gerade eben", "刚刚"),
        (59, "just now", "gerade eben", "刚刚"),
        (-5, "just now", "gerade eben", "刚刚"),
        (60, "1 minute ago", "vor 1 Minute", "1分钟前"),
        (5 * 60 + 30, "5 minutes ago", "vor 5 Minuten", "5分钟前"),
        (3600, "1 hour ago", "vor 1 Stunde", "1小时前"),
        (23 * 3600, "23 hours ago", "vor 23 Stunden", "23小时前"),
        (DAY, "1 day ago", "vor 1 Tag", "1天前"),
        (3 * DAY, "3 days ago", "vor 3 Tagen", "3天前"),
        (14 * DAY, "2 weeks ago", "vor 2 Wochen", "2周前"),
        (30 * DAY, "1 month ago", "vor 1 Monat", "1个月前"),
        (3 * 30 * DAY + 5 * DAY, "3 months ago", "vor 3 Monaten", "3个月前"),
        (365 * DAY, "1 year ago", "vor 1 Jahr", "1年前"),
        (800 * DAY, "2 years ago", "vor 2 Jahren", "2年前"),
    ],
)
def test_relative_time_labels(seconds, en, de, zh):
    assert relative_time_label(seconds, "en") == en
    assert relative_time_label(seconds, "de") == de
    assert relative_time_label(seconds, "zh") == zh


def test_relative_time_label_rejects_unknown_languages_and_nan():
    with pytest.raises(ValueError, match="fr"):
        relative_time_label(10, "fr")
    with pytest.raises(ValueError):
        relative_time_label(float("nan"), "en")


# --- sessions ---------------------------------------------------------------------------------


def test_session_ownership(db_path):
    store = SessionStore(db_path)
    mine = store.open_session(None, "alice", now=T0)
    assert mine.user_id == "alice" and mine.created_at == T0 and len(mine.session_id) >= 16
    again = store.open_session(mine.session_id, "alice", now=T0 + 5)
    assert again == mine
    with pytest.raises(SessionForbidden):
        store.open_session(mine.session_id, "bob", now=T0)
    with pytest.raises(SessionForbidden):
        store.open_session(mine.session_id, None, now=T0)  # anonymous callers cannot take it either
    anonymous = store.open_session(None, None, now=T0)
    with pytest.raises(SessionForbidden):
        store.open_session(anonymous.session_id, "bob", now=T0)
    # an unknown id (e.g. expired) is created for the caller
    fresh = store.open_session("client-chosen_id-1", "bob", now=T0)
    assert fresh.user_id == "bob" and fresh.session_id == "client-chosen_id-1"
    with pytest.raises(ValueError, match="session ID"):
        store.open_session("bad id; DROP TABLE", "bob", now=T0)


def test_messages_recent_oldest_first_with_entities(db_path):
    store = SessionStore(db_path)
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


def test_sessions_are_separate(db_path):
    store = SessionStore(db_path)
    a = store.open_session(None, "alice", now=T0).session_id
    b = store.open_session(None, "alice", now=T0).session_id
    assert a != b
    store.add_message(a, "user", "in a", now=T0)
    assert store.recent(b) == []


def test_delete_expired_by_last_activity(db_path):
    store = SessionStore(db_path)
    idle = store.open_session(None, "alice", now=T0).session_id
    store.add_message(idle, "user", "old", now=T0)
    active = store.open_session(None, "alice", now=T0).session_id
    store.add_message(active, "user", "recent", now=T0 + 9 * DAY)
    assert store.delete_expired(7 * DAY, now=T0 + 10 * DAY) == 1
    assert store.recent(idle) == []
    assert [m.content for m in store.recent(active)] == ["recent"]
    # the expired id is free again and is created anew for whoever opens it
    assert store.open_session(idle, "bob", now=T0 + 10 * DAY).user_id == "bob"
    assert store.delete_expired(7 * DAY, now=T0 + 10 * DAY) == 0


def test_opening_sessions_prunes_expired_ones_when_a_max_age_is_set(db_path):
    store = SessionStore(db_path, max_age_s=7 * DAY, prune_every_s=DAY)
    old = store.open_session(None, "alice", now=T0).session_id
    store.add_message(old, "user", "old", now=T0)
    store.open_session(None, "bob", now=T0 + 8 * DAY)  # prunes: alice's session is 8 days idle
    assert store.recent(old) == []
    kept = store.open_session(None, "bob", now=T0 + 8 * DAY).session_id
    store.add_message(kept, "user", "kept", now=T0 + 8 * DAY)
    store.open_session(None, "bob", now=T0 + 8.5 * DAY)  # within prune_every_s: no pruning run
    assert [m.content for m in store.recent(kept)] == ["kept"]


def test_forget_user_deletes_only_that_users_records(ltm):
    ltm.record_interests("alice", [MI], now=T0)
    ltm.remember("alice", "q", "a", [MI], now=T0)
    b = ltm.remember("bob", "q", "a", [MI], now=T0)
    assert ltm.forget_user("alice") == 1
    assert ltm.recall("alice", [MI], now=T0) == [] and ltm.top_interests("alice", now=T0) == []
    assert [m.memory_id for m in ltm.recall("bob", [MI], now=T0)] == [b]
