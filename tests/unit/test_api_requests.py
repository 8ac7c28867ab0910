"""Request bodies of the HTTP ingress: input the stores would reject is refused by the request model
(FastAPI answers 422 with the reason) instead of reaching them and ending as a 500."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from medgraph.auth.keys import _USER_ID
from medgraph.memory.sessions import _SESSION_ID
from serve.api import MAX_MESSAGES, ChatRequest, CompletionRequest, NewUser, session_of_user

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
    session = session_of_user(req.user)
    assert session is not None and _SESSION_ID.fullmatch(session)
    assert session == session_of_user(user) and session != session_of_user(user + "2")


def test_a_user_that_is_a_session_id_is_that_session():
    assert session_of_user("session_42") == "session_42" and session_of_user(None) is None


@pytest.mark.parametrize("user_id", ["x" * 65, "-lead", ".lead", "a b", ""])
def test_a_user_id_the_key_store_rejects_is_refused(user_id):
    assert not _USER_ID.fullmatch(user_id)
    with pytest.raises(ValidationError):
        NewUser(user_id=user_id)


def test_a_valid_user_id_is_accepted():
    assert NewUser(user_id="ana.lopez@clinic-7").user_id == "ana.lopez@clinic-7"
    assert NewUser(user_id="a" * 64).user_id == "a" * 64
