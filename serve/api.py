"""The HTTP ingress: one FastAPI app in front of the Serve deployments.

Endpoints: ``POST /chat``, ``POST /chat/stream`` (Server-Sent Events), ``POST /v1/chat/completions``
(OpenAI-compatible, streaming or not; model ``medgraph-small|medium|large`` forces a tier),
``POST /route`` (the routing decision alone), ``GET /graph/entity``, ``GET /health/live``,
``GET /health/ready`` (stores and LLM tiers), ``GET /metrics`` (Prometheus text: tier wakes,
sleeps, latencies, memory freed), ``POST /tiers/{engine}/sleep|wake`` (``serve.tier_admin``).
Bad requests get 4xx with a message; a store that cannot answer within ``serve.store_timeout_s``
(or raises ``StoreUnavailable``), or a tier that cannot wake or run, gives 503, never a hang.

Query path: analyse, then route (tier) and retrieve + rerank concurrently, then the tier's
engine deployment answers or streams (its tier manager wakes it first when it sleeps).

``Ingress`` takes its config, the tier map and the deployment handles in the constructor. It carries
``@serve.ingress(app)`` here, at import time, because each replica re-imports this module and
the class-based routes must be rewritten in that process; ``serve/app.py`` only deploys it.
No ``from __future__ import annotations`` here: FastAPI must see the real request-model types.
"""


import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Query
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse
from pydantic import BaseModel, Field
from ray import serve

from medgraph.config.llm import TIER_NAMES, TiersConfig
from medgraph.config.models import ServeConfig
from medgraph.generate.base import Answer
from medgraph.llm.base import ModelUnavailable
from medgraph.route.types import RouteDecision
from medgraph.stores.errors import StoreError
from serve.metrics import prometheus_text
from serve.tiers import TierUnavailable

log = logging.getLogger(__name__)
app = FastAPI(title="MedGraph", version="0.1.0")


Tier = Literal["small", "medium", "large"]


class ChatRequest(BaseModel):
    message: str = Field(min_length=1, max_length=4000)
    session_id: str | None = Field(default=None, max_length=128)
    language: Literal["en", "de", "zh"] | None = None
    tier: Tier | None = None  # force a tier instead of routing


class RouteRequest(BaseModel):
    message: str = Field(min_length=1, max_length=4000)
    language: Literal["en", "de", "zh"] | None = None


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = Field(max_length=16000)


class CompletionRequest(BaseModel):
    model: str = "medgraph"
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False


class ServiceUnavailable(Exception):
    pass


def _answer_body(answer: Answer, session_id: str, paths: list[str], route: RouteDecision) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "content": answer.content,
        "citations": [c.__dict__ for c in answer.citations],
        "retrieval_paths_used": paths,
        "model_used": answer.model_used,
        "refused": answer.refused,
        "language": answer.language,
        "disclaimer": answer.disclaimer,
        "tier": route.tier,
        "route": route.to_dict(),
        "grounding": answer.grounding,
    }


def _forced_tier(model: str) -> str | None:
    """``medgraph-small`` / ``-medium`` / ``-large`` choose a tier; any other model name routes."""
    suffix = model.rsplit("-", 1)[-1]
    return suffix if model.startswith("medgraph-") and suffix in TIER_NAMES else None


def _sse(payload: dict[str, Any] | str) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n"


@app.exception_handler(ServiceUnavailable)
async def _unavailable(_: Any, exc: ServiceUnavailable) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, status_code=503)


async def _awaitable(response: Any) -> Any:
    return await response


def _unavailable_reason(exc: BaseException) -> str | None:
    """The 503 message for errors that mean 'try again later' (also when Serve wraps them)."""
    for err in (exc, getattr(exc, "cause", None), exc.__cause__):
        if isinstance(err, StoreError):
            return f"store unavailable: {err}"
        if isinstance(err, TierUnavailable | ModelUnavailable):
            return f"LLM tier unavailable: {err}"
    return None


