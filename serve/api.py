"""The HTTP ingress: one FastAPI app in front of the Serve deployments.

Endpoints: ``POST /chat``, ``POST /chat/stream`` (Server-Sent Events), ``POST /v1/chat/completions``
(OpenAI-compatible, streaming or not; model ``medgraph`` routes, ``medgraph-small|medium|large``
forces a tier, any other model is a 404 in OpenAI's error shape; earlier messages are the
conversation the rewriter reads), ``GET /v1/models``, ``POST /route`` (the routing decision alone),
``GET /graph/entity`` (by ``name``, linked, or by MeSH ``id``), ``GET /graph/edge`` (the chunks two
entities share), ``GET /graph/communities``, ``GET /chunks/{chunk_id}`` (one stored passage),
``GET /corpus`` (store counts, recent builds and their failures), ``GET /health/live``, ``GET /health/ready``
(stores and LLM tiers), ``GET /metrics`` (Prometheus text: tier wakes, sleeps, latencies, memory
freed), ``POST /tiers/{engine}/sleep|wake`` (``serve.tier_admin``), and for admins
``GET /admin/status`` (pipeline, stores, tiers, usage), ``GET|POST /admin/users``,
``POST /admin/users/{id}/keys``, ``DELETE /admin/keys/{key_id}``.

Questions go to the agent deployment (``serve/agent.py``: the LangGraph agent). The ingress does
what must happen before it:
- identity, one dependency (``caller``) on every route but liveness: ``Authorization: Bearer <key>``
  or ``X-API-Key``; keys stored hashed, roles admin/user. With ``auth.required`` every route needs a
  key, ``/metrics`` and tier administration an admin key, and readiness tells a caller without an
  admin key only up or down. Without it, callers without a key are anonymous: they may continue
  only sessions the server started for them (IDs carrying a keyed tag), never a chosen ID.
- the per-user and global daily quotas (429) and the global concurrency cap for every route that
  does work (questions, ``/route``, ``/graph/*``): requests over ``auth.max_concurrent`` wait in a
  FIFO queue (``/chat/stream`` sends ``{"status": "queued", "position": n}`` while waiting) and only
  a full queue (``auth.max_queue``) is refused (503); ``/chunks`` and ``/corpus`` read one record
  or a few and take neither. Choosing the tier is ``auth.force_tier``'s.
- limits: a body over ``serve.max_body_bytes`` is a 413; strings with NUL or lone surrogates, IDs
  the stores would refuse or could not hold (MeSH and chunk IDs by their pattern), too many or too
  long messages are 422 with the reason.
Bad requests get 4xx with a message; a store that cannot answer within ``serve.store_timeout_s``
(or raises ``StoreUnavailable``), or a tier that cannot wake or run, gives 503, never a hang.

``Ingress`` takes its config and the deployment handles in the constructor. It carries
``@serve.ingress(app)`` here, at import time, because each replica re-imports this module and
the class-based routes must be rewritten in that process; ``serve/app.py`` only deploys it.
No ``from __future__ import annotations`` here: FastAPI must see the real request-model types.
"""


import asyncio
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Header, HTTPException, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse
from pydantic import AfterValidator, BaseModel, Field
from ray import serve
from starlette.exceptions import HTTPException as StarletteHTTPException

from medgraph.agent.graph import AgentRequest
from medgraph.config import MedGraphConfig
from medgraph.config.llm import TIER_NAMES
from medgraph.ingest.text import count_tokens
from medgraph.route.types import RouteDecision
from medgraph.stores.errors import StoreUnavailable
from serve import calls
from serve.agent import unavailable_reason
from serve.metrics import prometheus_text
from serve.webui import mount_ui

log = logging.getLogger(__name__)
app = FastAPI(title="MedGraph", version="0.1.0")


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


Text = Annotated[str, AfterValidator(_clean_text)]


class ChatRequest(BaseModel):
    message: Text = Field(min_length=1, max_length=4000)
    session_id: str | None = Field(default=None, max_length=128, pattern=SESSION_ID)
    language: Literal["en", "de", "zh"] | None = None
    tier: Tier | None = None  # force a tier instead of routing (auth.force_tier)
    # /chat/stream: send the agent's progress as it happens (the web interface shows it); a failure
    # after the first event then arrives as an error event, not as the response's status
    progress: bool = False


class RouteRequest(BaseModel):
    message: Text = Field(min_length=1, max_length=4000)
    language: Literal["en", "de", "zh"] | None = None


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: Text = Field(max_length=16000)


