"""A GGUF model on CPU through llama-cpp-python (the ``llamacpp`` engine kind).

Input: ``LlamaCppEngineConfig`` (``model_path``: a ``.gguf`` file or ``pkg:<module>``, a Python
package whose ``assemble()`` writes the checksum-verified GGUF and returns its path). Output: a
``ChatModel``. ``wake`` loads the model (mmap'd weights + KV cache of ``n_ctx``); ``sleep`` closes
it, so its memory goes back to the OS (measured: see ``benchmarks/tiers.py``). The chat template
stored in the GGUF formats messages unless ``chat_format`` names one. llama.cpp is imported only
here, on first wake. One generation at a time per model (a llama.cpp context is not thread-safe).
"""

from __future__ import annotations

import gc
import importlib
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medgraph.config.llm import LlamaCppEngineConfig
from medgraph.llm.base import ChatParams, Message, ModelAsleep, ModelUnavailable, release_heap
from medgraph.observe import tracing

log = logging.getLogger(__name__)


def resolve_model_path(spec: str) -> Path:
    """A ``.gguf`` path, or ``pkg:<module>``: the module's ``assemble()`` result (checksum-verified)."""
    if spec.startswith("pkg:"):
        name = spec[4:]
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise ModelUnavailable(f"model package {name!r} is not installed (pip install {name.replace('_', '-')})") from exc
        assemble = getattr(module, "assemble", None)
        if assemble is None:
            raise ModelUnavailable(f"model package {name!r} has no assemble() function")
        path = Path(assemble())
    else:
        path = Path(spec).expanduser()
    if not path.is_file():
        raise ModelUnavailable(f"GGUF model file not found: {path}")
    return path


def merge_system(messages: list[Message]) -> list[Message]:
    """Fold system messages into the first user message (for chat formats without a system role)."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if system and rest and rest[0]["role"] == "user":
        rest[0]["content"] = f"{system}\n\n{rest[0]['content']}"
    elif system:
        rest.insert(0, {"role": "user", "content": system})
    return rest


class LlamaCppModel:
    def __init__(self, cfg: LlamaCppEngineConfig, name: str = "llamacpp") -> None:
        self.cfg = cfg
        self._llm: Any = None
        self._path: Path | None = None
        self._lock = threading.RLock()
        self.name = name
        self.load_seconds = 0.0

    def _load(self) -> Any:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ModelUnavailable("llama-cpp-python is not installed (pip install 'medgraph[llm]')") from exc
        if self._path is None:
            self._path = resolve_model_path(self.cfg.model_path)
            self.name = f"llamacpp:{self._path.stem}"
        c = self.cfg
        return Llama(model_path=str(self._path), n_ctx=c.n_ctx, n_threads=c.n_threads, n_batch=c.n_batch,
                     seed=c.seed, chat_format=c.chat_format, use_mmap=c.use_mmap, verbose=False)

    def wake(self) -> None:
        with self._lock:
            if self._llm is None:
                start = time.perf_counter()
                self._llm = self._load()
                self.load_seconds = time.perf_counter() - start
                log.info("loaded %s in %.2f s", self._path, self.load_seconds)

    def sleep(self) -> None:
        with self._lock:
            if self._llm is None:
                return
            llm, self._llm = self._llm, None
            close = getattr(llm, "close", None)
            if close is not None:
                close()
            del llm
            gc.collect()
            release_heap()

    def is_sleeping(self) -> bool:
        return self._llm is None

    def _require(self) -> Any:
        if self._llm is None:
            raise ModelAsleep(f"{self.name} is asleep")
        return self._llm

    def _kwargs(self, messages: list[Message], params: ChatParams, stream: bool) -> dict[str, Any]:
        if self.cfg.merge_system:
            messages = merge_system(messages)
        return {"messages": messages, "max_tokens": params.max_tokens, "temperature": params.temperature,
                "stop": list(params.stop) or None, "seed": params.seed, "stream": stream}

    def generate(self, messages: list[Message], params: ChatParams) -> str:
        with tracing.llm_call(self.name, messages) as call, self._lock:
            out = self._require().create_chat_completion(**self._kwargs(messages, params, False))
            text = str(out["choices"][0]["message"].get("content") or "")
            usage = out.get("usage") or {}
            call.done(text, usage.get("prompt_tokens"), usage.get("completion_tokens"))
        return text

    def stream(self, messages: list[Message], params: ChatParams) -> Iterator[str]:
        with tracing.llm_call(self.name, messages) as call, self._lock:
            parts: list[str] = []
            for chunk in self._require().create_chat_completion(**self._kwargs(messages, params, True)):
                delta = chunk["choices"][0].get("delta", {}).get("content")
                if delta:
                    parts.append(str(delta))
                    yield str(delta)
            call.done("".join(parts), None, len(parts))  # one streamed chunk per token
