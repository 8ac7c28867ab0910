"""Access control of the HTTP API: API keys and roles, daily quotas, and a concurrency gate.

``ApiKeyStore`` verifies ``mgk_...`` keys (stored hashed) into a ``Principal``;
``QuotaTracker`` counts requests per user and in total per UTC day; ``ConcurrencyGate`` caps the
questions answered at once and queues the rest in order. ``medgraph.auth.redis_state`` shares
the quotas and the gate between replicas through Redis (``make_quota(cfg)``, ``make_gate(cfg)``:
the in-process versions when ``cfg.redis.url`` is None). Operators use ``python -m medgraph.auth``.
"""

from medgraph.auth.gate import ConcurrencyGate, GateFull
from medgraph.auth.keys import ANONYMOUS, ApiKeyStore, Principal, new_key
from medgraph.auth.quota import QuotaExceeded, QuotaTracker

__all__ = [
    "ANONYMOUS",
    "ApiKeyStore",
    "ConcurrencyGate",
    "GateFull",
    "Principal",
    "QuotaExceeded",
    "QuotaTracker",
    "new_key",
]