class CompletionRequest(BaseModel):
    model: Text = Field(default=MODEL_ROUTED, min_length=1, max_length=64)
    messages: list[ChatMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    # OpenAI's end-user field (any string, e.g. an e-mail address): names the session, see session_of_user
    user: Text | None = Field(default=None, min_length=1, max_length=256)


def session_of_user(user: str | None) -> str | None:
    """The session of an OpenAI ``user``: itself when it is a valid session ID, else a stable
    hash of it (``user-<40 hex>``), so that any end-user string continues its own conversation."""
    if user is None or re.fullmatch(SESSION_ID, user):
        return user
    return "user-" + hashlib.sha256(user.encode("utf-8")).hexdigest()[:40]


class NewUser(BaseModel):
    # what the key store accepts (medgraph.auth.keys): 1-64 characters, the first a letter or digit
    user_id: str = Field(min_length=1, max_length=64, pattern=USER_ID)
    role: Literal["admin", "user"] = "user"


class ServiceUnavailable(Exception):
    pass


def tier_models() -> dict[str, str | None]:
    """The model names of /v1: ``medgraph`` (the router chooses) and one per tier."""
    return {MODEL_ROUTED: None, **{f"{MODEL_ROUTED}-{t}": t for t in TIER_NAMES}}


def _model_tier(model: str) -> str | None:
    """The tier a model name forces (None: routed); an unknown model is a 404."""
    models = tier_models()
    if model not in models:
        raise HTTPException(404, f"the model {model!r} does not exist; GET /v1/models lists them")
    return models[model]


def _sse(payload: dict[str, Any] | str) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n"


def _error_body(request: Request, status: int, detail: Any) -> dict[str, Any]:
    """``{"detail": ...}``, or OpenAI's ``{"error": {...}}`` under ``/v1/`` (what its clients parse)."""
    if not request.url.path.startswith("/v1/"):
        return {"detail": detail}
    kind = {401: "authentication_error", 403: "permission_error", 404: "not_found_error",
            429: "rate_limit_error"}.get(status, "invalid_request_error" if status < 500 else "server_error")
    code = "model_not_found" if status == 404 and "model" in str(detail) else None
    message = detail if isinstance(detail, str) else "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ())[1:])}: {e.get('msg')}" for e in detail)
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


@app.exception_handler(ServiceUnavailable)
async def _unavailable(request: Request, exc: ServiceUnavailable) -> JSONResponse:
    return JSONResponse(_error_body(request, 503, str(exc)), status_code=503, headers={"Retry-After": "5"})


@app.exception_handler(StoreUnavailable)
async def _store_down(request: Request, exc: StoreUnavailable) -> JSONResponse:
    """The app-state store (keys, quotas, sessions) did not answer: try again later, not a 500."""
    log.warning("app state unavailable: %s", exc)
    return JSONResponse(_error_body(request, 503, f"a store is unavailable: {exc}"), status_code=503,
                        headers={"Retry-After": "5"})


