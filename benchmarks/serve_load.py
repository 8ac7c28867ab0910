"""Load on the Serve app: N concurrent clients for a fixed time against ``POST /chat``.

    python benchmarks/serve_load.py [--clients 1 4 16] [--seconds 60] [--set a.b=c ...]
                                    [--questions data/eval/xl_guidelines.dev.jsonl ...]

Starts the app on the corpus the config points at (with embedded stores and no graph file there
yet, it first builds the bundled demo corpus, ``data/demo``, as ``make demo`` does), then for each
client count runs closed-loop clients over a fixed question mix on 127.0.0.1 and prints JSON:
requests, throughput (req/s), p50 / p99 latency (ms), errors, refusals, and the machine's load
average (1 min) before and after the run, since the CPUs may be shared. Loopback only; every
loop is bounded in time. The daily question quotas (``auth.per_user_daily`` / ``global_daily``;
all anonymous clients share one bucket) are lifted for the run unless ``--keep-quotas``: a load
test exhausts them in seconds. Admission control (``auth.max_concurrent``, ``max_queue``) stays.

The default mix is eight questions asked over and over, so whatever the app keeps between requests
(analyses, query and sentence vectors) is warm. ``--questions`` takes JSONL files instead (each
line's ``text`` or ``question``): their distinct questions in a fixed shuffled order, each asked
once while they last (the clients share one queue), as a stream of new questions would be.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

QUESTIONS = [
    "What are the minimum expectations for hand hygiene in outpatient settings?",
    "Is diabetes a risk factor for stroke?",
    "Does metformin affect outcomes in patients with diabetes and heart failure?",
    "How should injection equipment be handled to prevent infections?",
    "Wie wird Bluthochdruck behandelt?",
    "糖尿病患者的心肌梗死风险",
    "Who won the football world cup in 1998?",
    "Is hypertension associated with myocardial infarction?",
]


class Mix:
    """The questions to ask: ``next()`` is the next one, shared by every client thread."""

    def __init__(self, questions: list[str], cycle: bool) -> None:
        self.questions, self.cycle = questions, cycle
        self._order = itertools.count()
        self._lock = threading.Lock()

    def next(self) -> str | None:
        with self._lock:
            i = next(self._order)
        if i >= len(self.questions) and not self.cycle:
            return None  # every distinct question asked: the run ends early rather than repeat one
        return self.questions[i % len(self.questions)]


def read_questions(paths: list[str]) -> list[str]:
    """The distinct questions of JSONL files (``text`` or ``question``), in a fixed shuffled order."""
    seen: dict[str, None] = {}
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                seen.setdefault(str(row.get("text") or row["question"]).strip(), None)
    questions = list(seen)
    random.Random(0).shuffle(questions)
    return questions


def client(url: str, stop_at: float, out: list[tuple[float, int, bool]], mix: Mix) -> None:
    with httpx.Client(timeout=60) as http:
        while time.monotonic() < stop_at and (question := mix.next()) is not None:
            start = time.perf_counter()
            try:
                r = http.post(f"{url}/chat", json={"message": question})
                refused = r.status_code == 200 and bool(r.json().get("refused"))
                out.append(((time.perf_counter() - start) * 1000, r.status_code, refused))
            except httpx.HTTPError:
                out.append(((time.perf_counter() - start) * 1000, 0, False))


def run(url: str, clients: int, seconds: float, mix: Mix) -> dict[str, Any]:
    results: list[tuple[float, int, bool]] = []
    stop_at = time.monotonic() + seconds
    threads = [threading.Thread(target=client, args=(url, stop_at, results, mix)) for _ in range(clients)]
    load_before = os.getloadavg()[0]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    lat = sorted(r[0] for r in results)
    return {
        "clients": clients, "seconds": round(elapsed, 1), "requests": len(results),
        "throughput_rps": round(len(results) / elapsed, 2),
        "p50_ms": round(statistics.median(lat), 1) if lat else None,
        "p99_ms": round(lat[min(len(lat) - 1, int(0.99 * len(lat)))], 1) if lat else None,
        "errors": sum(1 for r in results if r[1] != 200),
        "refused": sum(1 for r in results if r[2]),
        "load_avg_1m": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
    }


def ensure_corpus(cfg: Any) -> dict[str, Any] | None:
    """Build the demo corpus when the embedded graph store has no file yet; the build summary."""
    if cfg.stores.graph.kind != "embedded" or Path(cfg.stores.graph.path).exists():
        return None
    from jobs.build_corpus import build_corpus

    summary: dict[str, Any] = build_corpus(cfg, [str(REPO / "data" / "demo")])
    if summary.get("status") != "succeeded":
        raise SystemExit(f"building the demo corpus failed: {summary}")
    return summary


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--keep-quotas", action="store_true", help="keep the config's daily question quotas")
    ap.add_argument("--questions", nargs="+", default=None, metavar="JSONL",
                    help="ask these files' distinct questions, each once, instead of the repeated mix")
    args = ap.parse_args()
    from medgraph.config import load_config
    from serve.demo import start

    lifted = [] if args.keep_quotas else ["auth.per_user_daily=1000000000", "auth.global_daily=1000000000"]
    cfg = load_config(args.config, lifted + args.overrides)
    built = ensure_corpus(cfg)
    url = start(cfg)
    for q in QUESTIONS:  # warm every replica once (and, for the repeated mix, what they keep)
        httpx.post(f"{url}/chat", json={"message": q}, timeout=60)
    distinct = read_questions(args.questions) if args.questions else None
    mix = Mix(distinct, cycle=False) if distinct else Mix(QUESTIONS, cycle=True)
    runs = [run(url, n, args.seconds, mix) for n in args.clients]
    out: dict[str, Any] = {"url": url, "questions": len(mix.questions),
                           "mix": "distinct, each asked once" if distinct else "repeated", "runs": runs}
    if built is not None:
        out["corpus_built"] = {k: built.get(k) for k in ("status", "documents_written", "seconds")}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