def _completion_extra(answer: Answer, paths: list[str], route: RouteDecision) -> dict[str, Any]:
    return {"citations": [c.__dict__ for c in answer.citations], "retrieval_paths_used": paths,
            "disclaimer": answer.disclaimer, "refused": answer.refused, "tier": route.tier,
            "route": route.to_dict(), "model_used": answer.model_used}


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
    def __init__(self, cfg: ServeConfig, tiers: TiersConfig, analyzer: Any, retriever: Any, reranker: Any,
                 router: Any, engines: dict[str, Any]) -> None:
        self.cfg, self.tiers = cfg, tiers
        self.analyzer, self.retriever, self.reranker, self.router = analyzer, retriever, reranker, router
        self.engines = engines

    async def _call(self, handle_method: Any, *args: Any, timeout: float | None = None) -> Any:
        try:
            return await asyncio.wait_for(_awaitable(handle_method.remote(*args)), timeout or self.cfg.request_timeout_s)
        except TimeoutError as exc:
            raise ServiceUnavailable("a backend did not answer in time; try again later") from exc
        except Exception as exc:
            reason = _unavailable_reason(exc)
            if reason is None:
                raise
            raise ServiceUnavailable(reason) from exc

    def _engine(self, tier: str) -> tuple[str, Any]:
        name = self.tiers.engine_for(tier)
        return name, self.engines[name]

    async def prepare(self, question: str, language: str | None, tier: str | None) -> tuple[Any, RouteDecision, Any, Any]:
        """Analysis, route and (concurrently) retrieval + reranking of one question."""
        analysis = await self._call(self.analyzer.analyze, question, language)

        async def evidence() -> tuple[Any, Any]:
            result = await self._call(self.retriever.retrieve, analysis)
            return result, await self._call(self.reranker.rerank, question, result.candidates)

        route, (result, ranked) = await asyncio.gather(self._call(self.router.route, analysis, tier), evidence())
        return analysis, route, result, ranked

    async def ask(self, question: str, language: str | None, tier: str | None = None) -> tuple[Answer, list[str], RouteDecision]:
        analysis, route, result, ranked = await self.prepare(question, language, tier)
        _, engine = self._engine(route.tier)
        answer = await self._call(engine.answer, question, analysis, ranked, timeout=self._answer_timeout())
        return answer, list(result.paths_used), route

    def _answer_timeout(self) -> float:
        return self.cfg.answer_timeout_s + self.tiers.wake_timeout_s

    async def stream(self, question: str, language: str | None, tier: str | None
                     ) -> tuple[AsyncIterator[dict[str, Any]], list[str], RouteDecision]:
        """The tier's event stream, started (its first event awaited: a failed wake is a 503 here)."""
        analysis, route, result, ranked = await self.prepare(question, language, tier)
        _, engine = self._engine(route.tier)
        gen = engine.options(stream=True).stream.remote(question, analysis, ranked)
        try:
            first = await asyncio.wait_for(gen.__anext__(), self._answer_timeout())
        except TimeoutError as exc:
            gen.cancel()
            raise ServiceUnavailable("the LLM tier did not start answering in time; try again later") from exc
        except Exception as exc:
            reason = _unavailable_reason(exc)
            if reason is None:
                raise
            raise ServiceUnavailable(reason) from exc

        async def events() -> AsyncIterator[dict[str, Any]]:
            yield first
            while True:
                try:
                    yield await asyncio.wait_for(gen.__anext__(), self.cfg.answer_timeout_s)
                except StopAsyncIteration:
                    return

        return events(), list(result.paths_used), route

    # --- routes -------------------------------------------------------------------------

    @app.post("/chat")
    async def chat(self, req: ChatRequest) -> dict[str, Any]:
        answer, paths, route = await self.ask(req.message, req.language, req.tier)
        return _answer_body(answer, req.session_id or uuid.uuid4().hex, paths, route)

    @app.post("/chat/stream")
    async def chat_stream(self, req: ChatRequest) -> StreamingResponse:
        events, paths, route = await self.stream(req.message, req.language, req.tier)
        session_id = req.session_id or uuid.uuid4().hex

        async def sse() -> AsyncIterator[str]:
            async for event in events:
                if "delta" in event:
                    yield _sse({"delta": event["delta"]})
                else:
                    body = _answer_body(event["answer"], session_id, paths, route)
                    yield _sse({"done": True, **{k: v for k, v in body.items() if k != "content"}})

        return StreamingResponse(sse(), media_type="text/event-stream")

    @app.post("/v1/chat/completions", response_model=None)
    async def completions(self, req: CompletionRequest) -> dict[str, Any] | StreamingResponse:
        question = next((m.content for m in reversed(req.messages) if m.role == "user"), "").strip()
        if not question:
            raise HTTPException(400, "messages must contain a non-empty user message")
        cid, created, tier = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time()), _forced_tier(req.model)
        if req.stream:
            events, paths, route = await self.stream(question, None, tier)
            return StreamingResponse(self._completion_chunks(events, paths, route, cid, created, req.model),
                                     media_type="text/event-stream")
        answer, paths, route = await self.ask(question, None, tier)
        return {
            "id": cid, "object": "chat.completion", "created": created, "model": req.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(question.split()), "completion_tokens": len(answer.content.split()),
                      "total_tokens": len(question.split()) + len(answer.content.split())},
            **_completion_extra(answer, paths, route),
        }

    @staticmethod
    async def _completion_chunks(events: AsyncIterator[dict[str, Any]], paths: list[str], route: RouteDecision,
                                 cid: str, created: int, model: str) -> AsyncIterator[str]:
        base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
        yield _sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})
        async for event in events:
            if "delta" in event:
                yield _sse({**base, "choices": [{"index": 0, "delta": {"content": event["delta"]},
                                                 "finish_reason": None}]})
            else:
                extra = _completion_extra(event["answer"], paths, route)
                yield _sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], **extra})
        yield _sse("[DONE]")

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
    async def tier_action(self, engine: str, action: Literal["sleep", "wake"]) -> dict[str, Any]:
        if not self.cfg.tier_admin:
            raise HTTPException(403, "tier administration is disabled (serve.tier_admin: false)")
        if engine not in self.engines:
            raise HTTPException(404, f"unknown engine {engine!r}; deployed: {sorted(self.engines)}")
        handle = self.engines[engine]
        method = handle.sleep if action == "sleep" else handle.wake
        return await self._call(method, timeout=self._answer_timeout())
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

