"""The ingress's FastAPI app and what every route shares.

- ``app``: its error handlers (a store or tier that cannot answer is a 503 with ``Retry-After``,
  bad input a 4xx with the reason; under ``/v1/`` in OpenAI's error shape), the body-size limit
  (413) and the web interface (``serve/webui.py``).
- the identity dependencies: ``Caller`` (a key's principal, or None when anonymous callers are
  allowed) and ``Admin``.
- ``IngressBase``: the ingress's state and the steps the routes share (quotas, the concurrency
  gate, calls to the deployments with their time limits, the agent's events and their streaming).
  The routes are its subclasses by resource (``routes_chat``, ``routes_graph``, ``routes_admin``),
  joined in ``serve/api.py``. No ``from __future__ import annotations``: FastAPI must see the real request-model types.
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
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import Depends, FastAPI, Header, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from ray import serve
from starlette.exceptions import HTTPException as StarletteHTTPException

from medgraph.agent.graph import AgentRequest
from medgraph.config import MedGraphConfig
from medgraph.observe import metrics
from medgraph.observe.tracing import trace_id
from medgraph.stores.errors import StoreUnavailable
from serve import calls
from serve.agent import LATE_BACKEND, STORE_DOWN, unavailable_reason
from serve.colocated import ViaAgent
from serve.webui import mount_ui

log = logging.getLogger(__name__)

# no /docs or /redoc: their pages load scripts from a CDN on the interface's origin; the schema is
# /openapi.json and docs/api-reference.md
app = FastAPI(title="MedGraph", version="0.1.0", docs_url=None, redoc_url=None)


class ServiceUnavailable(Exception):
    pass


def sse_event(payload: dict[str, Any] | str) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n"


REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")  # a caller's X-Request-ID kept as sent; any other is replaced


def request_id(request: Request) -> str:
    """The request's ID (``X-Request-ID``, set by ``BodyLimit``): in every response's headers, in the
    body of a 5xx and in the server log lines about it."""
    return str(getattr(request.state, "request_id", "")) or "-"


def _error_body(request: Request, status: int, detail: Any) -> dict[str, Any]:
    """``{"detail": ...}``, or OpenAI's ``{"error": {...}}`` under ``/v1/`` (what its clients parse);
    a 5xx also names the request's ID (what an operator looks up in the log)."""
    if not request.url.path.startswith("/v1/"):
        return {"detail": detail, "request_id": request_id(request)} if status >= 500 else {"detail": detail}
    kind = {401: "authentication_error", 403: "permission_error", 404: "not_found_error",
            429: "rate_limit_error"}.get(status, "invalid_request_error" if status < 500 else "server_error")
    code = "model_not_found" if status == 404 and "model" in str(detail) else None
    message = detail if isinstance(detail, str) else "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ())[1:])}: {e.get('msg')}" for e in detail)
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return {**body, "request_id": request_id(request)} if status >= 500 else body


@app.exception_handler(ServiceUnavailable)
async def _unavailable(request: Request, exc: ServiceUnavailable) -> JSONResponse:
    """A 503 in the project's own words (``serve.agent.unavailable_reason``); the error behind it is
    logged under the request's ID."""
    log.warning("request %s: 503 %s (%r)", request_id(request), exc, exc.__cause__)
    return JSONResponse(_error_body(request, 503, str(exc)), status_code=503, headers={"Retry-After": "5"})


