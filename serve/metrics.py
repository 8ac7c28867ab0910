"""Prometheus text exposition of the LLM tiers' stats (``GET /metrics`` on the ingress).

Input: ``{engine: TierManager stats}`` as returned by ``TierService.stats``. Output: metrics in the
Prometheus text format 0.0.4: wake / sleep counts, last and p50 latencies, memory freed by the last
sleep, requests, requests in flight and whether the engine is asleep, each labelled by engine.
(Each tier replica also records Ray metrics, exported by Ray's own metrics endpoint.)
"""

from __future__ import annotations

from typing import Any

_GAUGES: list[tuple[str, str, str, Any]] = [
    ("medgraph_tier_wakes_total", "counter", "engine wakes (model loads)", lambda s: s.get("wakes")),
    ("medgraph_tier_sleeps_total", "counter", "engine sleeps (model releases)", lambda s: s.get("sleeps")),
    ("medgraph_tier_requests_total", "counter", "requests served by the engine", lambda s: s.get("requests")),
    ("medgraph_tier_in_flight", "gauge", "requests in flight", lambda s: s.get("in_flight")),
    ("medgraph_tier_asleep", "gauge", "1 while the engine sleeps",
     lambda s: None if "state" not in s or "wakes" not in s else int(s["state"] == "asleep")),
    ("medgraph_tier_wake_seconds_last", "gauge", "latency of the last wake", lambda s: (s.get("wake_s") or {}).get("last")),
    ("medgraph_tier_wake_seconds_p50", "gauge", "median wake latency (last 100)", lambda s: (s.get("wake_s") or {}).get("p50")),
    ("medgraph_tier_sleep_seconds_last", "gauge", "latency of the last sleep", lambda s: (s.get("sleep_s") or {}).get("last")),
    ("medgraph_tier_sleep_seconds_p50", "gauge", "median sleep latency (last 100)", lambda s: (s.get("sleep_s") or {}).get("p50")),
    ("medgraph_tier_memory_freed_bytes", "gauge", "resident memory freed by the last sleep",
     lambda s: s.get("memory_freed_bytes")),
    ("medgraph_tier_resident_bytes", "gauge", "resident memory of the replica", lambda s: s.get("rss_bytes")),
]


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus_text(engines: dict[str, dict[str, Any]]) -> str:
    lines: list[str] = []
    for metric, kind, help_text, get in _GAUGES:
        samples = [(name, get(stats)) for name, stats in sorted(engines.items())]
        samples = [(n, v) for n, v in samples if v is not None]
        if not samples:
            continue
        lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} {kind}"]
        lines += [f'{metric}{{engine="{_label(n)}"}} {float(v):g}' for n, v in samples]
    return "\n".join(lines) + "\n"
