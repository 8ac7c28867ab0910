"""A bounded, thread-safe map that forgets its least recently used entries first.

``Lru(size)``: ``get(key)`` (None when absent; a hit counts as a use), ``put(key, value)`` (the
oldest entries beyond ``size`` leave; ``size`` 0 keeps nothing), ``len()``. The serving caches use
it: analyses (``medgraph.retrieve.analysis_cache``), query vectors and passage terms
(``medgraph.retrieve.retriever``), dense vectors by text (``medgraph.embed.cache``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Lru(Generic[K, V]):
    def __init__(self, size: int) -> None:
        if size < 0:
            raise ValueError(f"an LRU size must be >= 0, got {size}")
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        if not self.size:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)
