"""The HTTP ingress: one FastAPI app in front of the Serve deployments.

Endpoints: ``POST /chat``, ``POST /chat/stream`` (Server-Sent Events), ``POST /v1/chat/completions``
(OpenAI-compatible, streaming or not), ``GET /graph/entity``, ``GET /health/live``,
``GET /health/ready``. Bad requests get 4xx with a message; a store that cannot answer within
``serve.store_timeout_s`` (or raises ``StoreUnavailable``) gives 503, never a hang.

``Ingress`` takes its config and four deployment handles in the constructor. It carries
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
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field
from ray import serve

from medgraph.config.models import ServeConfig
from medgraph.generate.base import Answer
from medgraph.stores.errors import StoreError

log = logging.getLogger(__name__)
app = FastAPI(title="MedGraph", version="0.1.0")


class ChatRequest(BaseModel):
    message: str = Field(min_length=1, max_length=4000)
    session_id: str | None = Field(default=None, max_length=128)
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


def _answer_body(answer: Answer, session_id: str, paths: list[str]) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "content": answer.content,
        "citations": [c.__dict__ for c in answer.citations],
        "retrieval_paths_used": paths,
        "model_used": answer.model_used,
        "refused": answer.refused,
        "language": answer.language,
        "disclaimer": answer.disclaimer,
    }


def _sse(payload: dict[str, Any] | str) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n"


@app.exception_handler(ServiceUnavailable)
async def _unavailable(_: Any, exc: ServiceUnavailable) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, status_code=503)


async def _awaitable(response: Any) -> Any:
    return await response


def _deltas(answer: Answer) -> list[str]:
    if answer.refused or not answer.sentences:
        return [answer.content]
    return [f"{s} [{n}]" if i == 0 else f" {s} [{n}]" for i, (s, n) in enumerate(answer.sentences)]


async def _completion_stream(
    answer: Answer, cid: str, created: int, model: str, extra: dict[str, Any]
) -> AsyncIterator[str]:
    base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
    yield _sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})
    for delta in _deltas(answer):
        yield _sse({**base, "choices": [{"index": 0, "delta": {"content": delta}, "finish_reason": None}]})
    yield _sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], **extra})
    yield _sse("[DONE]")


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
    }


@serve.ingress(app)
class Ingress:
    def __init__(self, cfg: ServeConfig, analyzer: Any, retriever: Any, reranker: Any, answerer: Any) -> None:
        self.cfg = cfg
        self.analyzer, self.retriever, self.reranker, self.answerer = analyzer, retriever, reranker, answerer

    async def _call(self, handle_method: Any, *args: Any, timeout: float | None = None) -> Any:
        try:
            return await asyncio.wait_for(_awaitable(handle_method.remote(*args)), timeout or self.cfg.request_timeout_s)
        except TimeoutError as exc:
            raise ServiceUnavailable("a backend did not answer in time; try again later") from exc
        except StoreError as exc:
            raise ServiceUnavailable(f"store unavailable: {exc}") from exc

    async def ask(self, question: str, language: str | None) -> tuple[Answer, list[str]]:
        analysis = await self._call(self.analyzer.analyze, question, language)
        result = await self._call(self.retriever.retrieve, analysis)
        ranked = await self._call(self.reranker.rerank, question, result.candidates)
        answer = await self._call(self.answerer.answer, question, analysis, ranked)
        return answer, list(result.paths_used)

    # --- routes -------------------------------------------------------------------------

    @app.post("/chat")
    async def chat(self, req: ChatRequest) -> dict[str, Any]:
        answer, paths = await self.ask(req.message, req.language)
        return _answer_body(answer, req.session_id or uuid.uuid4().hex, paths)

    @app.post("/chat/stream")
    async def chat_stream(self, req: ChatRequest) -> StreamingResponse:
        answer, paths = await self.ask(req.message, req.language)
        body = _answer_body(answer, req.session_id or uuid.uuid4().hex, paths)

        async def events() -> AsyncIterator[str]:
            for delta in _deltas(answer):
                yield _sse({"delta": delta})
            yield _sse({"done": True, **{k: v for k, v in body.items() if k != "content"}})

        return StreamingResponse(events(), media_type="text/event-stream")

    @app.post("/v1/chat/completions", response_model=None)
    async def completions(self, req: CompletionRequest) -> dict[str, Any] | StreamingResponse:
        question = next((m.content for m in reversed(req.messages) if m.role == "user"), "").strip()
        if not question:
            raise HTTPException(400, "messages must contain a non-empty user message")
        answer, paths = await self.ask(question, None)
        cid, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        extra = {"citations": [c.__dict__ for c in answer.citations], "retrieval_paths_used": paths,
                 "disclaimer": answer.disclaimer, "refused": answer.refused}
        if req.stream:
            return StreamingResponse(_completion_stream(answer, cid, created, req.model, extra),
                                     media_type="text/event-stream")
        return {
            "id": cid, "object": "chat.completion", "created": created, "model": req.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(question.split()), "completion_tokens": len(answer.content.split()),
                      "total_tokens": len(question.split()) + len(answer.content.split())},
            **extra,
        }

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

    @app.get("/health/ready")
    async def ready(self) -> dict[str, Any]:
        counts = await self._call(self.retriever.ready, timeout=self.cfg.store_timeout_s)
        return {"status": "ready", "stores": counts}
