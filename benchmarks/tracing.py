"""What tracing costs: ``/chat`` latency and corpus-build throughput with tracing off and on, in one run.

    python benchmarks/tracing.py [--rounds 3] [--requests 20] [--sink phoenix|null] [--out FILE] [--set a.b=c ...]
    python benchmarks/tracing.py --span-cost      # one span's cost, off and on, in this process
    python benchmarks/tracing.py --interleaved --requests 300 [--sink null]

``--sink phoenix`` (default) exports to the tracing backend (``make tracing-start``; its OTLP
endpoint is ``tracing.endpoint``), which then runs on the same CPUs as the app; ``--sink null``
exports to a receiver in this process that reads and discards every batch, which measures what
tracing costs the app itself, as with a backend on another machine. One local Ray cluster, started with the exporter's settings in its
environment; then, alternating off / on for ``--rounds`` rounds: a build of the bundled demo corpus
into fresh stores (documents/s), and the Serve app on it answering ``--requests`` sequential
questions after a warm-up (p50 / p95 ms). Prints JSON: per setting the medians over the rounds and
the on / off ratios (the goal: at most 1.05 for /chat p50 and build time), with the machine's load
average before and after, since the CPUs may be shared. The hashing embedder keeps the build short,
so tracing's share of it is the largest it can be.

``--interleaved``: the rounds above compare separate app starts, which on a shared machine differ
by more than tracing costs. Here one app runs with tracing on and ``tracing.sample_ratio`` 0.5, so
Serve's proxy records about every other request and leaves the rest out (their spans are OpenTelemetry's
non-recording ones, as with tracing off); a response carries ``X-Trace-Id`` only when recorded.
``--requests`` sequential questions, interleaved by chance in the same minutes, give the p50 / p95
of recorded and unrecorded requests and their ratio: what recording and exporting a request's
spans costs it, with the same app, caches and machine load on both sides.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import statistics
import sys
import tempfile
import threading
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
    p50, p95 = _p50_p95(latencies)
    return {"build_s": build_s, "docs_per_s": summary["documents_written"] / build_s,
            "chat_p50_ms": p50, "chat_p95_ms": p95}


def _p50_p95(ms: list[float]) -> tuple[float, float]:
    xs = sorted(ms)
    return statistics.median(xs), xs[int(0.95 * (len(xs) - 1))]


def _emit(report: dict[str, Any], out: Path | None) -> None:
    """Print the report as JSON, and write it to ``out`` too (Ray's logs share stdout)."""
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        out.write_text(text + "\n")


def interleaved(root: Path, requests: int, overrides: list[str]) -> dict[str, Any]:
    """One traced app, half its requests sampled: latency of recorded against unrecorded requests."""
    from ray import serve

    from jobs.build_corpus import build_corpus
    from serve.demo import start

    cfg = _config(root, True, [*overrides, "tracing.sample_ratio=0.5"])
    build_corpus(cfg, [str(REPO / "data" / "demo")])
    url = start(cfg)
    times: dict[str, list[float]] = {"recorded": [], "unrecorded": []}
    try:
        for q in QUESTIONS * 2:  # warm-up
            httpx.post(f"{url}/chat", json={"message": q}, timeout=120).raise_for_status()
        for i in range(requests):
            t0 = time.perf_counter()
            r = httpx.post(f"{url}/chat", json={"message": QUESTIONS[i % len(QUESTIONS)]}, timeout=120)
            elapsed = 1000 * (time.perf_counter() - t0)
            r.raise_for_status()
            times["recorded" if r.headers.get("x-trace-id") else "unrecorded"].append(elapsed)
    finally:
        serve.shutdown()

    def stats(xs: list[float]) -> dict[str, float]:
        p50, p95 = _p50_p95(xs)
        return {"n": len(xs), "p50_ms": round(p50, 2), "p95_ms": round(p95, 2)}

    rec, unrec = stats(times["recorded"]), stats(times["unrecorded"])
    return {"recorded": rec, "unrecorded": unrec,
            "ratio_recorded_unrecorded": {"chat_p50": round(rec["p50_ms"] / unrec["p50_ms"], 3),
                                          "chat_p95": round(rec["p95_ms"] / unrec["p95_ms"], 3)}}


class _Discard(http.server.BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that reads each batch and throws it away."""

    def do_POST(self) -> None:  # noqa: N802 - the handler's name is the HTTP method's
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return None


def null_sink() -> str:
    """Start the discarding receiver on a free port; its traces URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Discard)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1/traces"


def span_cost(n: int = 1_500, repeats: int = 10) -> dict[str, float]:
    """Microseconds per span in this process: non-recording (tracing off) and recording through
    the real exporter (a batch processor over OTLP/HTTP to the discarding receiver), same run; the
    second includes serialising and sending each span in the exporter's thread (flushed)."""
    from opentelemetry.sdk.trace import TracerProvider

    from medgraph.observe import tracing

    def per_span(tracer: Any, flush: Any = None) -> float:
        """Median over ``repeats`` batches of ``n`` spans (fewer than the exporter's queue holds)."""
        costs = []
        for _ in range(repeats):
            started = time.perf_counter()
            for i in range(n):
                with tracer.start_as_current_span("agent.node", attributes={"i": i, "node": "retrieve"}):
                    pass
            if flush is not None:
                flush()
            costs.append(1e6 * (time.perf_counter() - started) / n)
        return statistics.median(costs)

    off = per_span(tracing.tracer())  # no provider set here: OpenTelemetry's no-op tracer
    os.environ[tracing.ENDPOINT_ENV] = null_sink()
    provider = TracerProvider()
    for processor in tracing.span_processors():
        provider.add_span_processor(processor)
    on = per_span(provider.get_tracer("bench"), lambda: provider.force_flush(30_000))
    provider.shutdown()
    return {"spans": n * repeats, "off_us": round(off, 2), "on_us_with_export": round(on, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks/tracing.py", description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--sink", choices=("phoenix", "null"), default="phoenix")
    ap.add_argument("--span-cost", action="store_true",
                    help="only the cost of one span, off and on (no Ray, no app): microseconds")
    ap.add_argument("--interleaved", action="store_true",
                    help="one traced app sampling half its requests: recorded against unrecorded requests")
    ap.add_argument("--out", type=Path, help="also write the JSON here (Ray's logs share stdout)")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="A.B=C")
    args = ap.parse_args(argv)
    if args.span_cost:
        print(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **span_cost(),
                          "load_avg_1m": round(os.getloadavg()[0], 2)}))
        return 0
    if args.sink == "null":
        args.overrides.append(f"tracing.endpoint={null_sink()}")
    from jobs.ray_runtime import init_ray
    from medgraph.config import load_config
    from medgraph.observe.tracing import exporter_environment

    cfg = load_config(REPO / "configs" / "local.yaml", args.overrides)
    if args.sink == "phoenix":
        try:
            httpx.get(cfg.tracing.endpoint.removesuffix("/v1/traces") + "/healthz", timeout=5).raise_for_status()
        except httpx.HTTPError as exc:
            print(f"no tracing backend at {cfg.tracing.endpoint} (make tracing-start): {exc}", file=sys.stderr)
            return 2
    os.environ.update(exporter_environment(cfg.tracing))  # before Ray starts: its processes inherit it
    init_ray(cfg.ray)
    load_before = os.getloadavg()[0]
    if args.interleaved:
        with tempfile.TemporaryDirectory(prefix="medgraph-tracing-") as tmp:
            result = interleaved(Path(tmp), args.requests, args.overrides)
        _emit({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "sink": args.sink,
               "mode": "interleaved", "requests": args.requests, **result,
               "load_avg_1m": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)}}, args.out)
        return 0
    runs: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
    with tempfile.TemporaryDirectory(prefix="medgraph-tracing-") as tmp:
        for r in range(args.rounds):
            for setting in ("off", "on") if r % 2 == 0 else ("on", "off"):
                root = Path(tmp) / f"{setting}-{r}"
                runs[setting].append(_round(root, setting == "on", args.requests, args.overrides))
    med = {s: {k: round(statistics.median(x[k] for x in rs), 2) for k in rs[0]} for s, rs in runs.items()}
    _emit({
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "sink": args.sink, "rounds": args.rounds,
        "requests": args.requests,
        "off": med["off"], "on": med["on"],
        "ratio_on_off": {"chat_p50": round(med["on"]["chat_p50_ms"] / med["off"]["chat_p50_ms"], 3),
                         "chat_p95": round(med["on"]["chat_p95_ms"] / med["off"]["chat_p95_ms"], 3),
                         "build_time": round(med["on"]["build_s"] / med["off"]["build_s"], 3)},
        "per_round": runs, "load_avg_1m": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
    }, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
