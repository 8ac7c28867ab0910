"""Any OpenAI-compatible endpoint or cloud provider through litellm (the ``openai`` engine kind).

Input: ``OpenAIEngineConfig`` (a litellm ``model`` name, optional ``api_base``, the *name* of the
environment variable holding the key). Output: a ``ChatModel``. Nothing is held locally, so
``sleep`` / ``wake`` only flip the state the tier manager tracks; ``wake`` checks that a key (or a
self-hosted ``api_base``) is configured, so a missing key is a clear 503, not a provider error.
litellm is imported here only, with its remote model-price download disabled.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from medgraph.config.llm import OpenAIEngineConfig
from medgraph.llm.base import ChatParams, Message, ModelAsleep, ModelUnavailable
from medgraph.observe import tracing


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch of the price map at import
    try:
        import litellm
    except ImportError as exc:
        raise ModelUnavailable("litellm is not installed (pip install 'medgraph[llm]')") from exc
    litellm.suppress_debug_info = True
    return litellm


class OpenAICompatModel:
    def __init__(self, cfg: OpenAIEngineConfig) -> None:
        self.cfg = cfg
        self.name = f"openai:{cfg.model}"
        self._awake = False

    def _api_key(self) -> str | None:
        key = os.environ.get(self.cfg.api_key_env) if self.cfg.api_key_env else None
        if key:
            return key
        if self.cfg.api_base:
            return "none"  # self-hosted servers without auth still expect a key field
        raise ModelUnavailable(f"{self.name}: environment variable {self.cfg.api_key_env} is not set")

    def wake(self) -> None:
        self._api_key()
        _litellm()
        self._awake = True

    def sleep(self) -> None:
        self._awake = False

    def is_sleeping(self) -> bool:
        return not self._awake

    def _call(self, messages: list[Message], params: ChatParams, stream: bool) -> Any:
        if not self._awake:
            raise ModelAsleep(f"{self.name} is asleep")
        c = self.cfg
        kwargs: dict[str, Any] = {
            "model": c.model, "messages": messages, "max_tokens": params.max_tokens,
            "temperature": params.temperature, "timeout": c.timeout_s, "num_retries": c.num_retries,
            "api_key": self._api_key(), "stream": stream,
        }
        if c.api_base:
            kwargs["api_base"] = c.api_base
        if params.stop:
            kwargs["stop"] = list(params.stop)
        return _litellm().completion(**kwargs)

    def generate(self, messages: list[Message], params: ChatParams) -> str:
        with tracing.llm_call(self.cfg.model, messages) as call:
            resp = self._call(messages, params, stream=False)
            text = str(resp.choices[0].message.content or "")
            usage = getattr(resp, "usage", None)  # the provider's reply may leave usage out
            call.done(text, getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))
        return text

    def stream(self, messages: list[Message], params: ChatParams) -> Iterator[str]:
        with tracing.llm_call(self.cfg.model, messages) as call:
            parts: list[str] = []
            for chunk in self._call(messages, params, stream=True):
                if chunk.choices:
                    delta = chunk.choices[0].delta.content
                    if delta:
                        parts.append(str(delta))
                        yield str(delta)
            call.done("".join(parts), None, len(parts))  # one streamed chunk per token
