"""Questions: ``POST /chat``, ``POST /chat/stream`` (Server-Sent Events), the OpenAI-compatible
``POST /v1/chat/completions`` and ``GET /v1/models``, and ``POST /route`` (the routing decision
alone). No ``from __future__ import annotations``: FastAPI must see the real request-model types.
"""

import time
import uuid
from typing import Any

from fastapi import HTTPException
from fastapi.responses import StreamingResponse

from medgraph.ingest.text import count_tokens
from medgraph.route.types import RouteDecision
from serve.api_app import Caller, IngressBase, app, error_responses, sse_event
from serve.api_models import (
    ChatRequest,
    CompletionRequest,
    RouteRequest,
    model_tier,
    session_of_user,
    tier_models,
)


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


class ChatRoutes(IngressBase):
    @app.post("/chat", responses=error_responses(403, 429, 503))
    async def chat(self, req: ChatRequest, principal: Caller) -> dict[str, Any]:
        """One question, one answer: ``content`` with inline ``[N]`` markers, each resolving to a
        ``citations`` entry (title, source ID, section path, page, snippet, relevance); ``refused``,
        ``disclaimer``, ``language``, ``tier`` and ``model_used``; ``route`` (intent, E, I,
        entities, constraints, cue words); ``grounding`` (how the answer's sentences were
        grounded); ``agent`` (the agent's trace). ``tier`` forces a tier where ``auth.force_tier``
        allows it; a ``session_id`` continues a conversation."""
        request = self._request(principal, req.message, req.language, req.session_id, req.tier)
        await self._consume_quota(principal)
        return await self.ask(request)

    @app.post("/chat/stream", responses=error_responses(403, 429, 503))
    async def chat_stream(self, req: ChatRequest, principal: Caller) -> StreamingResponse:
        """Events: ``{"status": ...}`` (queue position, agent progress) and ``{"hop": {...}}`` (each
        hop of a multi-hop question as it is retrieved), both held until the answer starts unless
        ``progress``; ``{"delta": text}``, then ``{"done": true, ...the /chat body without
        content}``; ``{"error": ..., "status": n}`` for a failure after the response started."""
        request = self._request(principal, req.message, req.language, req.session_id, req.tier)
        await self._consume_quota(principal)

        def render(event: dict[str, Any]) -> list[str]:
            if "done" in event:
                body = event["done"]
                return [sse_event({"done": True, **{k: v for k, v in body.items() if k != "content"}})]
            return [sse_event(event)]

        return await self._stream_response(request, render, hold=not req.progress)

    @app.get("/v1/models", responses=error_responses())
    async def models(self, principal: Caller) -> dict[str, Any]:
        """The models of /v1/chat/completions: ``medgraph`` (routed) and, for callers who may choose
        the tier (``auth.force_tier``), ``medgraph-small|medium|large``."""
        choose = self.auth_cfg.force_tier == "anyone" or (principal is not None and principal.role == "admin")
        names = [m for m, tier in tier_models().items() if tier is None or choose]
        return {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "medgraph"}
                                           for m in names]}

    @app.post("/v1/chat/completions", response_model=None, responses=error_responses(400, 403, 404, 429, 503))
    async def completions(self, req: CompletionRequest, principal: Caller) -> dict[str, Any] | StreamingResponse:
        """OpenAI-compatible chat completion, streamed (Server-Sent Events chunks) or not. The last
        user message is the question and the earlier messages (at most 64) the conversation; a
        signed-in caller's ``user`` names the session. Model ``medgraph`` routes, ``medgraph-small``
        / ``-medium`` / ``-large`` forces a tier; any other model is a 404 in OpenAI's error shape.
        Citations, tier and route come in extra fields; ``usage`` is an estimate
        (``estimated: true``)."""
        tier = model_tier(req.model)
        last_user = max((i for i, m in enumerate(req.messages) if m.role == "user"), default=-1)
        question = req.messages[last_user].content.strip() if last_user >= 0 else ""
        if not question:
            raise HTTPException(400, "messages must contain a non-empty user message")
        history = tuple((m.role, m.content) for m in req.messages[:last_user] if m.role in ("user", "assistant"))
        # an anonymous caller's `user` is not a secret: it names no stored session (the messages carry
        # the conversation); a signed-in user's names one of that user's sessions
        session = session_of_user(req.user, principal.user_id) if principal is not None else None
        request = self._request(principal, question, None, session, tier, history)
        await self._consume_quota(principal)
        cid, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        if req.stream:
            base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": req.model}

            def render(event: dict[str, Any]) -> list[str]:
                if "delta" in event:
                    return [sse_event({**base, "choices": [{"index": 0, "delta": {"content": event["delta"]},
                                                       "finish_reason": None}]})]
                if "done" in event:
                    return [sse_event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                                  **_completion_extra(event["done"])}), sse_event("[DONE]")]
                return []  # progress events have no place in the OpenAI chunk format

            opening = sse_event({**base, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})
            return await self._stream_response(request, render, opening=[opening])
        body = await self.ask(request)
        return {
            "id": cid, "object": "chat.completion", "created": created, "model": req.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": body["content"]},
                         "finish_reason": "stop"}],
            "usage": completion_usage([m.content for m in req.messages], body["content"]),
            **_completion_extra(body),
        }

    @app.post("/route", responses=error_responses(429, 503))
    async def route(self, req: RouteRequest, principal: Caller) -> dict[str, Any]:
        """The routing decision alone: tier, engine, intent, E, I, entities, constraints and the cue
        words that decided it."""
        async with self._work(principal):
            analysis = await self._call(self.analyzer.analyze, req.message, req.language)
            decision: RouteDecision = await self._call(self.router.route, analysis, None)
        return {**decision.to_dict(), "engine": self.tiers.engine_for(decision.tier), "language": analysis.language}
