"""Request bodies of the HTTP ingress: input the stores would reject is refused by the request model
(FastAPI answers 422 with the reason) instead of reaching them and ending as a 500."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from medgraph.auth.keys import _USER_ID
from medgraph.memory.sessions import _SESSION_ID
from serve.api_models import MAX_MESSAGES, ChatRequest, CompletionRequest, NewUser, session_of_user

MESSAGE = {"role": "user", "content": "What is metformin?"}


@pytest.mark.parametrize("session_id", ["bad id!", "a/b", "ü", "x" * 129, ""])
def test_a_session_id_the_session_store_rejects_is_refused(session_id):
    assert not _SESSION_ID.fullmatch(session_id)
    with pytest.raises(ValidationError):
        ChatRequest(message="hi", session_id=session_id)


def test_a_valid_session_id_is_kept():
    assert ChatRequest(message="hi", session_id="s_1-A").session_id == "s_1-A"


def test_completion_requests_are_bounded():
    CompletionRequest(messages=[MESSAGE] * MAX_MESSAGES)
    with pytest.raises(ValidationError):
        CompletionRequest(messages=[MESSAGE] * (MAX_MESSAGES + 1))
    with pytest.raises(ValidationError):
        CompletionRequest(model="m" * 65, messages=[MESSAGE])


@pytest.mark.parametrize("user", ["jane.doe@example.org", "Jane Doe", "用户", "x" * 200])
def test_any_openai_user_names_a_valid_stable_session(user):
    req = CompletionRequest(messages=[MESSAGE], user=user)
    session = session_of_user(req.user, "ana")
    assert session is not None and _SESSION_ID.fullmatch(session)
    assert session == session_of_user(user, "ana") and session != session_of_user(user + "2", "ana")
    # the same string under another user's key is another session: it can neither take nor probe it
    assert session_of_user(user, "bob") != session and session_of_user(user, "ana\x00") != session


def test_a_user_that_is_a_session_id_is_that_session():
    assert session_of_user("session_42", "ana") == "session_42" and session_of_user(None, "ana") is None


@pytest.mark.parametrize("user_id", ["x" * 65, "-lead", ".lead", "a b", ""])
def test_a_user_id_the_key_store_rejects_is_refused(user_id):
    assert not _USER_ID.fullmatch(user_id)
    with pytest.raises(ValidationError):
        NewUser(user_id=user_id)


def test_a_valid_user_id_is_accepted():
    assert NewUser(user_id="ana.lopez@clinic-7").user_id == "ana.lopez@clinic-7"
    assert NewUser(user_id="a" * 64).user_id == "a" * 64


@pytest.mark.parametrize("text", ["a\x00b", "\ud800", "ok \udfff"])
def test_text_the_stores_cannot_keep_is_refused(text):
    with pytest.raises(ValidationError, match="NUL|surrogate|unicode"):
        ChatRequest(message=text)
    with pytest.raises(ValidationError):
        CompletionRequest(messages=[{"role": "user", "content": text}])
    assert ChatRequest(message="Metformin 💊 ok? 二甲双胍").message.endswith("二甲双胍")


def test_models_are_the_routed_one_and_one_per_tier():
    from fastapi import HTTPException

    from serve.api_models import model_tier, tier_models

    assert tier_models() == {"medgraph": None, "medgraph-small": "small", "medgraph-medium": "medium",
                             "medgraph-large": "large"}
    assert model_tier("medgraph-large") == "large" and model_tier("medgraph") is None
    with pytest.raises(HTTPException) as err:
        model_tier("gpt-4o")
    assert err.value.status_code == 404


def test_the_body_limit_refuses_by_length_and_while_reading():
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    import serve.api_app as api

    app = FastAPI()
    app.add_middleware(api.BodyLimit)

    @app.post("/echo")
    async def echo(req: ChatRequest) -> dict:
        return {"n": len(req.message)}

    app.state.max_body_bytes, app.state.replica = 2048, "r1"
    client = TestClient(app)
    ok = client.post("/echo", json={"message": "x" * 100})
    assert ok.status_code == 200 and ok.headers["x-medgraph-replica"] == "r1"
    assert client.post("/echo", json={"message": "x" * 3000}).status_code == 413

    def chunks():  # no Content-Length: counted while read
        for _ in range(5):
            yield b" " * 1000
    assert client.post("/echo", content=chunks(), headers={"content-type": "application/json"}).status_code == 413
    bad = client.post("/echo", content=b"{}", headers={"content-type": "application/json", "content-length": "x"})
    assert bad.status_code == 400


def test_completion_usage_counts_every_message_and_says_it_is_an_estimate():
    from serve.routes_chat import completion_usage

    usage = completion_usage(["You are helpful.", "Was ist Metformin?"], "Metformin senkt den Blutzucker [1].")
    # words and punctuation marks, not whitespace-separated words: "Metformin?" is two units
    assert usage == {"prompt_tokens": 4 + 4, "completion_tokens": 8, "total_tokens": 16, "estimated": True}
    # Chinese has no spaces: each character counts, where a word count would give 1
    assert completion_usage(["二甲双胍是什么？"], "")["prompt_tokens"] == 8


@pytest.mark.parametrize("text", ["\u0085", " \u3000\t", "\u2028\u00a0", "\n"])
def test_a_message_of_whitespace_alone_is_refused(text):
    """Found by a schema fuzzer: U+0085 passed the model, the agent found an empty question, 500."""
    from serve.api_models import RouteRequest

    assert not text.strip()
    with pytest.raises(ValidationError, match="more than whitespace"):
        ChatRequest(message=text)
    with pytest.raises(ValidationError, match="more than whitespace"):
        RouteRequest(message=text)
    assert ChatRequest(message="\u0085Metformin?\u3000").message == "\u0085Metformin?\u3000"  # kept as sent
