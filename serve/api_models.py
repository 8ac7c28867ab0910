"""Request bodies and identifiers of the HTTP API, with the limits the stores need.

Input the stores would reject is refused here, by the request model (FastAPI answers 422 with the
reason): NUL and lone surrogates in any text, a message of whitespace alone, session, user and key IDs by the stores' own
patterns, MeSH and chunk IDs by theirs, at most ``MAX_MESSAGES`` completion messages. Also the
model names of the OpenAI-compatible routes (``tier_models``). No ``from __future__ import annotations``: FastAPI must see the real request-model types.
"""

import hashlib
import re
from typing import Annotated, Literal

from fastapi import HTTPException
from pydantic import AfterValidator, BaseModel, Field

from medgraph import lang
from medgraph.config.llm import TIER_NAMES

Tier = Literal["small", "medium", "large"]


SESSION_ID = r"^[A-Za-z0-9_-]{1,128}$"  # what the session store accepts (medgraph.memory.sessions)
USER_ID = r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$"  # what the key store accepts (medgraph.auth.keys)
KEY_ID = r"^[0-9a-f]{12}$"  # the key_id of mgk_<key_id>_<secret> (medgraph.auth.keys)
# a MeSH descriptor UI, as the vocabulary reads it and the graph stores key entities (medgraph.ontology.sources)
MESH_ID = r"^D[0-9]{6,9}$"
# a stored chunk's ID: content_hash(doc_id, doc hash, index), 16 hex digits (medgraph.ingest.chunking)
CHUNK_ID = r"^[0-9a-f]{16}$"
MAX_MESSAGES = 64  # messages of one completion request (the rewriter reads the last turns)
MODEL_ROUTED = "medgraph"  # the model name that lets the router choose the tier


def _clean_text(value: str) -> str:
    """Text the stores and the JSON encoder can keep: no NUL, no lone surrogates."""
    if "\x00" in value:
        raise ValueError("text must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text must be valid Unicode (no lone surrogates)") from None
    return value


def _not_blank(value: str) -> str:
    """A question with something in it: Unicode whitespace alone (U+0085, U+3000 ...) asks nothing."""
    if not value.strip():
        raise ValueError("message must contain more than whitespace")
    return value


def _known_language(value: str) -> str:
    if not lang.is_known(value):
        raise ValueError(f"unknown language {value!r}: one of {', '.join(lang.codes())}")
    return value


Text = Annotated[str, AfterValidator(_clean_text)]
# a language pack's code (``medgraph.lang``): the registered packs, checked on every request
LanguageCode = Annotated[str, Field(min_length=2, max_length=8, pattern=r"^[a-z]{2,3}(-[A-Za-z]{2,4})?$",
                                    description=f"a registered language pack's code: {', '.join(lang.codes())}"),
                         AfterValidator(_known_language)]
Message = Annotated[str, AfterValidator(_clean_text), AfterValidator(_not_blank)]


class ChatRequest(BaseModel):
    message: Message = Field(min_length=1, max_length=4000)
    session_id: str | None = Field(default=None, max_length=128, pattern=SESSION_ID)
    language: LanguageCode | None = None
    tier: Tier | None = None  # force a tier instead of routing (auth.force_tier)
    # /chat/stream: send the agent's progress as it happens (the web interface shows it); a failure
    # after the first event then arrives as an error event, not as the response's status
    progress: bool = False


class RouteRequest(BaseModel):
    message: Message = Field(min_length=1, max_length=4000)
    language: LanguageCode | None = None


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: Text = Field(max_length=16000)


class CompletionRequest(BaseModel):
    model: Text = Field(default=MODEL_ROUTED, min_length=1, max_length=64)
    messages: list[ChatMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    # OpenAI's end-user field (any string, e.g. an e-mail address): names the session, see session_of_user
    user: Text | None = Field(default=None, min_length=1, max_length=256)


def session_of_user(user: str | None, owner: str) -> str | None:
    """The session of an OpenAI ``user`` for the signed-in ``owner``: itself when it is a valid
    session ID (a session of the owner's, as ``session_id`` on ``/chat``: another user's is a 403),
    else a stable hash of the owner and it (``user-<40 hex>``), so that any end-user string continues
    its own conversation, and the same string sent with another user's key names another session
    (it can neither take nor probe the first)."""
    if user is None or re.fullmatch(SESSION_ID, user):
        return user
    return "user-" + hashlib.sha256(f"{owner}\x00{user}".encode()).hexdigest()[:40]


class NewUser(BaseModel):
    # what the key store accepts (medgraph.auth.keys): 1-64 characters, the first a letter or digit
    user_id: str = Field(min_length=1, max_length=64, pattern=USER_ID)
    role: Literal["admin", "user"] = "user"


def tier_models() -> dict[str, str | None]:
    """The model names of /v1: ``medgraph`` (the router chooses) and one per tier."""
    return {MODEL_ROUTED: None, **{f"{MODEL_ROUTED}-{t}": t for t in TIER_NAMES}}


def model_tier(model: str) -> str | None:
    """The tier a model name forces (None: routed); an unknown model is a 404."""
    models = tier_models()
    if model not in models:
        raise HTTPException(404, f"the model {model!r} does not exist; GET /v1/models lists them")
    return models[model]
