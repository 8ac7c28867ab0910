"""The HTTP ingress: one FastAPI app in front of the Serve deployments.

Endpoints: ``POST /chat``, ``POST /chat/stream`` (Server-Sent Events), ``POST /v1/chat/completions``
(OpenAI-compatible, streaming or not; model ``medgraph-small|medium|large`` forces a tier; earlier
messages are the conversation the rewriter reads), ``POST /route`` (the routing decision alone),
``GET /graph/entity``, ``GET /health/live``, ``GET /health/ready`` (stores and LLM tiers),
``GET /metrics`` (Prometheus text: tier wakes, sleeps, latencies, memory freed),
``POST /tiers/{engine}/sleep|wake`` (``serve.tier_admin``), and for admins ``GET /admin/status``
(pipeline, stores, tiers, usage), ``GET|POST /admin/users``, ``POST /admin/users/{id}/keys``,
``DELETE /admin/keys/{key_id}``.

Questions go to the agent deployment (``serve/agent.py``: the LangGraph agent). The ingress does
what must happen before it: the caller's identity (``Authorization: Bearer <key>`` or
``X-API-Key``; keys stored hashed, roles admin/user; anonymous when ``auth.required`` is false),
the per-user and global daily quotas (429), and the global concurrency cap: requests over
``auth.max_concurrent`` wait in a FIFO queue (``/chat/stream`` sends ``{"status": "queued",
"position": n}`` while waiting) and only a full queue (``auth.max_queue``) is refused (503).
Bad requests get 4xx with a message; a store that cannot answer within ``serve.store_timeout_s``
(or raises ``StoreUnavailable``), or a tier that cannot wake or run, gives 503, never a hang.

``Ingress`` takes its config and the deployment handles in the constructor. It carries
``@serve.ingress(app)`` here, at import time, because each replica re-imports this module and
the class-based routes must be rewritten in that process; ``serve/app.py`` only deploys it.
No ``from __future__ import annotations`` here: FastAPI must see the real request-model types.
"""


import asyncio
import hashlib
import json
import logging
import os
import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import FastAPI, Header, HTTPException, Query
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse
from pydantic import BaseModel, Field
from ray import serve

from medgraph.agent.graph import AgentRequest
from medgraph.config import MedGraphConfig
from medgraph.config.llm import TIER_NAMES
from medgraph.route.types import RouteDecision
from serve import calls
from serve.agent import unavailable_reason
from serve.metrics import prometheus_text

log = logging.getLogger(__name__)
app = FastAPI(title="MedGraph", version="0.1.0")


Tier = Literal["small", "medium", "large"]


SESSION_ID = r"^[A-Za-z0-9_-]{1,128}$"  # what the session store accepts (medgraph.memory.sessions)
MAX_MESSAGES = 64  # messages of one completion request (the rewriter reads the last turns)


class ChatRequest(BaseModel):
    message: str = Field(min_length=1, max_length=4000)
    session_id: str | None = Field(default=None, max_length=128, pattern=SESSION_ID)
    language: Literal["en", "de", "zh"] | None = None
    tier: Tier | None = None  # force a tier instead of routing


class RouteRequest(BaseModel):
    message: str = Field(min_length=1, max_length=4000)
    language: Literal["en", "de", "zh"] | None = None


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = Field(max_length=16000)


