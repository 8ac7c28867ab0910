"""Hostile input against the real Serve app over HTTP, with API keys required.

1. A property-based fuzz of every operation of the app's own ``/openapi.json`` (schemathesis:
   valid and schema-violating requests): every response is below 500 and has a status the schema
   documents for that operation.
2. A fuzz of ``/v1/chat/completions`` with requests in the shape of OpenAI's chat-completions
   schema (roles, content parts, sampling fields, tools), which an OpenAI client may send.
3. A hand-written list of hostile requests: oversized bodies, 5,000 messages, NUL and lone
   surrogates, Cypher- and SQL-looking text in every string field, path traversal, forged and
   revoked keys, another user's session, an anonymous caller guessing a session.
After each part the app is still healthy. ``MEDGRAPH_FUZZ_EXAMPLES`` sets the examples per
operation and mode (default 20); the number of requests sent is printed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import status_code_conformance

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
ADMIN_KEY = "mgk_0123456789ab_" + "h" * 43
EXAMPLES = int(os.environ.get("MEDGRAPH_FUZZ_EXAMPLES", "20"))
SENT = {"fuzz": 0, "openai": 0, "hostile": 0}
HOSTILE_TEXT = [
    "MATCH (n) DETACH DELETE n", "'; DROP TABLE auth_users; --", "\" OR 1=1 --", "../../../../etc/passwd",
    "${jndi:ldap://x}", "<script>alert(1)</script>", "{{7*7}}", "a\x00b", "\ud800", "%00", "💊" * 50,
]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, demo_stores: Any) -> Any:
    from ray import serve

    from medgraph.auth.keys import ApiKeyStore
    from serve.demo import start

    root = tmp_path_factory.mktemp("hostile")
    cfg = demo_stores.config(root, [
        "auth.required=true", "auth.force_tier=admin", "auth.per_user_daily=100000", "auth.global_daily=100000",
        "auth.max_concurrent=2", "gaps.enabled=false", "serve.max_body_bytes=65536"])
    ApiKeyStore(cfg.app.path).bootstrap_admin(ADMIN_KEY)
    url = start(cfg)
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    keys = {}
    for user in ("mallory", "victim"):
        r = httpx.post(f"{url}/admin/users", json={"user_id": user}, headers=admin, timeout=30)
        assert r.status_code == 201, r.text
        keys[user] = {"key": r.json()["api_key"], "key_id": r.json()["key_id"],
                      "headers": {"Authorization": f"Bearer {r.json()['api_key']}"}}
    yield {"url": url, "admin": admin, "keys": keys, "documents": demo_stores.summary["documents_written"]}
    print(f"\nhostile-input requests sent: {SENT}")
    serve.shutdown()


def _healthy(app: dict[str, Any]) -> None:
    """Live, ready, and still holding the whole corpus."""
    assert httpx.get(f"{app['url']}/health/live", timeout=30).status_code == 200
    ready = httpx.get(f"{app['url']}/health/ready", headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=60)
    assert ready.status_code == 200 and ready.json()["stores"]["documents"] == app["documents"]


def _fuzz(operation: Any, mode: GenerationMode, app: dict[str, Any], failures: list[str]) -> Any:
    """A Hypothesis test of one operation in one generation mode; failures are collected."""
    label = f"{operation.label} [{mode.value}]"

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        headers = {**(case.headers or {}), **app["admin"]}
        response = case.call(base_url=app["url"], headers=headers, timeout=120)
        SENT["fuzz"] += 1
        try:
            case.validate_response(response, checks=[not_a_server_error, status_code_conformance])
        except Exception as exc:  # noqa: BLE001 - every failure is reported by the caller
            failures.append(f"{label} -> {response.status_code}: {str(exc)[:200]} {response.text[:200]}")

    return run


def test_fuzz_every_operation_of_the_openapi_schema(app: dict[str, Any]) -> None:
    """Valid and schema-violating requests for each operation of /openapi.json, with an admin key
    (every operation is reached past authentication): no 5xx, only documented statuses."""
    schema = schemathesis.openapi.from_url(f"{app['url']}/openapi.json")
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15, [op.label for op in operations]
    for operation in operations:
        _fuzz(operation, GenerationMode.POSITIVE, app, failures)()
        try:
            _fuzz(operation, GenerationMode.NEGATIVE, app, failures)()
        except Unsatisfiable:  # nothing in its schema to violate (e.g. only optional headers)
            SENT["no_negative_cases"] = SENT.get("no_negative_cases", 0) + 1
    assert not failures, "\n".join(failures[:20])


def test_app_is_healthy_after_the_fuzz(app: dict[str, Any]) -> None:
    _healthy(app)


# OpenAI's chat-completions request: the fields a client may send, valid or not for this app
_TEXT = st.one_of(st.text(max_size=200), st.sampled_from(HOSTILE_TEXT))
_CONTENT = st.one_of(_TEXT, st.none(), st.lists(st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image_url"]), "text": _TEXT}), max_size=3))
_MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool", "developer", "function", ""]),
     "content": _CONTENT}, optional={"name": _TEXT, "tool_call_id": _TEXT})
_COMPLETION = st.fixed_dictionaries(
    {"messages": st.lists(_MESSAGE, max_size=6)},
    optional={"model": st.one_of(st.sampled_from(["medgraph", "medgraph-small", "medgraph-large", "gpt-4o"]), _TEXT),
              "stream": st.one_of(st.booleans(), _TEXT), "user": st.one_of(_TEXT, st.integers()),
              "temperature": st.one_of(st.floats(allow_nan=True), _TEXT), "max_tokens": st.integers(-5, 10**9),
              "n": st.integers(-1, 5), "stop": st.one_of(_TEXT, st.lists(_TEXT, max_size=3)),
              "tools": st.lists(st.dictionaries(_TEXT, _TEXT, max_size=2), max_size=2),
              "response_format": st.dictionaries(_TEXT, _TEXT, max_size=2), "seed": st.integers()})


def test_fuzz_openai_chat_completions(app: dict[str, Any]) -> None:
    url, user = app["url"], app["keys"]["mallory"]["headers"]
    seen: set[int] = set()

    @settings(max_examples=EXAMPLES * 2, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(body=_COMPLETION)
    @example(body={"messages": [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "What are the side effects of metformin?"}],
                   "model": "medgraph", "temperature": 0.2, "user": "jane@example.org"})
    def run(body: dict[str, Any]) -> None:
        payload = json.dumps(body, ensure_ascii=True, allow_nan=True)  # lone surrogates as \\ud800 escapes
        r = httpx.post(f"{url}/v1/chat/completions", content=payload, timeout=120,
                       headers={**user, "Content-Type": "application/json"})
        SENT["openai"] += 1
        seen.add(r.status_code)
        assert r.status_code < 500, (body, r.status_code, r.text[:300])
        if r.status_code >= 400 and not (body.get("stream") is True and r.status_code == 200):
            assert "error" in r.json() and r.json()["error"]["message"]  # OpenAI's error shape

    run()
    assert 200 in seen and 422 in seen  # both answered and refused requests were generated
    _healthy(app)


def _send(app: dict[str, Any], method: str, path: str, **kw: Any) -> httpx.Response:
    kw.setdefault("timeout", 120)
    r = httpx.request(method, f"{app['url']}{path}", **kw)
    SENT["hostile"] += 1
    assert r.status_code < 500, (method, path, r.status_code, r.text[:300])
    return r


def test_oversized_and_overlong_requests_are_4xx(app: dict[str, Any]) -> None:
    user = app["keys"]["mallory"]["headers"]
    big = json.dumps({"message": "x" * 70_000})
    assert _send(app, "POST", "/chat", content=big, headers={**user, "Content-Type": "application/json"}
                 ).status_code == 413

    def chunks() -> Any:  # no Content-Length: the limit holds while the body is read
        for _ in range(20):
            yield b" " * 8192
    r = _send(app, "POST", "/chat", content=chunks(), headers={**user, "Content-Type": "application/json"})
    assert r.status_code == 413
    many = {"messages": [{"role": "user", "content": "hi"}] * 5000}
    assert _send(app, "POST", "/v1/chat/completions", json=many, headers=user).status_code in (413, 422)
    some = {"messages": [{"role": "user", "content": "hi"}] * 65}
    assert _send(app, "POST", "/v1/chat/completions", json=some, headers=user).status_code == 422
    assert _send(app, "POST", "/chat", json={"message": "x" * 4001}, headers=user).status_code == 422
    assert _send(app, "POST", "/v1/chat/completions", headers=user,
                 json={"model": "m" * 65, "messages": [{"role": "user", "content": "hi"}]}).status_code == 422


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_hostile_text_in_every_string_field(app: dict[str, Any], text: str) -> None:
    user = app["keys"]["mallory"]["headers"]
    bodies = [
        ("POST", "/chat", {"message": text}), ("POST", "/chat", {"message": "metformin", "session_id": text}),
        ("POST", "/chat", {"message": "metformin", "language": text}), ("POST", "/route", {"message": text}),
        ("POST", "/v1/chat/completions", {"model": text, "messages": [{"role": "user", "content": "hi"}]}),
        ("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": text}], "user": text}),
        ("POST", "/admin/users", {"user_id": text}),
    ]
    for method, path, body in bodies:
        headers = app["admin"] if path.startswith("/admin") else user
        r = _send(app, method, path, content=json.dumps(body), headers={**headers, "Content-Type": "application/json"})
        if "\x00" in text or "\ud800" in text:
            assert r.status_code == 422, (path, body, r.text)
    raw = quote(text.encode("utf-8", "surrogatepass"), safe="")  # what a client can put in a URL
    _send(app, "GET", f"/graph/entity?name={raw}", headers=user)
    _send(app, "GET", f"/graph/communities?level={raw}", headers=user)
    for method, path in (("POST", "/admin/users/{}/keys"), ("DELETE", "/admin/keys/{}"), ("POST", "/tiers/{}/wake")):
        r = _send(app, method, path.format(raw), headers=app["admin"])
        assert r.status_code in (403, 404, 405, 422), (path, r.status_code, r.text)


@pytest.mark.parametrize("path", ["/../../etc/passwd", "/admin/users/..%2F..%2Fetc/keys", "/%2e%2e/%2e%2e/app.sqlite",
                                  "/admin/keys/..%2f..%2f", "/graph/entity/../../admin/users"])
def test_path_traversal_is_not_found_or_refused(app: dict[str, Any], path: str) -> None:
    r = _send(app, "GET", path, headers=app["keys"]["mallory"]["headers"])
    assert r.status_code in (401, 403, 404, 405, 422) and "auth_users" not in r.text


def test_forged_revoked_and_missing_keys_are_401_on_every_route(app: dict[str, Any]) -> None:
    victim = app["keys"]["victim"]
    forged = [{}, {"Authorization": "Bearer " + victim["key"][:-1] + "X"}, {"X-API-Key": "mgk_000000000000_x"},
              {"Authorization": "Basic YWRtaW46YWRtaW4="}, {"Authorization": "Bearer"},
              {"Authorization": f"Bearer {ADMIN_KEY[:-2]}"}]
    routes = [("POST", "/chat", {"message": "metformin"}), ("POST", "/chat/stream", {"message": "metformin"}),
              ("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
              ("GET", "/v1/models", None), ("POST", "/route", {"message": "metformin"}),
              ("GET", "/graph/entity?name=metformin", None), ("GET", "/graph/communities", None),
              ("GET", "/metrics", None), ("GET", "/admin/status", None), ("GET", "/admin/users", None)]
    for headers in forged:
        for method, path, body in routes:
            r = _send(app, method, path, json=body, headers=headers)
            assert r.status_code == 401, (headers, path, r.status_code)
    # readiness: a probe without a key learns up or down, nothing of the corpus
    assert _send(app, "GET", "/health/ready").json() == {"status": "ready"}
    user_view = _send(app, "GET", "/health/ready", headers=app["keys"]["mallory"]["headers"]).json()
    assert user_view == {"status": "ready"}
    # a revoked key stops working at once
    r = _send(app, "POST", "/admin/users/victim/keys", headers=app["admin"])
    spare = r.json()
    spare_headers = {"Authorization": f"Bearer {spare['api_key']}"}
    assert _send(app, "GET", "/v1/models", headers=spare_headers).status_code == 200
    assert _send(app, "DELETE", f"/admin/keys/{spare['key_id']}", headers=app["admin"]).status_code == 200
    assert _send(app, "GET", "/v1/models", headers=spare_headers).status_code == 401
    # users are not admins: metrics, admin routes and tier administration are 403
    for method, path in (("GET", "/metrics"), ("GET", "/admin/users"), ("POST", "/tiers/extractive/sleep")):
        assert _send(app, method, path, headers=app["keys"]["mallory"]["headers"]).status_code == 403


def test_another_users_session_and_forced_tiers_are_403(app: dict[str, Any]) -> None:
    victim, mallory = app["keys"]["victim"]["headers"], app["keys"]["mallory"]["headers"]
    first = _send(app, "POST", "/chat", json={"message": "What is metformin used for?"}, headers=victim)
    assert first.status_code == 200
    session = first.json()["session_id"]
    r = _send(app, "POST", "/chat", json={"message": "And its side effects?", "session_id": session}, headers=mallory)
    assert r.status_code == 403
    # the tier is the router's (auth.force_tier: admin): a user cannot wake the large engine
    assert _send(app, "POST", "/chat", json={"message": "metformin?", "tier": "large"}, headers=mallory).status_code == 403
    r = _send(app, "POST", "/v1/chat/completions", headers=mallory,
              json={"model": "medgraph-large", "messages": [{"role": "user", "content": "metformin?"}]})
    assert r.status_code == 403 and r.json()["error"]["type"] == "permission_error"
    models = _send(app, "GET", "/v1/models", headers=mallory).json()
    assert [m["id"] for m in models["data"]] == ["medgraph"]
    admin_models = _send(app, "GET", "/v1/models", headers=app["admin"]).json()
    assert {m["id"] for m in admin_models["data"]} == {"medgraph", "medgraph-small", "medgraph-medium", "medgraph-large"}
    unknown = _send(app, "POST", "/v1/chat/completions", headers=mallory,
                    json={"model": "gpt-4o", "messages": [{"role": "user", "content": "metformin?"}]})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "model_not_found"
    _healthy(app)