@app.exception_handler(StarletteHTTPException)
async def _http_exception(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    return JSONResponse(_error_body(request, exc.status_code, exc.detail), status_code=exc.status_code,
                        headers=getattr(exc, "headers", None))


@app.exception_handler(RequestValidationError)
async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 with where and why, without echoing the input (it may hold text JSON cannot encode)."""
    errors = [{"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
              for e in exc.errors()]
    return JSONResponse(_error_body(request, 422, errors), status_code=422)


# --- limits ---------------------------------------------------------------------------------

MAX_BODY_BYTES = 1 << 20  # until the app's state says otherwise (serve.max_body_bytes)


class BodyLimit:
    """ASGI middleware: a request body over the app's ``state.max_body_bytes`` is a 413, by its
    Content-Length before anything is read, or while a chunked body is read. Every response names
    the ingress replica that answered (``state.replica``: ``X-MedGraph-Replica``), for operators
    and tests. It reads the state of the app serving the request (Serve runs a copy of ``app``)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        state = scope["app"].state if "app" in scope else None
        replica = str(getattr(state, "replica", "")).encode()
        if replica:
            plain_send = send

            async def send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    message = {**message, "headers": [*message.get("headers", []), (b"x-medgraph-replica", replica)]}
                await plain_send(message)
        limit = int(getattr(state, "max_body_bytes", MAX_BODY_BYTES))
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            if not declared.isdigit():
                await _plain_error(send, 400, "Content-Length must be a number of bytes")
                return
            if int(declared) > limit:
                await _plain_error(send, 413, f"the request body is over {limit} bytes")
                return
        seen = 0

        async def limited() -> dict[str, Any]:
            nonlocal seen
            message: dict[str, Any] = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:  # FastAPI passes an HTTPException raised while reading the body on
                    raise StarletteHTTPException(413, f"the request body is over {limit} bytes")
            return message

        await self.inner(scope, limited, send)


async def _plain_error(send: Any, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


app.add_middleware(BodyLimit)
mount_ui(app)  # the web interface: GET / and /ui/ (serve/webui.py)


# --- identity -------------------------------------------------------------------------------

def _ingress(request: Request) -> "Ingress":
    ingress: Ingress = request.app.state.ingress
    return ingress


async def caller(request: Request, authorization: str | None = Header(default=None),
                 x_api_key: str | None = Header(default=None)) -> Any:
    """Who is asking, for every route but liveness: a ``Principal``, or None (anonymous, only when
    ``auth.required`` is false). A missing key (when required) or one that does not verify is a 401."""
    return _ingress(request).principal(authorization, x_api_key)


async def admin(principal: Annotated[Any, Depends(caller)]) -> Any:
    """The caller, who must hold an admin key (401 without a key, 403 with a user's)."""
    if principal is None:
        raise HTTPException(401, "this endpoint needs an admin API key")
    if principal.role != "admin":
        raise HTTPException(403, "admin role required")
    return principal


Caller = Annotated[Any, Depends(caller)]
Admin = Annotated[Any, Depends(admin)]

# the statuses a route may answer besides 200, as the OpenAPI schema documents them
_E = {s: {"description": d} for s, d in {
    400: "bad request", 401: "no or invalid API key", 403: "not allowed for this key", 404: "not found",
    409: "conflict", 413: "request body too large", 422: "invalid request", 429: "daily quota reached",
    503: "a store or tier is unavailable or the server is at capacity"}.items()}


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {s: _E[s] for s in (400, 401, 413, 422, 503, *statuses)}


def _http_error(exc: BaseException) -> HTTPException | None:
    """A deployment's error that is the caller's fault, as its 4xx (also when Serve wraps it)."""
    from medgraph.memory.sessions import SessionForbidden

    err: BaseException | None = exc
    for _ in range(6):
        if err is None:
            return None
        if isinstance(err, SessionForbidden):
            return HTTPException(403, "this session belongs to another user")
        err = getattr(err, "cause", None) or err.__cause__
    return None


def _client_error(exc: BaseException) -> Exception | None:
    """What the caller gets for a deployment's error: 503 for 'try again later' (store, tier,
    timeout), the 4xx for the caller's own fault, None for a bug (a 500)."""
    reason = unavailable_reason(exc)
    return ServiceUnavailable(reason) if reason is not None else _http_error(exc)


def completion_usage(prompt: list[str], answer: str) -> dict[str, Any]:
    """OpenAI ``usage`` of a completion, marked as an estimate.

    The ingress holds no tokenizer of the model that answered (the extractive tier has none at
    all), so the counts are pre-tokenizer units, ``count_tokens`` of the chunker: words, CJK
    characters and punctuation marks; model tokenizers usually give more. The extension field
    ``estimated: true`` says so, so a client never mistakes them for billed tokens.
    """
    n_prompt, n_answer = sum(count_tokens(text) for text in prompt), count_tokens(answer)
    return {"prompt_tokens": n_prompt, "completion_tokens": n_answer, "total_tokens": n_prompt + n_answer,
            "estimated": True}


def _completion_extra(body: dict[str, Any]) -> dict[str, Any]:
    keys = ("citations", "retrieval_paths_used", "disclaimer", "refused", "tier", "route", "model_used",
            "session_id", "agent")
    return {k: body.get(k) for k in keys}


def _entity_body(found: dict[str, Any], lang: str | None) -> dict[str, Any]:
    entity = found["entity"]
    nodes = found["nodes"]

    def names(e: Any) -> dict[str, list[str]]:
        return {lang: e.names.get(lang, [])} if lang else dict(e.names)

    def display(e: Any) -> str:
        localised = e.names.get(lang, []) if lang else []
        return str(localised[0]) if localised else str(e.name)

    return {
        "mesh_id": entity.mesh_id, "name": display(entity), "names": names(entity),
        "labels": ["Entity", entity.category] if entity.category else ["Entity"], "category": entity.category,
        "neighbours": [{"mesh_id": i, "name": display(e), "category": e.category} for i, e in nodes.items()
                       if i != entity.mesh_id],
        "edges": [{"source": s, "target": t, "type": "CO_OCCURS_WITH", "weight": w} for s, t, w in found["edges"]],
        "communities": found.get("communities", []),  # MEMBER_OF, coarsest first (jobs.build_communities)
    }


@serve.ingress(app)
class Ingress:
    def __init__(self, cfg: MedGraphConfig, analyzer: Any, retriever: Any, router: Any, agent: Any,
                 engines: dict[str, Any]) -> None:
        from medgraph.auth.keys import ApiKeyStore
        from medgraph.auth.redis_state import make_gate, make_quota

        self.full_cfg = cfg
        self.cfg, self.tiers, self.auth_cfg = cfg.serve, cfg.tiers, cfg.auth
        self.analyzer, self.retriever, self.router, self.agent = analyzer, retriever, router, agent
        self.engines = engines
        a = cfg.auth
        self.keys = ApiKeyStore(cfg.app.path, os.environ.get(a.pepper_env) if a.pepper_env else None)
        if a.admin_key_env and os.environ.get(a.admin_key_env):
            self.keys.bootstrap_admin(os.environ[a.admin_key_env])
        # in Redis when redis.url is set: one count and one line for every ingress replica
        self.quota = make_quota(cfg)
        self.gate = make_gate(cfg)
        # tags the IDs of anonymous sessions; the pepper makes them valid on every replica
        pepper = os.environ.get(a.pepper_env) if a.pepper_env else None
        self.session_secret = (pepper or "").encode() or secrets.token_bytes(32)
        # for the dependencies (caller, admin) and the middleware of this replica's app
        app.state.ingress = self
        app.state.max_body_bytes = cfg.serve.max_body_bytes
        try:
            app.state.replica = serve.get_replica_context().replica_id.unique_id
        except Exception:  # noqa: BLE001 - outside a Serve replica (a test building the class) there is none
            app.state.replica = ""

    async def _call(self, handle_method: Any, *args: Any, timeout: float | None = None) -> Any:
        return await calls.call(
            handle_method, *args, timeout=timeout or self.cfg.request_timeout_s, translate=_client_error,
            late=lambda: ServiceUnavailable("a backend did not answer in time; try again later"))

    def _answer_timeout(self) -> float:
        # the agent's whole run: retrieval, gap completion, a wake and generation
        return (self.cfg.answer_timeout_s + self.tiers.wake_timeout_s + self.full_cfg.gaps.time_budget_s
                + self.cfg.request_timeout_s)

    # --- identity, quota, concurrency ---------------------------------------------------------

    def principal(self, authorization: str | None, x_api_key: str | None) -> Any:
        """The caller (``Principal``) or None (anonymous); a key that does not verify is a 401."""
        key = x_api_key
        if authorization:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() != "bearer" or not value.strip():
                raise HTTPException(401, "Authorization must be 'Bearer <API key>'")
            key = value.strip()
        if not key or (not self.auth_cfg.required and not key.startswith("mgk_")):
            # without required auth, a token that is not a MedGraph key (OpenAI clients always send
            # one) means anonymous; a MedGraph key must verify
            if self.auth_cfg.required:
                raise HTTPException(401, "an API key is required (Authorization: Bearer <key>)")
            return None
        principal = self.keys.verify(key)
        if principal is None:
            raise HTTPException(401, "invalid or revoked API key")
        return principal

    def _anonymous_session(self, session_id: str | None) -> str:
        """The session of an anonymous caller: a new server-issued ID (``anon_<random>_<tag>``), or
        the given one if the server issued it; a chosen or guessed ID is a 403, so an anonymous
        conversation is readable only with the ID its first answer returned."""
        if session_id is None:
            nonce = secrets.token_hex(16)
            return f"anon_{nonce}_{self._session_tag(nonce)}"
        _, nonce, tag = (session_id.split("_") + ["", ""])[:3] if session_id.startswith("anon_") else ("", "", "")
        if not nonce or not hmac.compare_digest(tag, self._session_tag(nonce)):
            raise HTTPException(403, "anonymous callers continue only sessions the server started for them: "
                                     "omit session_id to start one, or sign in with an API key")
        return session_id

    def _session_tag(self, nonce: str) -> str:
        return hmac.new(self.session_secret, nonce.encode(), hashlib.sha256).hexdigest()[:24]

    def _consume_quota(self, principal: Any) -> None:
        from medgraph.auth.quota import QuotaExceeded

        try:
            self.quota.consume(principal.user_id if principal else None)
        except QuotaExceeded as exc:
            retry = max(1, int(exc.resets_at - time.time()))
            raise HTTPException(429, f"daily {exc.scope} quota of {exc.limit} questions reached",
                                headers={"Retry-After": str(retry)}) from exc

    async def _enter(self, slot: Any) -> None:
        from medgraph.auth.gate import GateFull

        try:
            await slot.__aenter__()
        except GateFull as exc:  # the line is full (auth.max_queue), in this replica or, with Redis, in all
            raise ServiceUnavailable(f"the server is at capacity ({exc.max_queue} requests waiting)") from exc

    def _request(self, principal: Any, message: str, language: str | None, session_id: str | None,
                 tier: str | None, history: tuple[tuple[str, str], ...] | None = None) -> AgentRequest:
        """The agent's request, after the checks that need no quota: who may choose the tier, and
        whose session this is."""
        if tier is not None and self.auth_cfg.force_tier == "admin" and (principal is None or principal.role != "admin"):
            raise HTTPException(403, "choosing the answer tier is for admins here (auth.force_tier); "
                                     "leave it to the router")
        if principal is None:
            session_id = self._anonymous_session(session_id)
        return AgentRequest(question=message, language=language, session_id=session_id,
                            user_id=principal.user_id if principal else None, tier=tier, history=history)

    @asynccontextmanager
    async def _work(self, principal: Any) -> AsyncIterator[None]:
        """One request that does work outside the agent (``/route``, ``/graph/*``): it counts
        against the daily quotas and holds a slot of the concurrency cap while it runs."""
        self._consume_quota(principal)
        slot = self.gate.slot()
        await self._enter(slot)
        try:
            yield
        finally:
            await slot.__aexit__(None, None, None)

    async def ask(self, request: AgentRequest) -> dict[str, Any]:
        slot = self.gate.slot()
        await self._enter(slot)
        try:
            body: dict[str, Any] = await self._call(self.agent.run, request, timeout=self._answer_timeout())
        finally:
            await slot.__aexit__(None, None, None)
        return body

    async def events(self, request: AgentRequest, hold: bool = True) -> AsyncIterator[dict[str, Any]]:
        """The agent's events for one question, run inside a concurrency slot. Waiting in the queue
        yields ``{"status": "queued", "position": n}``. With ``hold`` the agent's progress events
        are held back until the answer starts, so that a failure before it is still a clean 503."""
        notes: asyncio.Queue[int] = asyncio.Queue()
        slot = self.gate.slot(on_queued=notes.put_nowait)
        enter = asyncio.ensure_future(self._enter(slot))
        queued = False
        try:
            while not enter.done():
                note = asyncio.ensure_future(notes.get())
                await asyncio.wait({enter, note}, return_when=asyncio.FIRST_COMPLETED)
                if note.done():
                    queued = True
                    yield {"status": "queued", "position": note.result()}
                else:
                    note.cancel()
            await enter
        except BaseException:  # the client went away while waiting: leave the line (or the slot)
            if enter.done() and not enter.cancelled() and enter.exception() is None:
                await slot.__aexit__(None, None, None)
            else:
                enter.cancel()
            raise
        try:
            gen = self.agent.options(stream=True).stream.remote(request)
            held: list[dict[str, Any]] = []
            started = queued or not hold
            async for event in calls.stream(
                gen, first_timeout=self._answer_timeout(), timeout=self._answer_timeout(),
                late=lambda: ServiceUnavailable("the answer did not arrive in time; try again later"),
                translate=_client_error,
            ):
                if "status" in event and not started:
                    held.append(event)
                    continue
                if not started:
                    started = True
                    for h in held:
                        yield h
                yield event
        finally:
            await slot.__aexit__(None, None, None)

    async def _started(self, events: AsyncIterator[dict[str, Any]]) -> tuple[list[dict[str, Any]], AsyncIterator[dict[str, Any]]]:
        """The first event awaited before the response starts: errors up to it are 4xx/503."""
        first = await events.__anext__()
        return [first], events

    async def _stream_response(self, request: AgentRequest, render: Any, opening: list[str] | None = None,
                               hold: bool = True) -> StreamingResponse:
        events = self.events(request, hold)
        head, rest = await self._started(events)

        async def body() -> AsyncIterator[str]:
            for out in opening or []:
                yield out
            try:
                for event in head:
                    for out in render(event):
                        yield out
                async for event in rest:
                    for out in render(event):
                        yield out
            except (ServiceUnavailable, HTTPException) as exc:  # after the response started
                detail = getattr(exc, "detail", None) or str(exc)
                yield _sse({"error": detail, "status": getattr(exc, "status_code", 503)})

        return StreamingResponse(body(), media_type="text/event-stream")

    # --- routes -------------------------------------------------------------------------

    @app.post("/chat", responses=_errors(403, 429, 503))
    async def chat(self, req: ChatRequest, principal: Caller) -> dict[str, Any]:
        request = self._request(principal, req.message, req.language, req.session_id, req.tier)
        self._consume_quota(principal)
        return await self.ask(request)

    @app.post("/chat/stream", responses=_errors(403, 429, 503))
    async def chat_stream(self, req: ChatRequest, principal: Caller) -> StreamingResponse:
        """Events: ``{"status": ...}`` (queue position, agent progress: held until the answer starts
        unless ``progress``), ``{"delta": text}``, then ``{"done": true, ...the /chat body without
        content}``; ``{"error": ..., "status": n}`` for a failure after the response started."""
        request = self._request(principal, req.message, req.language, req.session_id, req.tier)
        self._consume_quota(principal)

        def render(event: dict[str, Any]) -> list[str]:
            if "done" in event:
                body = event["done"]
                return [_sse({"done": True, **{k: v for k, v in body.items() if k != "content"}})]
            return [_sse(event)]

        return await self._stream_response(request, render, hold=not req.progress)

    @app.get("/v1/models", responses=_errors())
    async def models(self, principal: Caller) -> dict[str, Any]:
        """The models of /v1/chat/completions: ``medgraph`` (routed) and, for callers who may choose
        the tier (``auth.force_tier``), ``medgraph-small|medium|large``."""
        choose = self.auth_cfg.force_tier == "anyone" or (principal is not None and principal.role == "admin")
        names = [m for m, tier in tier_models().items() if tier is None or choose]
        return {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "medgraph"}
                                           for m in names]}

    @app.post("/v1/chat/completions", response_model=None, responses=_errors(400, 403, 404, 429, 503))
    async def completions(self, req: CompletionRequest, principal: Caller) -> dict[str, Any] | StreamingResponse:
        tier = _model_tier(req.model)
        last_user = max((i for i, m in enumerate(req.messages) if m.role == "user"), default=-1)
        question = req.messages[last_user].content.strip() if last_user >= 0 else ""
        if not question:
            raise HTTPException(400, "messages must contain a non-empty user message")
        history = tuple((m.role, m.content) for m in req.messages[:last_user] if m.role in ("user", "assistant"))
        # an anonymous caller's `user` is not a secret: it names no stored session (the messages carry
        # the conversation); a signed-in user's names one of that user's sessions
        session = session_of_user(req.user) if principal is not None else None
        request = self._request(principal, question, None, session, tier, history)
        self._consume_quota(principal)
        cid, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        if req.stream:
            base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": req.model}

            def render(event: dict[str, Any]) -> list[str]:
                if "delta" in event:
                    return [_sse({**base, "choices": [{"index": 0, "delta": {"content": event["delta"]},
                                                       "finish_reason": None}]})]
                if "done" in event:
                    return [_sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                                  **_completion_extra(event["done"])}), _sse("[DONE]")]
                return []  # progress events have no place in the OpenAI chunk format

            opening = _sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})
            return await self._stream_response(request, render, opening=[opening])
        body = await self.ask(request)
        return {
            "id": cid, "object": "chat.completion", "created": created, "model": req.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": body["content"]},
                         "finish_reason": "stop"}],
            "usage": completion_usage([m.content for m in req.messages], body["content"]),
            **_completion_extra(body),
        }

    @app.post("/route", responses=_errors(429, 503))
    async def route(self, req: RouteRequest, principal: Caller) -> dict[str, Any]:
        async with self._work(principal):
            analysis = await self._call(self.analyzer.analyze, req.message, req.language)
            decision: RouteDecision = await self._call(self.router.route, analysis, None)
        return {**decision.to_dict(), "engine": self.tiers.engine_for(decision.tier), "language": analysis.language}

    @app.get("/graph/entity", responses=_errors(404, 429, 503))
    async def graph_entity(
        self,
        principal: Caller,
        name: Annotated[Text | None, Query(min_length=1, max_length=200)] = None,
        mesh_id: Annotated[str | None, Query(alias="id", max_length=10, pattern=MESH_ID)] = None,
        lang: Literal["en", "de", "zh"] | None = None,
        hops: int = Query(default=1, ge=1, le=2),
        limit: int = Query(default=25, ge=1, le=200),
    ) -> dict[str, Any]:
        """An entity and its neighbourhood: by ``name`` (any language, linked to MeSH) or by ``id``
        (a MeSH descriptor ID, looked up as it is: what the explorer sends to expand a node)."""
        if (name is None) == (mesh_id is None):
            raise HTTPException(400, "give exactly one of name (an entity name, linked to MeSH) "
                                     "or id (a MeSH descriptor ID such as D063373)")
        async with self._work(principal):
            if mesh_id is None:
                mesh_id = await self._call(self.analyzer.link_name, name, lang)
                if mesh_id is None:
                    raise HTTPException(404, f"no MeSH entity matches {name!r}")
            found = await self._call(self.retriever.entity, mesh_id, hops, limit, timeout=self.cfg.store_timeout_s)
        if found is None:
            what = f"{mesh_id} ({name!r})" if name is not None else mesh_id
            raise HTTPException(404, f"{what} is not mentioned in the corpus")
        return _entity_body(found, lang)

    @app.get("/graph/edge", responses=_errors(404, 429, 503))
    async def graph_edge(
        self,
        principal: Caller,
        source: Annotated[str, Query(max_length=10, pattern=MESH_ID)],
        target: Annotated[str, Query(max_length=10, pattern=MESH_ID)],
        limit: int = Query(default=20, ge=1, le=100),
    ) -> dict[str, Any]:
        """The evidence of a co-occurrence edge: up to ``limit`` chunks that mention both entities
        (by chunk ID); ``weight`` is how many were found. 404 for an unknown entity or no shared chunk."""
        if source == target:
            raise HTTPException(400, "source and target must be two different entities")
        async with self._work(principal):
            found = await self._call(self.retriever.edge, source, target, limit, timeout=self.cfg.store_timeout_s)
        if found["unknown"]:
            raise HTTPException(404, f"not mentioned in the corpus: {', '.join(found['unknown'])}")
        if not found["chunks"]:
            raise HTTPException(404, f"{source} and {target} are not mentioned together in any chunk")
        return {"source": source, "target": target, "weight": len(found["chunks"]), "chunks": found["chunks"]}

    @app.get("/chunks/{chunk_id}", responses=_errors(404, 503))
    async def chunk(self, _: Caller,
                    chunk_id: Annotated[str, Path(min_length=16, max_length=16, pattern=CHUNK_ID)]) -> dict[str, Any]:
        """One stored passage (a citation's ``chunk_id``): where it is from, its language and text."""
        found: dict[str, Any] | None = await self._call(self.retriever.chunk, chunk_id,
                                                        timeout=self.cfg.store_timeout_s)
        if found is None:
            raise HTTPException(404, f"no chunk {chunk_id}")
        return found

    @app.get("/corpus", responses=_errors(503))
    async def corpus(self, _: Caller, limit: int = Query(default=20, ge=1, le=200)) -> dict[str, Any]:
        """Store counts and the latest builds, newest first, each with its failures (first 50) and
        their count; a running build's ``summary`` is its progress."""
        return dict(await self._call(self.retriever.corpus, limit, timeout=self.cfg.store_timeout_s))

    @app.get("/graph/communities", responses=_errors(429, 503))
    async def graph_communities(
        self,
        principal: Caller,
        level: int | None = Query(default=None, ge=0, le=10),
        limit: int = Query(default=50, ge=1, le=500),
        offset: int = Query(default=0, ge=0, le=1_000_000),
    ) -> dict[str, Any]:
        """Communities of the co-occurrence graph, largest first: level, parent, size, summary, citations."""
        async with self._work(principal):
            return dict(await self._call(self.retriever.communities, level, limit, offset,
                                         timeout=self.cfg.store_timeout_s))

    @app.get("/health/live")
    async def live(self) -> dict[str, str]:
        return {"status": "live"}

    async def tier_stats(self) -> dict[str, Any]:
        """Stats of each engine deployment; engines allowed to scale to zero are not polled."""
        out: dict[str, Any] = {}
        for name, handle in self.engines.items():
            auto = self.tiers.engines[name].deployment.autoscaling
            if auto is not None and auto.min_replicas == 0:
                out[name] = {"state": "not polled (min_replicas 0: polling would start a replica)"}
                continue
            try:
                out[name] = await self._call(handle.stats, timeout=self.cfg.store_timeout_s)
            except ServiceUnavailable as exc:
                out[name] = {"state": "unreachable", "last_error": str(exc)}
        return {"map": {t: self.tiers.engine_for(t) for t in TIER_NAMES}, "engines": out}

    @app.get("/health/ready", responses={503: _E[503], 401: _E[401], 400: _E[400]})
    async def ready(self, authorization: str | None = Header(default=None),
                    x_api_key: str | None = Header(default=None)) -> dict[str, Any]:
        """Ready or not. The stores' counts, the last build and the tiers go only to an admin key
        (without ``auth.required``: to anyone); everyone else, a probe included, gets the status alone."""
        detail = not self.auth_cfg.required
        if authorization or x_api_key:
            principal = self.principal(authorization, x_api_key)  # a bad key is still a 401
            detail = detail or (principal is not None and principal.role == "admin")
        try:
            counts = await self._call(self.retriever.ready, timeout=self.cfg.store_timeout_s)
        except ServiceUnavailable:
            if detail:
                raise
            raise ServiceUnavailable("not ready") from None
        if not detail:
            return {"status": "ready"}
        return {"status": "ready", "stores": counts, "tiers": await self.tier_stats()}

    @app.get("/metrics", responses=_errors(403))
    async def metrics(self, principal: Caller) -> PlainTextResponse:
        """Prometheus text; with ``auth.required`` an admin key (a scrape job's bearer token)."""
        if self.auth_cfg.required:
            await admin(principal)
        stats = await self.tier_stats()
        return PlainTextResponse(prometheus_text(stats["engines"]), media_type="text/plain; version=0.0.4")

    @app.post("/tiers/{engine}/{action}", responses=_errors(403, 404, 503))
    async def tier_action(self, principal: Caller, engine: Annotated[str, Path(max_length=64)],
                          action: Literal["sleep", "wake"]) -> dict[str, Any]:
        if self.auth_cfg.required:
            await admin(principal)
        if not self.cfg.tier_admin:
            raise HTTPException(403, "tier administration is disabled (serve.tier_admin: false)")
        if engine not in self.engines:
            raise HTTPException(404, f"unknown engine {engine!r}; deployed: {sorted(self.engines)}")
        handle = self.engines[engine]
        method = handle.sleep if action == "sleep" else handle.wake
        return dict(await self._call(method, timeout=self._answer_timeout()))

    # --- administration (admin role) ------------------------------------------------------------

    @app.get("/admin/status", responses=_errors(403, 503))
    async def admin_status(self, _: Admin) -> dict[str, Any]:
        """Pipeline and service status: store counts and the last corpus build, tiers, usage."""
        stores = await self._call(self.retriever.ready, timeout=self.cfg.store_timeout_s)
        a = self.auth_cfg
        return {"stores": stores, "last_run": stores.get("last_run"), "tiers": await self.tier_stats(),
                "usage": self.quota.usage(), "limits": {"per_user_daily": a.per_user_daily, "global_daily": a.global_daily},
                "concurrency": {"active": self.gate.active, "queued": self.gate.queued, "max_concurrent": a.max_concurrent}}

    @app.get("/admin/users", responses=_errors(403))
    async def admin_users(self, _: Admin) -> dict[str, Any]:
        return {"users": self.keys.list_users(), "keys": self.keys.list_keys()}

    @app.post("/admin/users", status_code=201, responses=_errors(403, 409))
    async def admin_create_user(self, user: NewUser, _: Admin) -> dict[str, Any]:
        """Creates the user and its first API key; the key is shown in this response only."""
        if any(u["user_id"] == user.user_id for u in self.keys.list_users()):
            raise HTTPException(409, f"user {user.user_id!r} exists; POST /admin/users/{user.user_id}/keys for a key")
        try:
            self.keys.create_user(user.user_id, user.role)
        except ValueError as exc:  # e.g. the reserved name of unauthenticated callers
            raise HTTPException(422, str(exc)) from None
        key_id, key = self.keys.issue_key(user.user_id)
        return {"user_id": user.user_id, "role": user.role, "key_id": key_id, "api_key": key}

    @app.post("/admin/users/{user_id}/keys", status_code=201, responses=_errors(403, 404))
    async def admin_issue_key(self, user_id: Annotated[str, Path(max_length=64, pattern=USER_ID)],
                              _: Admin) -> dict[str, Any]:
        if not any(u["user_id"] == user_id for u in self.keys.list_users()):
            raise HTTPException(404, f"no user {user_id!r}")
        key_id, key = self.keys.issue_key(user_id)
        return {"user_id": user_id, "key_id": key_id, "api_key": key}

    @app.delete("/admin/keys/{key_id}", responses=_errors(403, 404))
    async def admin_revoke_key(self, key_id: Annotated[str, Path(max_length=12, pattern=KEY_ID)],
                               _: Admin) -> dict[str, Any]:
        if not self.keys.revoke(key_id):
            raise HTTPException(404, f"no active key {key_id!r}")
        return {"key_id": key_id, "revoked": True}
