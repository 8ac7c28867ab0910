"""Start the Serve application on a local Ray cluster, ask a question over HTTP, print the answer.

    python -m serve.demo --config configs/local.yaml --question "..." [--keep-running]

The corpus must be built first (``python -m jobs.build_corpus``). It prints the web interface's
address (``http://<serve.host>:<serve.port>/``). ``--keep-running`` leaves the app serving until
Ctrl-C; without it the app stays up when the demo runs in a terminal (so the interface can be
opened) and stops after the answer when it does not (a script, CI).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from typing import Any

import httpx

from medgraph.config import MedGraphConfig, load_config

DEFAULT_QUESTION = "Does metformin affect outcomes in patients with diabetes and heart failure?"


def start(cfg: MedGraphConfig) -> str:
    """Deploy the app; returns its base URL once ``/health/ready`` answers."""
    from ray import serve

    from jobs.ray_runtime import init_ray
    from medgraph.observe.tracing import serve_tracing_config
    from serve.app import build

    tracing = serve_tracing_config(cfg.tracing)  # sets the exporter's environment: before Ray starts
    init_ray(cfg.ray)
    serve.start(http_options={"host": cfg.serve.host, "port": cfg.serve.port}, tracing_config=tracing)
    serve.run(build(cfg), name="medgraph", route_prefix="/")
    url = f"http://{cfg.serve.host}:{cfg.serve.port}"
    wait_ready(url)
    return url


def wait_ready(url: str, timeout: float = 180.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        try:
            r = httpx.get(f"{url}/health/ready", timeout=10)
            if r.status_code == 200:
                return dict(r.json())
            last = f"{r.status_code} {r.text[:200]}"
        except httpx.HTTPError as exc:
            last = repr(exc)
        time.sleep(1)
    raise RuntimeError(f"the app at {url} was not ready within {timeout:.0f} s: {last}")


def print_answer(body: dict[str, Any]) -> None:
    print(body["content"])
    print()
    for c in body["citations"]:
        where = " > ".join(c["section_path"]) + (f", p. {c['page']}" if c.get("page") else "")
        print(f"[{c['number']}] {c['title']} ({c['source_id']}) — {where}")
    print()
    route = body.get("route") or {}
    print(f"paths: {', '.join(body['retrieval_paths_used'])}; tier: {body.get('tier')} "
          f"({route.get('intent')}, E={route.get('entity_score')} + I={route.get('intent_score')}); "
          f"model: {body['model_used']}")
    print(body["disclaimer"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m serve.demo", description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="configs/local.yaml")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="A.B=C")
    ap.add_argument("--question", default=DEFAULT_QUESTION)
    ap.add_argument("--keep-running", action="store_true", default=None,
                    help="serve until Ctrl-C (default: when stdin and stdout are a terminal)")
    ap.add_argument("--exit", dest="keep_running", action="store_false", help="stop after the answer")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    cfg = load_config(args.config, args.overrides)
    url = start(cfg)
    print(f"MedGraph is serving at {url}\nweb interface: {url}/\n\nQ: {args.question}\n")
    r = httpx.post(f"{url}/chat", json={"message": args.question}, timeout=60)
    r.raise_for_status()
    print_answer(r.json())
    keep = args.keep_running if args.keep_running is not None else (sys.stdin.isatty() and sys.stdout.isatty())
    if keep:
        print(f"\nthe web interface is at {url}/ (Ctrl-C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    from ray import serve

    serve.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
