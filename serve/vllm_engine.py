"""The vLLM tier runtime on a GPU cluster: an ``LLMServer`` deployment from ``ray.serve.llm``.

Input: a ``VLLMEngineConfig``. Output: ``build_llm_server`` → the ``LLMServer`` application
(``LLMConfig`` from ``medgraph.llm.vllm_config``: model, accelerator type, tensor parallelism,
``enable_sleep_mode``, autoscaling), and ``VLLMChatModel``, the ``ChatModel`` the tier's
``TierService`` uses to talk to it. That ``TierService`` is the tier's gate (one replica): it
counts requests in flight for the whole model and sleeps / wakes **every** ``LLMServer`` replica
(a broadcast), so one GPU pool can hold several sleeping models.

This is the only module that imports ``ray.serve.llm`` (it imports only where vLLM is installed).
It needs CUDA GPUs, so its runtime is not exercised on the CPU-only CI; the configuration it
builds is (tests/unit/test_vllm_config.py).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

from medgraph.config.llm import VLLMEngineConfig
from medgraph.llm.base import ChatParams, Message, ModelAsleep
from medgraph.llm.vllm_config import llm_config_kwargs, sleep_kwargs

log = logging.getLogger(__name__)


def build_llm_server(cfg: VLLMEngineConfig, name: str) -> Any:
    """The ``LLMServer`` application of engine ``name`` (deployment ``vllm-<name>:...``)."""
    from ray.serve.llm import LLMConfig, build_llm_deployment

    return build_llm_deployment(LLMConfig(**llm_config_kwargs(cfg, name)), name_prefix=f"vllm-{name}:")


def _broadcast(handle: Any, method: str, **kwargs: Any) -> list[Any]:
    """Call ``method`` on every replica of the deployment (Ray Serve LLM's control-plane broadcast)."""
    from ray.llm._internal.serve.utils.broadcast import broadcast

    return list(broadcast(handle, method, kwargs=kwargs) or [])


def _chunks_text(item: Any) -> Iterator[str]:
    """Text deltas of one streamed ``LLMServer.chat`` item (SSE strings, lists of them, or objects)."""
    if isinstance(item, list):
        for sub in item:
            yield from _chunks_text(sub)
        return
    if isinstance(item, str):
        for line in item.splitlines():
            line = line.strip()
            if not line.startswith("data:") or line.endswith("[DONE]"):
                continue
            payload = json.loads(line[5:])
            if "error" in payload:
                raise RuntimeError(f"vLLM error: {payload['error']}")
            for choice in payload.get("choices", []):
                text = (choice.get("delta") or {}).get("content") or (choice.get("message") or {}).get("content")
                if text:
                    yield str(text)
        return
    dumped = item.model_dump() if hasattr(item, "model_dump") else item
    if isinstance(dumped, dict):
        if dumped.get("error"):
            raise RuntimeError(f"vLLM error: {dumped['error']}")
        for choice in dumped.get("choices", []):
            text = (choice.get("message") or {}).get("content") or (choice.get("delta") or {}).get("content")
            if text:
                yield str(text)


class VLLMChatModel:
    """``ChatModel`` over an ``LLMServer`` deployment handle (blocking calls, run in worker threads)."""

    def __init__(self, handle: Any, cfg: VLLMEngineConfig) -> None:
        if handle is None:
            raise ValueError("VLLMChatModel needs the LLMServer deployment handle")
        self.handle, self.cfg = handle, cfg
        self.name = f"vllm:{cfg.model_id}"
        self._sleeping = False  # vLLM engines start awake

    def sleep(self) -> None:
        _broadcast(self.handle, "sleep", **sleep_kwargs(self.cfg))
        self._sleeping = True

    def wake(self) -> None:
        _broadcast(self.handle, "wakeup")
        self._sleeping = False

    def is_sleeping(self) -> bool:
        return self._sleeping

    def _request(self, messages: list[Message], params: ChatParams, stream: bool) -> Any:
        from ray.llm._internal.serve.core.configs.openai_api_models import ChatCompletionRequest

        return ChatCompletionRequest(model=self.cfg.model_id, messages=messages, max_tokens=params.max_tokens,
                                     temperature=params.temperature, stop=list(params.stop) or None,
                                     seed=params.seed, stream=stream)

    def stream(self, messages: list[Message], params: ChatParams) -> Iterator[str]:
        if self._sleeping:
            raise ModelAsleep(f"{self.name} is asleep")
        for item in self.handle.options(stream=True).chat.remote(self._request(messages, params, True)):
            yield from _chunks_text(item)

    def generate(self, messages: list[Message], params: ChatParams) -> str:
        if self._sleeping:
            raise ModelAsleep(f"{self.name} is asleep")
        parts = []
        for item in self.handle.options(stream=True).chat.remote(self._request(messages, params, False)):
            parts.extend(_chunks_text(item))
        return "".join(parts)
