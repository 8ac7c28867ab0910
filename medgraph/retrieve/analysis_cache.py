"""Caches of query analyses: in process (LRU) and shared by every analyzer replica (Redis).

Input: a key ``(normalised question, language)`` and the ``QueryAnalysis`` computed for it.
Output: the analysis for a key seen before, or None. ``QueryAnalyzer`` asks its cache before NER
+ linking and stores what it computed.

- ``LruAnalysisCache``: the last ``size`` analyses of this process (the default).
- ``RedisAnalysisCache``: JSON of the analysis (``QueryAnalysis.to_dict``, never pickle) under
  ``<prefix>:qa:<sha256(version|language|question)>`` for ``ttl_s`` seconds. ``version``
  (``analysis_version``) names the vocabulary and the NER / linking / translation settings,
  so a rebuilt vocabulary or a changed setting never serves an analysis made with the old one.
- ``TieredAnalysisCache``: the LRU first, then Redis (a Redis hit is kept in the LRU), storing in
  both; it counts ``local_hits``, ``shared_hits`` and ``misses``.

Redis down, or slower than ``timeout_s``: the shared cache is skipped (a lookup is a miss and
nothing is stored), so the analyzer computes locally; the outage is logged once and Redis is
tried again 5 s after the last failure. An entry that does not parse is a miss.
``make_analysis_cache(cfg, version)`` returns the LRU alone when ``cfg.redis.url`` is None or
``cfg.redis.cache_ttl_s`` is 0.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any, Protocol

from medgraph.lru import Lru
from medgraph.retrieve.types import QueryAnalysis

if TYPE_CHECKING:
    import redis

    from medgraph.config import MedGraphConfig

log = logging.getLogger(__name__)

Key = tuple[str, str]  # (normalised question, language)


class AnalysisCache(Protocol):
    def get(self, key: Key) -> QueryAnalysis | None: ...

    def put(self, key: Key, analysis: QueryAnalysis) -> None: ...


class LruAnalysisCache:
    """The ``size`` most recently used analyses (0: none); safe across threads."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._items: Lru[Key, QueryAnalysis] = Lru(size)

    def get(self, key: Key) -> QueryAnalysis | None:
        return self._items.get(key)

    def put(self, key: Key, analysis: QueryAnalysis) -> None:
        self._items.put(key, analysis)

    def __len__(self) -> int:
        return len(self._items)


class RedisAnalysisCache:
    """Analyses shared through Redis (see the module docstring); never raises on Redis errors."""

    def __init__(self, client: redis.Redis, version: str, ttl_s: int, prefix: str = "medgraph",
                 retry_s: float = 5.0) -> None:
        from medgraph.auth.redis_client import Outage

        self.client, self.version, self.ttl_s, self.prefix = client, version, int(ttl_s), prefix
        self.outage = Outage("the query-analysis cache", retry_s)

    def key(self, key: Key) -> str:
        text, language = key
        digest = hashlib.sha256(f"{self.version}|{language}|{text}".encode()).hexdigest()
        return f"{self.prefix}:qa:{digest}"

    def get(self, key: Key) -> QueryAnalysis | None:
        raw = self._call("get", self.key(key))
        if raw is None:
            return None
        try:
            return QueryAnalysis.from_dict(json.loads(raw))
        except (ValueError, TypeError, KeyError) as exc:
            log.warning("unreadable query analysis in redis (%s); recomputing", exc)
            return None

    def put(self, key: Key, analysis: QueryAnalysis) -> None:
        if self.ttl_s > 0:
            self._call("set", self.key(key), json.dumps(analysis.to_dict(), ensure_ascii=False), ex=self.ttl_s)

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        from medgraph.auth.redis_client import redis_errors

        if not self.outage.available():
            return None
        try:
            result = getattr(self.client, method)(*args, **kwargs)
        except redis_errors() as exc:
            self.outage.failed(exc)
            return None
        self.outage.succeeded()
        return result

    def close(self) -> None:
        self.client.close()


class TieredAnalysisCache:
    """``local`` first, then ``shared``; puts go to both."""

    def __init__(self, local: LruAnalysisCache, shared: RedisAnalysisCache) -> None:
        self.local, self.shared = local, shared
        self.local_hits = self.shared_hits = self.misses = 0

    def get(self, key: Key) -> QueryAnalysis | None:
        found = self.local.get(key)
        if found is not None:
            self.local_hits += 1
            return found
        found = self.shared.get(key)
        if found is not None:
            self.shared_hits += 1
            self.local.put(key, found)
            return found
        self.misses += 1
        return None

    def put(self, key: Key, analysis: QueryAnalysis) -> None:
        self.local.put(key, analysis)
        self.shared.put(key, analysis)


ANALYSIS_FORMAT = 4  # bump when QueryAnalysis gains or changes a field (2: the translations' gloss groups; 3: bridged; 4: German hyphenated compounds and lower-case lemmas)


def analysis_version(cfg: MedGraphConfig, vocab: Any) -> str:
    """A short hash of what an analysis depends on: the vocabulary's manifest (its fingerprint
    and counts), the NER, linking and translation settings and the analysis format."""
    parts = {
        "vocab": getattr(vocab, "manifest", {}),
        "ner": cfg.ner.model_dump(mode="json"),
        "linking": cfg.linking.model_dump(mode="json"),
        "languages": list(cfg.retrieval.languages),
        "names_per_entity": cfg.retrieval.names_per_entity,
        "glosses_per_word": cfg.retrieval.glosses_per_word,
        "format": ANALYSIS_FORMAT,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def make_analysis_cache(cfg: MedGraphConfig, version: str) -> LruAnalysisCache | TieredAnalysisCache:
    """``LruAnalysisCache(cfg.retrieval.analysis_cache)``, in front of Redis when ``cfg.redis.url``
    is set and ``cfg.redis.cache_ttl_s`` > 0; ``version`` from ``analysis_version``."""
    local = LruAnalysisCache(cfg.retrieval.analysis_cache)
    r = cfg.redis
    if not r.url or r.cache_ttl_s <= 0:
        return local
    from medgraph.auth.redis_client import connect

    return TieredAnalysisCache(local, RedisAnalysisCache(connect(r.url, r.password_env, r.timeout_s), version,
                                                         r.cache_ttl_s, r.prefix))
