"""A local OpenAI-compatible chat server (a test double for a remote API), for the ``openai`` tier.

It speaks the real wire format (``POST /v1/chat/completions``, JSON or Server-Sent Events chunks)
on 127.0.0.1, so litellm and the OpenAI SDK talk to it exactly as to a provider. What it answers
is a function of the request's messages (``reply``); ``requests`` records every request body.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, StreamingResponse

Reply = Callable[[list[dict[str, Any]]], str]


def cite_first_passage(messages: list[dict[str, Any]]) -> str:
    """Quote the first sentence of passage [1] with [1], then a sentence citing a passage that does not exist."""
    user = next(m["content"] for m in messages if m["role"] == "user")
    match = re.search(r"^\[1\] (?:[^:\n]*: )?(.+)$", user, re.MULTILINE)
    first = re.split(r"(?<=[.!?])\s", match.group(1))[0] if match else "No evidence."
    return f"{first} [1] This sentence cites a passage that does not exist [9]."


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class FakeOpenAIServer:
    def __init__(self, reply: Reply = cite_first_passage, api_key: str | None = None) -> None:
        self.reply, self.api_key = reply, api_key
        self.requests: list[dict[str, Any]] = []
        self.port = _free_port()
        self.app = self._build()
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _build(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions", response_model=None)
        async def completions(request: Request) -> JSONResponse | StreamingResponse:
            if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
                raise HTTPException(401, "invalid api key")
            body = await request.json()
            self.requests.append(body)
            text = self.reply(body["messages"])
            base = {"id": "chatcmpl-fake", "created": int(time.time()), "model": body["model"]}
            if not body.get("stream"):
                return JSONResponse({**base, "object": "chat.completion", "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

            def events():
                chunk = {**base, "object": "chat.completion.chunk"}
                for piece in re.findall(r"\S+\s*", text):
                    yield "data: " + json.dumps({**chunk, "choices": [
                        {"index": 0, "delta": {"content": piece}, "finish_reason": None}]}) + "\n\n"
                yield "data: " + json.dumps({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}) + "\n\n"
                yield "data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")

        return app

    def __enter__(self) -> FakeOpenAIServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("fake OpenAI server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
