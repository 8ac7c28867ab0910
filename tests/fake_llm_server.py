"""An ``LLMServer``-shaped fake for the vLLM tier on CPU (vLLM and ``ray.serve.llm`` need GPUs).

``FakeLLMServer`` has the public methods the gate uses on Ray's ``LLMServer``: ``chat`` (an async
generator: lists of ``data: {...}`` SSE strings when ``request.stream``, else one
``ChatCompletionResponse``-shaped object, as ``LLMServer.chat`` yields them), ``sleep(level=)``,
``wakeup()``, ``is_sleeping()`` and ``reset_prefix_cache()``, and follows the sleep board through
the same ``SleepFollower`` mixin as the real ``MedGraphLLMServer``. A chat while asleep fails, as a
sleeping vLLM engine cannot serve. Deployable with ``serve.deployment`` (tests/integration).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from serve.vllm_engine import SleepFollower


class FakeResponse:
    """Non-streamed reply, shaped like ``ChatCompletionResponse`` (has ``model_dump``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def model_dump(self) -> dict[str, Any]:
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": self.text}}]}


def sse(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload)}\n\n"


class FakeLLMServer(SleepFollower):
    def __init__(
        self,
        model_id: str,
        *,
        reply: str = "Metformin is first-line [1].",
        token_delay_s: float = 0.0,
        sleep_delay_s: float = 0.0,
        fail_sleep: bool = False,
    ) -> None:
        self.model_id, self.reply = model_id, reply
        self.token_delay_s, self.sleep_delay_s, self.fail_sleep = token_delay_s, sleep_delay_s, fail_sleep
        self.sleeping, self.level = False, None
        self.calls: dict[str, int] = {"chat": 0, "sleep": 0, "wakeup": 0, "chat_while_asleep": 0}
        self.in_flight = 0

    async def chat(self, request: Any, raw_request_info: Any = None) -> AsyncIterator[Any]:
        self.calls["chat"] += 1
        if self.sleeping:
            self.calls["chat_while_asleep"] += 1
            raise RuntimeError("engine is sleeping")
        self.in_flight += 1
        try:
            words = self.reply.split(" ")
            if not request.stream:
                await asyncio.sleep(self.token_delay_s * len(words))
                yield FakeResponse(self.reply)
                return
            for i, word in enumerate(words):
                await asyncio.sleep(self.token_delay_s)
                text = word if i == 0 else " " + word
                # LLMServer batches the SSE chunks of a stream into lists
                yield [sse({"choices": [{"index": 0, "delta": {"content": text}}]})]
            yield [sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}), "data: [DONE]\n\n"]
        finally:
            self.in_flight -= 1

    async def sleep(self, **kwargs: Any) -> None:
        self.calls["sleep"] += 1
        await asyncio.sleep(self.sleep_delay_s)
        if self.fail_sleep:
            raise RuntimeError("CUDA error: out of memory while offloading")
        self.sleeping, self.level = True, kwargs.get("level", 1)

    async def wakeup(self, **kwargs: Any) -> None:
        self.calls["wakeup"] += 1
        await asyncio.sleep(self.sleep_delay_s)
        self.sleeping = False

    async def is_sleeping(self) -> bool:
        return self.sleeping

    async def reset_prefix_cache(self) -> None:
        return None

    async def stats(self) -> dict[str, Any]:
        return {
            "sleeping": self.sleeping,
            "level": self.level,
            "calls": dict(self.calls),
            "in_flight": self.in_flight,
        }


class ServedFakeLLMServer(FakeLLMServer):
    """The fake as a Serve deployment: like ``MedGraphLLMServer``, its (async) constructor starts
    following the sleep board of ``sleep_board_model`` on the replica's event loop."""

    async def __init__(self, model_id: str, *, sleep_board_model: str, **kwargs: Any) -> None:  # type: ignore[misc]
        super().__init__(model_id, **kwargs)
        self.follow(sleep_board_model)
