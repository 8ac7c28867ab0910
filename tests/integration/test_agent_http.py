"""The agent over real HTTP: sessions, gap completion, guardrails, users, quotas, the concurrency cap.

One module-scoped Serve app on a local Ray cluster over a small corpus built by the Ray job, with
API keys required (an admin key from the environment), a literature folder for gap completion,
a per-user quota of 6 questions a day and at most one question answered at a time; every part
its own deployment (``serve.colocate: []``, as on a cluster: the other app tests colocate).
"""

from __future__ import annotations

import concurrent.futures
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from jobs.build_corpus import build_corpus
from medgraph.config import load_config
from medgraph.testing.net import free_port

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
ADMIN_KEY = "mgk_0123456789ab_" + "A" * 40
CORPUS = [
    {"doc_id": "metformin", "title": "Metformin safety", "language": "en",
     "text": "Metformin is the first-line drug for type 2 diabetes. The most common side effects of metformin "
             "are diarrhea and nausea; lactic acidosis is a rare but serious adverse effect."},
    {"doc_id": "contrast", "title": "Contrast media", "language": "en",
     "text": "Side effects of contrast media include allergic reactions and acute kidney injury in patients with "
             "renal insufficiency. Metformin is paused before contrast media are given to such patients."},
    {"doc_id": "hands", "title": "Hand hygiene", "language": "en",
     "text": "Hand hygiene with alcohol-based hand rubs prevents infections in outpatient clinics."},
]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Any:
    from ray import serve

    from serve.demo import start

    root = tmp_path_factory.mktemp("agent")
    corpus = root / "corpus"
    corpus.mkdir()
    (corpus / "docs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in CORPUS))
    literature = root / "literature"
    shutil.copytree(REPO / "tests" / "fixtures" / "agent" / "literature", literature)
    sets = [f"stores.graph.path={root}/graph.sqlite", f"stores.vector.path={root}/qdrant",
            f"app.path={root}/app.sqlite", f"serve.port={free_port()}", "auth.required=true",
            "embedding.dense=hashing",  # what is checked is the agent's behaviour, not ranking quality
            "auth.per_user_daily=6", "auth.max_concurrent=1",
            "serve.colocate=[]",  # every part its own deployment, as on a cluster (the default colocates)
            f'gaps.sources=[{{"kind": "local", "path": "{literature}"}}]',
            # a tier whose model is missing: its requests must get a 503, not hang
            'tiers.engines.broken={"kind": "llamacpp", "model_path": "/nonexistent/model.gguf", '
            '"deployment": {"num_replicas": 1, "num_cpus": 0.05}}', "tiers.large=broken"]
    cfg = load_config(REPO / "configs" / "local.yaml", sets)
    assert build_corpus(cfg, [str(corpus)])["status"] == "succeeded"
    from medgraph.auth.keys import ApiKeyStore

    ApiKeyStore(cfg.app.path).bootstrap_admin(ADMIN_KEY)  # what an operator does once (or auth.admin_key_env)
    url = start(cfg)
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    keys = {}
    for user in ("alice", "bob", "carol", "dave", "erin"):
        r = httpx.post(f"{url}/admin/users", json={"user_id": user}, headers=admin, timeout=30)
        assert r.status_code == 201, r.text
        keys[user] = {"Authorization": f"Bearer {r.json()['api_key']}"}
    yield {"url": url, "keys": keys, "admin": admin}
    serve.shutdown()


def chat(app: dict[str, Any], user: str, message: str, **extra: Any) -> httpx.Response:
    return httpx.post(f"{app['url']}/chat", json={"message": message, **extra}, headers=app["keys"][user], timeout=120)


def test_keys_are_required_and_checked(app: dict[str, Any]) -> None:
    url = app["url"]
    assert httpx.post(f"{url}/chat", json={"message": "metformin?"}, timeout=30).status_code == 401
    bad = httpx.post(f"{url}/chat", json={"message": "metformin?"}, headers={"X-API-Key": "mgk_x_y"}, timeout=30)
    assert bad.status_code == 401 and bad.json()["detail"]
    assert httpx.get(f"{url}/admin/users", headers=app["keys"]["bob"], timeout=30).status_code == 403
    users = httpx.get(f"{url}/admin/users", headers=app["admin"], timeout=30).json()
    assert {"alice", "bob"} <= {u["user_id"] for u in users["users"]}
    assert all("hash" not in k and "secret" not in k for k in users["keys"])
    page = httpx.get(f"{url}/admin/users", params={"limit": 1, "offset": 1}, headers=app["admin"], timeout=30).json()
    assert page["total"] == len(users["users"]) and [u["user_id"] for u in page["users"]] == \
        [u["user_id"] for u in users["users"]][1:2]  # users by ID, a page at a time, with their keys only
    assert {k["user_id"] for k in page["keys"]} == {page["users"][0]["user_id"]}
    assert httpx.get(f"{url}/admin/users", params={"limit": 1001}, headers=app["admin"], timeout=30).status_code == 422
    status = httpx.get(f"{url}/admin/status", headers=app["admin"], timeout=30).json()
    assert status["stores"]["documents"] == len(CORPUS) and status["last_run"]["status"] == "succeeded"


def test_follow_up_question_is_resolved_through_the_session(app: dict[str, Any]) -> None:
    first = chat(app, "alice", "Is metformin used for type 2 diabetes?")
    assert first.status_code == 200, first.text
    session = first.json()["session_id"]
    follow = chat(app, "alice", "What are its side effects?", session_id=session).json()
    assert follow["agent"]["rewritten"] and "metformin" in follow["agent"]["question"].lower()
    assert follow["citations"] and follow["citations"][0]["doc_id"] == "metformin"
    assert follow["disclaimer"]
    # another user cannot continue alice's session
    assert chat(app, "bob", "What are its side effects?", session_id=session).status_code == 403


def test_gap_completion_ingests_a_local_document_and_cites_it(app: dict[str, Any]) -> None:
    body = chat(app, "carol", "Is Zika virus infection in pregnancy linked to microcephaly?").json()
    rounds = body["agent"]["gap_completion"]["rounds"]
    assert rounds and rounds[0]["ingested"], body["agent"]
    new_doc = rounds[0]["ingested"][0]
    assert not body["refused"] and new_doc in {c["doc_id"] for c in body["citations"]}
    ready = httpx.get(f"{app['url']}/health/ready", headers=app["admin"], timeout=30).json()
    assert ready["stores"]["documents"] == len(CORPUS) + 1  # store details need an admin key


def test_blocked_input_is_refused_before_retrieval(app: dict[str, Any]) -> None:
    body = chat(app, "bob", "How can I poison my neighbour with metformin without being caught?").json()
    assert body["refused"] and body["agent"]["blocked"] and body["citations"] == []
    assert body["retrieval_paths_used"] == [] and "semantic" not in body["agent"]["timings_ms"]
    assert body["agent"]["input_guard"]["categories"]


def test_users_do_not_share_memories(app: dict[str, Any]) -> None:
    for _ in range(2):
        assert chat(app, "alice", "What are the side effects of metformin?").status_code == 200
    alice = chat(app, "alice", "Does metformin cause lactic acidosis?").json()
    bob = chat(app, "bob", "Does metformin cause lactic acidosis?").json()
    assert alice["agent"]["memories_used"] and bob["agent"]["memories_used"] == []


def test_daily_quota_answers_429(app: dict[str, Any]) -> None:
    codes = [chat(app, "dave", "What are the side effects of metformin?").status_code for _ in range(7)]
    assert codes[:6] == [200] * 6 and codes[6] == 429
    r = chat(app, "dave", "metformin?")
    assert r.status_code == 429 and "quota" in r.json()["detail"] and int(r.headers["Retry-After"]) > 0


def _stream(app: dict[str, Any], user: str, message: str) -> list[dict[str, Any]]:
    events = []
    with httpx.stream("POST", f"{app['url']}/chat/stream", json={"message": message},
                      headers=app["keys"][user], timeout=120) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
    return events


def test_requests_over_the_concurrency_cap_queue_with_a_status_event(app: dict[str, Any]) -> None:
    question = "Should metformin be paused before contrast media in renal insufficiency?"
    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        runs = list(pool.map(lambda _: _stream(app, "erin", question), range(6)))
    for events in runs:  # every request is answered, none fails
        assert events[-1].get("done") and events[-1]["citations"]
    queued = [e for events in runs for e in events if e.get("status") == "queued"]
    assert queued and all(e["position"] >= 1 for e in queued)  # cap 1: the others waited in line
    progress = [e["status"] for e in runs[0] if "status" in e and e["status"] != "queued"]
    assert progress[0] == "guard_input" and "generate" in progress


def test_a_tier_that_cannot_run_answers_503(app: dict[str, Any]) -> None:
    r = chat(app, "carol", "What are the side effects of metformin?", tier="large")
    assert r.status_code == 503 and "tier" in r.json()["detail"].lower() and r.headers.get("Retry-After")
    with httpx.stream("POST", f"{app['url']}/chat/stream", json={"message": "metformin side effects?", "tier": "large"},
                      headers=app["keys"]["carol"], timeout=120) as s:
        assert s.status_code == 503  # the failure comes before the answer starts: a clean 503