@app.exception_handler(StoreUnavailable)
async def _store_down(request: Request, exc: StoreUnavailable) -> JSONResponse:
    """The app-state store (keys, quotas, sessions) or a data store did not answer: try again later,
    not a 500. The caller reads what failed; the store's message (its host, the driver's text) is
    logged under the request's ID."""
    log.warning("request %s: a store is unavailable: %s", request_id(request), exc)
    return JSONResponse(_error_body(request, 503, STORE_DOWN), status_code=503, headers={"Retry-After": "5"})


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
    and tests, and the request's ID (``X-Request-ID``: the caller's when it is 1-64 letters, digits,
    ``.``, ``_`` or ``-``, else a new one); with tracing on, its trace (``X-Trace-Id``, and
    ``X-Trace-URL``: the tracing UI's page of it); API responses get ``API_SECURITY_HEADERS``. Without keys
    it first refuses other host names and other sites' state-changing requests (``_cross_site``).
    It reads the state of the app serving the request (Serve runs a copy of ``app``)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        state = _bound_state(scope["app"]) if "app" in scope else None
        replica = str(getattr(state, "replica", "")).encode()
        given = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode("latin-1")
        rid = given if REQUEST_ID.fullmatch(given) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = rid
        added = [(b"x-request-id", rid.encode()), *([(b"x-medgraph-replica", replica)] if replica else [])]
        tid = trace_id()  # Serve's span of this request in the ingress, when tracing is on
        if tid:
            added.append((b"x-trace-id", tid.encode()))
            ui = str(getattr(state, "trace_ui", ""))
            if ui:
                added.append((b"x-trace-url", ui.replace("{trace_id}", tid).encode()))
        plain_send = send

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"content-security-policy" for name, _ in headers):  # API, not the UI
                    headers += API_SECURITY_HEADERS
                message = {**message, "headers": [*headers, *added]}
            await plain_send(message)
        refused = _cross_site(scope, getattr(state, "origin_guard", None))
        if refused is not None:
            await _plain_error(send, *refused)
            return
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


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# every API response, as the interface's files (serve/webui.py) have their own: JSON is never a page
API_SECURITY_HEADERS = [(b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'"),
                        (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]


def _cross_site(scope: dict[str, Any], allowed: frozenset[str] | None) -> tuple[int, str] | None:
    """Without keys (``allowed`` is the host allow-list; None with keys on): a request naming a host
    not on the list is a 421 (DNS rebinding: another site's page reaching this address under its own
    name), and a state-changing request from a page of another origin (``Origin`` not this host, or
    ``null``) is a 403 (any site the user visits could wake or sleep tiers). Clients that send no
    ``Origin`` (curl, SDKs) pass."""
    if allowed is None:
        return None
    headers = dict(scope.get("headers") or [])
    host = headers.get(b"host", b"").decode("latin-1").lower()
    name = host[1:host.find("]")] if host.startswith("[") else host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    if allowed and name not in allowed:
        return 421, "this host name is not served here (serve.allowed_hosts)"
    origin = headers.get(b"origin")
    if origin is not None and scope.get("method", "GET") not in SAFE_METHODS:
        parts = urlsplit(origin.decode("latin-1"))
        if origin == b"null" or parts.netloc.lower() != host:
            return 403, "a request from another site's page may not change anything here without an API key"
    return None


async def _plain_error(send: Any, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


app.add_middleware(BodyLimit)
mount_ui(app)  # the web interface: GET / and /ui/ (serve/webui.py)


# --- identity -------------------------------------------------------------------------------

def _bound_state(served: Any) -> Any:
    """The state of the app serving a request, bound to this replica's ingress.

    Serve answers with its own copy of ``app`` (``serve.ingress`` freezes one when the class is
    decorated), not the module's, so on a replica's first request the copy is bound to the
    replica's servable object here; a test that serves the module's ``app`` finds it bound by
    ``IngressBase.__init__``.
    """
    state = served.state
    if not hasattr(state, "ingress"):
        try:
            servable = serve.get_replica_context().servable_object
        except Exception:  # noqa: BLE001 - no replica context: nothing to bind
            return state
        if isinstance(servable, IngressBase):
            servable.bind(served)
    return state


def _ingress(request: Request) -> "IngressBase":
    ingress: IngressBase = request.app.state.ingress
    return ingress


async def caller(request: Request, authorization: str | None = Header(default=None),
                 x_api_key: str | None = Header(default=None)) -> Any:
    """Who is asking, for every route but liveness: a ``Principal``, or None (anonymous, only when
    ``auth.required`` is false). A missing key (when required) or one that does not verify is a 401."""
    ingress = _ingress(request)
    return await ingress.blocking(ingress.principal, authorization, x_api_key)


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
STATUS_DESCRIPTIONS = {s: {"description": d} for s, d in {
    400: "bad request", 401: "no or invalid API key", 403: "not allowed for this key", 404: "not found",
    409: "conflict", 413: "request body too large", 422: "invalid request", 429: "daily quota reached",
    503: "a store or tier is unavailable or the server is at capacity"}.items()}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {s: STATUS_DESCRIPTIONS[s] for s in (400, 401, 413, 422, 503, *statuses)}


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


class IngressBase:
    """The ingress's state and the steps every route shares: identity, quotas, the concurrency gate,
    calls to the deployments with their time limits, the agent's events and their streaming."""

    def __init__(self, cfg: MedGraphConfig, analyzer: Any, retriever: Any, router: Any, agent: Any,
                 engines: dict[str, Any]) -> None:
        from medgraph.auth.keys import ApiKeyStore
        from medgraph.auth.redis_state import make_gate, make_quota

        self.full_cfg = cfg
        self.cfg, self.tiers, self.auth_cfg = cfg.serve, cfg.tiers, cfg.auth
        self.analyzer, self.retriever, self.router, self.agent = analyzer, retriever, router, agent
        # the parts that run in the agent's replica (serve.colocate: their handles are bound as None)
        # are reached through the agent
        if analyzer is None:
            self.analyzer = ViaAgent(agent, "analyzer")
        if router is None:
            self.router = ViaAgent(agent, "router")
        self.engines = {name: ViaAgent(agent, name) if handle is None else handle
                        for name, handle in engines.items()}
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
        try:
            self.replica = str(serve.get_replica_context().replica_id.unique_id)
        except Exception:  # noqa: BLE001 - outside a Serve replica (a test building the class) there is none
            self.replica = ""
        # the app-state stores' calls (key checks, quota counts: SQLite, PostgreSQL or Redis, all
        # blocking clients) run here, off the event loop: a slow or paused database delays the
        # requests that need it, not every request, open stream and liveness probe of the replica
        self.app_state = calls.StatePool(self.cfg.store_timeout_s)
        self.bind(app)

    async def blocking(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` in the replica's app-state threads (``serve.calls.StatePool``)."""
        return await self.app_state.run(fn, *args)

    def bind(self, served: Any) -> None:
        """Make this instance what the dependencies (caller, admin) and the middleware of the app
        ``served`` find in its state."""
        served.state.ingress = self
        served.state.max_body_bytes = self.cfg.max_body_bytes
        served.state.replica = self.replica
        served.state.trace_ui = self.full_cfg.tracing.ui if self.full_cfg.tracing.enabled else ""
        served.state.origin_guard = (None if self.auth_cfg.required
                                     else frozenset(h.lower().strip("[]") for h in self.cfg.allowed_hosts))

    async def _call(self, handle_method: Any, *args: Any, timeout: float | None = None) -> Any:
        return await calls.call(
            handle_method, *args, timeout=timeout or self.cfg.request_timeout_s, translate=_client_error,
            late=lambda: ServiceUnavailable(LATE_BACKEND))

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

    async def _consume_quota(self, principal: Any) -> None:
        from medgraph.auth.quota import QuotaExceeded

        try:
            await self.blocking(self.quota.consume, principal.user_id if principal else None)
        except QuotaExceeded as exc:
            retry = max(1, int(exc.resets_at - time.time()))
            raise HTTPException(429, f"daily {exc.scope} quota of {exc.limit} questions reached",
                                headers={"Retry-After": str(retry)}) from exc

    async def _enter(self, slot: Any) -> None:
        from medgraph.auth.gate import GateFull

        started = time.perf_counter()
        try:
            await slot.__aenter__()
            metrics.observe("medgraph_gate_wait_seconds", time.perf_counter() - started)
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
        await self._consume_quota(principal)
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
        (``status``, ``hop``) are held back until the answer starts, so that a failure before it is still a clean 503."""
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
                if ("status" in event or "hop" in event) and not started:  # progress, held
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
                yield sse_event({"error": detail, "status": getattr(exc, "status_code", 503)})

        return StreamingResponse(body(), media_type="text/event-stream")

    # --- routes -------------------------------------------------------------------------
