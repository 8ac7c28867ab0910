"""The chat-model interface every model-backed tier implements (llama.cpp, vLLM, OpenAI-compatible).

Input: chat messages (``[{"role": ..., "content": ...}]``) and ``ChatParams``. Output: the reply
text, whole (``generate``) or as text deltas (``stream``). ``sleep`` frees what the model holds
(weights, KV cache, GPU memory) and ``wake`` restores it; both are idempotent. A call on a
sleeping model raises ``ModelAsleep``: the tier manager (serve/tiers.py) wakes models on demand,
so reaching a sleeping model is a bug, not a reason to load silently.
"""

from __future__ import annotations

import ctypes
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger(__name__)

Message = dict[str, str]


class ModelAsleep(RuntimeError):
    """The model was called while asleep (the caller must ``wake`` it first)."""


class ModelUnavailable(RuntimeError):
    """The model cannot run here (missing package, file, GPU or endpoint), with the reason."""


@dataclass(frozen=True)
class ChatParams:
    max_tokens: int = 256
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    seed: int | None = 0


class ChatModel(Protocol):
    name: str  # what answered: shown as ``model_used``

    def generate(self, messages: list[Message], params: ChatParams) -> str: ...

    def stream(self, messages: list[Message], params: ChatParams) -> Iterator[str]: ...

    def sleep(self) -> None: ...

    def wake(self) -> None: ...

    def is_sleeping(self) -> bool: ...


def resident_memory_bytes() -> int:
    """This process's resident set size (Linux ``/proc``; 0 where unavailable)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def release_heap() -> None:
    """Return freed heap pages to the OS (glibc ``malloc_trim``), so a sleep shows in RSS."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        log.debug("malloc_trim unavailable")