class CompletionRequest(BaseModel):
    model: str = Field(default="medgraph", max_length=64)
    messages: list[ChatMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    # OpenAI's end-user field (any string, e.g. an e-mail address): names the session, see session_of_user
    user: str | None = Field(default=None, min_length=1, max_length=256)


def session_of_user(user: str | None) -> str | None:
    """The session of an OpenAI ``user``: itself when it is a valid session ID, else a stable
    hash of it (``user-<40 hex>``), so that any end-user string continues its own conversation."""
    if user is None or re.fullmatch(SESSION_ID, user):
        return user
    return "user-" + hashlib.sha256(user.encode("utf-8")).hexdigest()[:40]


class NewUser(BaseModel):
    # what the key store accepts (medgraph.auth.keys): 1-64 characters, the first a letter or digit
    user_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
    role: Literal["admin", "user"] = "user"


class ServiceUnavailable(Exception):
    pass


def _forced_tier(model: str) -> str | None:
    """``medgraph-small`` / ``-medium`` / ``-large`` choose a tier; any other model name routes."""
    suffix = model.rsplit("-", 1)[-1]
    return suffix if model.startswith("medgraph-") and suffix in TIER_NAMES else None


def _sse(payload: dict[str, Any] | str) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n"


@app.exception_handler(ServiceUnavailable)
async def _unavailable(_: Any, exc: ServiceUnavailable) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": "5"})


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
        from medgraph.auth.gate import ConcurrencyGate
        from medgraph.auth.keys import ApiKeyStore
        from medgraph.auth.quota import QuotaTracker

        self.full_cfg = cfg
        self.cfg, self.tiers, self.auth_cfg = cfg.serve, cfg.tiers, cfg.auth
        self.analyzer, self.retriever, self.router, self.agent = analyzer, retriever, router, agent
        self.engines = engines
        a = cfg.auth
        self.keys = ApiKeyStore(cfg.app.path, os.environ.get(a.pepper_env) if a.pepper_env else None)
        if a.admin_key_env and os.environ.get(a.admin_key_env):
            self.keys.bootstrap_admin(os.environ[a.admin_key_env])
        self.quota = QuotaTracker(cfg.app.path, cfg.auth.per_user_daily, cfg.auth.global_daily)
        self.gate = ConcurrencyGate(cfg.auth.max_concurrent, cfg.auth.max_queue)

    async def _call(self, handle_method: Any, *args: Any, timeout: float | None = None) -> Any:
        return await calls.call(
            handle_method, *args, timeout=timeout or self.cfg.request_timeout_s, translate=_client_error,
            late=lambda: ServiceUnavailable("a backend did not answer in time; try again later"))

    def _answer_timeout(self) -> float:
        # the agent's whole run: retrieval, gap completion, a wake and generation
        return (self.cfg.answer_timeout_s + self.tiers.wake_timeout_s + self.full_cfg.gaps.time_budget_s
                + self.cfg.request_timeout_s)

    # --- identity, quota, concurrency ---------------------------------------------------------

    def _principal(self, authorization: str | None, x_api_key: str | None) -> Any:
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

    def _admin(self, authorization: str | None, x_api_key: str | None) -> Any:
        principal = self._principal(authorization, x_api_key)
        if principal is None:
            raise HTTPException(401, "admin endpoints need an admin API key")
        if principal.role != "admin":
            raise HTTPException(403, "admin role required")
        return principal

    def _consume_quota(self, principal: Any) -> None:
        from medgraph.auth.quota import QuotaExceeded

        try:
            self.quota.consume(principal.user_id if principal else None)
        except QuotaExceeded as exc:
            retry = max(1, int(exc.resets_at - time.time()))
            raise HTTPException(429, f"daily {exc.scope} quota of {exc.limit} questions reached",
                                headers={"Retry-After": str(retry)}) from exc

    def _check_queue(self) -> None:
        limit = self.auth_cfg.max_queue
        if limit is not None and self.gate.active >= self.auth_cfg.max_concurrent and self.gate.queued >= limit:
            raise ServiceUnavailable(f"the server is at capacity ({self.gate.queued} requests waiting)")

    async def _enter(self, slot: Any) -> None:
        from medgraph.auth.gate import GateFull

        try:
            await slot.__aenter__()
        except GateFull as exc:
            raise ServiceUnavailable(f"the server is at capacity ({self.gate.queued} requests waiting)") from exc

    def _request(self, principal: Any, message: str, language: str | None, session_id: str | None,
                 tier: str | None, history: tuple[tuple[str, str], ...] | None = None) -> AgentRequest:
        return AgentRequest(question=message, language=language, session_id=session_id,
                            user_id=principal.user_id if principal else None, tier=tier, history=history)

    async def ask(self, request: AgentRequest) -> dict[str, Any]:
        self._check_queue()
        slot = self.gate.slot()
        await self._enter(slot)
        try:
            body: dict[str, Any] = await self._call(self.agent.run, request, timeout=self._answer_timeout())
        finally:
            await slot.__aexit__(None, None, None)
        return body

    async def events(self, request: AgentRequest) -> AsyncIterator[dict[str, Any]]:
        """The agent's events for one question, run inside a concurrency slot. Waiting in the queue
        yields ``{"status": "queued", "position": n}``. The agent's progress events are held back
        until the answer starts, so that a failure before it is still a clean 503."""
        self._check_queue()
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
            started = queued
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

    async def _stream_response(self, request: AgentRequest, render: Any, opening: list[str] | None = None
                               ) -> StreamingResponse:
        events = self.events(request)
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

    @app.post("/chat")
    async def chat(self, req: ChatRequest, authorization: str | None = Header(default=None),
                   x_api_key: str | None = Header(default=None)) -> dict[str, Any]:
        principal = self._principal(authorization, x_api_key)
        self._consume_quota(principal)
        return await self.ask(self._request(principal, req.message, req.language, req.session_id, req.tier))

    @app.post("/chat/stream")
    async def chat_stream(self, req: ChatRequest, authorization: str | None = Header(default=None),
                          x_api_key: str | None = Header(default=None)) -> StreamingResponse:
        """Events: ``{"status": ...}`` (queue position, agent progress), ``{"delta": text}``, then
        ``{"done": true, ...the /chat body without content}``."""
        principal = self._principal(authorization, x_api_key)
        self._consume_quota(principal)

        def render(event: dict[str, Any]) -> list[str]:
            if "done" in event:
                body = event["done"]
                return [_sse({"done": True, **{k: v for k, v in body.items() if k != "content"}})]
            return [_sse(event)]

        request = self._request(principal, req.message, req.language, req.session_id, req.tier)
        return await self._stream_response(request, render)

    @app.post("/v1/chat/completions", response_model=None)
    async def completions(self, req: CompletionRequest, authorization: str | None = Header(default=None),
                          x_api_key: str | None = Header(default=None)) -> dict[str, Any] | StreamingResponse:
        last_user = max((i for i, m in enumerate(req.messages) if m.role == "user"), default=-1)
        question = req.messages[last_user].content.strip() if last_user >= 0 else ""
        if not question:
            raise HTTPException(400, "messages must contain a non-empty user message")
        principal = self._principal(authorization, x_api_key)
        self._consume_quota(principal)
        history = tuple((m.role, m.content) for m in req.messages[:last_user] if m.role in ("user", "assistant"))
        request = self._request(principal, question, None, session_of_user(req.user), _forced_tier(req.model), history)
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
        n_q, n_a = len(question.split()), len(body["content"].split())
        return {
            "id": cid, "object": "chat.completion", "created": created, "model": req.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": body["content"]},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": n_q, "completion_tokens": n_a, "total_tokens": n_q + n_a},
            **_completion_extra(body),
        }

    @app.post("/route")
    async def route(self, req: RouteRequest) -> dict[str, Any]:
        analysis = await self._call(self.analyzer.analyze, req.message, req.language)
        decision: RouteDecision = await self._call(self.router.route, analysis, None)
        return {**decision.to_dict(), "engine": self.tiers.engine_for(decision.tier), "language": analysis.language}

    @app.get("/graph/entity")
    async def graph_entity(
        self,
        name: str = Query(min_length=1, max_length=200),
        lang: Literal["en", "de", "zh"] | None = None,
        hops: int = Query(default=1, ge=1, le=2),
        limit: int = Query(default=25, ge=1, le=200),
    ) -> dict[str, Any]:
        mesh_id = await self._call(self.analyzer.link_name, name, lang)
        if mesh_id is None:
            raise HTTPException(404, f"no MeSH entity matches {name!r}")
        found = await self._call(self.retriever.entity, mesh_id, hops, limit, timeout=self.cfg.store_timeout_s)
        if found is None:
            raise HTTPException(404, f"{mesh_id} ({name!r}) is not mentioned in the corpus")
        return _entity_body(found, lang)

    @app.get("/graph/communities")
    async def graph_communities(
        self,
        level: int | None = Query(default=None, ge=0, le=10),
        limit: int = Query(default=50, ge=1, le=500),
        offset: int = Query(default=0, ge=0),
    ) -> dict[str, Any]:
        """Communities of the co-occurrence graph, largest first: level, parent, size, summary, citations."""
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

    @app.get("/health/ready")
    async def ready(self) -> dict[str, Any]:
        counts = await self._call(self.retriever.ready, timeout=self.cfg.store_timeout_s)
        return {"status": "ready", "stores": counts, "tiers": await self.tier_stats()}

    @app.get("/metrics")
    async def metrics(self) -> PlainTextResponse:
        stats = await self.tier_stats()
        return PlainTextResponse(prometheus_text(stats["engines"]), media_type="text/plain; version=0.0.4")

    @app.post("/tiers/{engine}/{action}")
    async def tier_action(self, engine: str, action: Literal["sleep", "wake"],
                          authorization: str | None = Header(default=None),
                          x_api_key: str | None = Header(default=None)) -> dict[str, Any]:
        if self.auth_cfg.required:
            self._admin(authorization, x_api_key)
        if not self.cfg.tier_admin:
            raise HTTPException(403, "tier administration is disabled (serve.tier_admin: false)")
        if engine not in self.engines:
            raise HTTPException(404, f"unknown engine {engine!r}; deployed: {sorted(self.engines)}")
        handle = self.engines[engine]
        method = handle.sleep if action == "sleep" else handle.wake
        return await self._call(method, timeout=self._answer_timeout())

    # --- administration (admin role) ------------------------------------------------------------

    @app.get("/admin/status")
    async def admin_status(self, authorization: str | None = Header(default=None),
                           x_api_key: str | None = Header(default=None)) -> dict[str, Any]:
        """Pipeline and service status: store counts and the last corpus build, tiers, usage."""
        self._admin(authorization, x_api_key)
        stores = await self._call(self.retriever.ready, timeout=self.cfg.store_timeout_s)
        return {"stores": stores, "last_run": stores.get("last_run"), "tiers": await self.tier_stats(),
                "usage": self.quota.usage(), "concurrency": {"active": self.gate.active, "queued": self.gate.queued,
                                                            "max_concurrent": self.auth_cfg.max_concurrent}}

    @app.get("/admin/users")
    async def admin_users(self, authorization: str | None = Header(default=None),
                          x_api_key: str | None = Header(default=None)) -> dict[str, Any]:
        self._admin(authorization, x_api_key)
        return {"users": self.keys.list_users(), "keys": self.keys.list_keys()}

    @app.post("/admin/users", status_code=201)
    async def admin_create_user(self, user: NewUser, authorization: str | None = Header(default=None),
                                x_api_key: str | None = Header(default=None)) -> dict[str, Any]:
        """Creates the user and its first API key; the key is shown in this response only."""
        self._admin(authorization, x_api_key)
        if any(u["user_id"] == user.user_id for u in self.keys.list_users()):
            raise HTTPException(409, f"user {user.user_id!r} exists; POST /admin/users/{user.user_id}/keys for a key")
        try:
            self.keys.create_user(user.user_id, user.role)
        except ValueError as exc:  # e.g. the reserved name of unauthenticated callers
            raise HTTPException(422, str(exc)) from None
        key_id, key = self.keys.issue_key(user.user_id)
        return {"user_id": user.user_id, "role": user.role, "key_id": key_id, "api_key": key}

    @app.post("/admin/users/{user_id}/keys", status_code=201)
    async def admin_issue_key(self, user_id: str, authorization: str | None = Header(default=None),
                              x_api_key: str | None = Header(default=None)) -> dict[str, Any]:
        self._admin(authorization, x_api_key)
        if not any(u["user_id"] == user_id for u in self.keys.list_users()):
            raise HTTPException(404, f"no user {user_id!r}")
        key_id, key = self.keys.issue_key(user_id)
        return {"user_id": user_id, "key_id": key_id, "api_key": key}

    @app.delete("/admin/keys/{key_id}")
    async def admin_revoke_key(self, key_id: str, authorization: str | None = Header(default=None),
                               x_api_key: str | None = Header(default=None)) -> dict[str, Any]:
        self._admin(authorization, x_api_key)
        if not self.keys.revoke(key_id):
            raise HTTPException(404, f"no active key {key_id!r}")
        return {"key_id": key_id, "revoked": True}
