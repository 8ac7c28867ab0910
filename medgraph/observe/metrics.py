"""Prometheus metrics per stage, recorded as Ray metrics (exported by Ray's metrics endpoint on
every node, summed over the replicas and actors of all nodes; ``cluster/grafana/medgraph.json``
charts them).

- ``medgraph_agent_node_seconds{node}``: each agent node's latency per request (guard_input,
  analyse, semantic, ... generate);
- ``medgraph_retrieval_path_seconds{path}``: each retrieval path's latency (embed, dense, sparse,
  ppr, ..., features);
- ``medgraph_gate_wait_seconds``: the time a request waits at the concurrency gate for its slot;
- ``medgraph_build_batch_seconds{stage}`` and ``medgraph_build_rows_total{stage}``: a corpus
  build's batches per stage (parse, ocr_and_chunk, extract, embed, write) and the rows they
  handled, hence its throughput per stage.

Outside a Ray worker (the in-process agent, a unit test) nothing is recorded. The metrics are
created once per process, on first use.
"""

from __future__ import annotations

import threading
from typing import Any

# latency buckets (seconds) from a cache hit to a slow generation
SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0]
BATCH_SECONDS = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0]
# name -> (kind, description, tag keys, buckets); what the dashboard's queries may name
METRICS: dict[str, tuple[str, str, tuple[str, ...], list[float] | None]] = {
    "medgraph_agent_node_seconds": ("histogram", "latency of one agent node in one request", ("node",), SECONDS),
    "medgraph_retrieval_path_seconds": ("histogram", "latency of one retrieval path in one request", ("path",), SECONDS),
    "medgraph_gate_wait_seconds": ("histogram", "wait at the concurrency gate before a request runs", (), SECONDS),
    "medgraph_build_batch_seconds": ("histogram", "one corpus-build batch in one stage", ("stage",), BATCH_SECONDS),
    "medgraph_build_rows_total": ("counter", "rows a corpus-build stage handled", ("stage",), None),
}

_lock = threading.Lock()
_made: dict[str, Any] = {}


def _metric(name: str) -> Any | None:
    """The Ray metric ``name`` of this process, or None outside a Ray worker."""
    import ray

    if not ray.is_initialized():
        return None
    with _lock:
        if name not in _made:
            from ray.util import metrics

            kind, description, tags, buckets = METRICS[name]
            _made[name] = (metrics.Histogram(name, description, boundaries=list(buckets or ()), tag_keys=tags)
                           if kind == "histogram" else metrics.Counter(name, description, tag_keys=tags))
        return _made[name]


def observe(name: str, seconds: float, **tags: str) -> None:
    """One latency sample of the histogram ``name`` (see ``METRICS``)."""
    metric = _metric(name)
    if metric is not None:
        metric.observe(seconds, tags=tags or None)


def count(name: str, n: int, **tags: str) -> None:
    """Add ``n`` to the counter ``name``."""
    metric = _metric(name)
    if metric is not None and n > 0:
        metric.inc(n, tags=tags or None)
