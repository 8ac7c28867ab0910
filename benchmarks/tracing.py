"""What tracing costs: ``/chat`` latency and corpus-build throughput with tracing off and on, in one run.

    python benchmarks/tracing.py [--rounds 3] [--requests 20] [--set a.b=c ...]

Needs the tracing backend running (``make tracing-start``; its OTLP endpoint is
``tracing.endpoint``). One local Ray cluster, started with the exporter's settings in its
environment; then, alternating off / on for ``--rounds`` rounds: a build of the bundled demo corpus
into fresh stores (documents/s), and the Serve app on it answering ``--requests`` sequential
questions after a warm-up (p50 / p95 ms). Prints JSON: per setting the medians over the rounds and
the on / off ratios (the goal: at most 1.05 for /chat p50 and build time), with the machine's load
average before and after, since the CPUs may be shared. The hashing embedder keeps the build short,
so tracing's share of it is the largest it can be.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

QUESTIONS = [
    "What are the minimum expectations for hand hygiene in outpatient settings?",
    "Does metformin affect outcomes in patients with diabetes and heart failure?",
    "How should injection equipment be handled to prevent infections?",
    "Is hypertension associated with myocardial infarction?",
]


def _config(root: Path, on: bool, overrides: list[str]) -> Any:
    from medgraph.config import load_config
    from medgraph.testing.net import free_port

    return load_config(REPO / "configs" / "local.yaml", [
        f"stores.graph.path={root}/graph.sqlite", f"stores.vector.path={root}/qdrant", f"app.path={root}/app.sqlite",
        f"serve.port={free_port()}", "embedding.dense=hashing", "auth.per_user_daily=1000000", "auth.global_daily=1000000",
        f"tracing.enabled={'true' if on else 'false'}", *overrides])


def _round(root: Path, on: bool, requests: int, overrides: list[str]) -> dict[str, float]:
    from ray import serve

    from jobs.build_corpus import build_corpus
    from serve.demo import start

    cfg = _config(root, on, overrides)
    started = time.perf_counter()
    summary = build_corpus(cfg, [str(REPO / "data" / "demo")])
    build_s = time.perf_counter() - started
    url = start(cfg)
    try:
        for q in QUESTIONS:  # warm-up: models loaded, caches of the question analysis filled
            httpx.post(f"{url}/chat", json={"message": q}, timeout=120).raise_for_status()
        latencies = []
        for i in range(requests):
            t0 = time.perf_counter()
            httpx.post(f"{url}/chat", json={"message": QUESTIONS[i % len(QUESTIONS)]}, timeout=120).raise_for_status()
            latencies.append(1000 * (time.perf_counter() - t0))
    finally:
        serve.shutdown()
    latencies.sort()
    return {"build_s": build_s, "docs_per_s": summary["documents_written"] / build_s,
            "chat_p50_ms": statistics.median(latencies), "chat_p95_ms": latencies[int(0.95 * (len(latencies) - 1))]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks/tracing.py", description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="A.B=C")
    args = ap.parse_args(argv)
    from jobs.ray_runtime import init_ray
    from medgraph.config import load_config
    from medgraph.observe.tracing import exporter_environment

    cfg = load_config(REPO / "configs" / "local.yaml", args.overrides)
    try:
        httpx.get(cfg.tracing.endpoint.removesuffix("/v1/traces") + "/healthz", timeout=5).raise_for_status()
    except httpx.HTTPError as exc:
        print(f"no tracing backend at {cfg.tracing.endpoint} (make tracing-start): {exc}", file=sys.stderr)
        return 2
    os.environ.update(exporter_environment(cfg.tracing))  # before Ray starts: its processes inherit it
    init_ray(cfg.ray)
    load_before = os.getloadavg()[0]
    runs: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
    with tempfile.TemporaryDirectory(prefix="medgraph-tracing-") as tmp:
        for r in range(args.rounds):
            for setting in ("off", "on") if r % 2 == 0 else ("on", "off"):
                root = Path(tmp) / f"{setting}-{r}"
                runs[setting].append(_round(root, setting == "on", args.requests, args.overrides))
    med = {s: {k: round(statistics.median(x[k] for x in rs), 2) for k in rs[0]} for s, rs in runs.items()}
    print(json.dumps({
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rounds": args.rounds, "requests": args.requests,
        "off": med["off"], "on": med["on"],
        "ratio_on_off": {"chat_p50": round(med["on"]["chat_p50_ms"] / med["off"]["chat_p50_ms"], 3),
                         "chat_p95": round(med["on"]["chat_p95_ms"] / med["off"]["chat_p95_ms"], 3),
                         "build_time": round(med["on"]["build_s"] / med["off"]["build_s"], 3)},
        "per_round": runs, "load_avg_1m": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
