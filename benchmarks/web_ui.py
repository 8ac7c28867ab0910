"""The web interface's speed, measured in the browser (Debian's chromium via Playwright).

    python benchmarks/web_ui.py [--config configs/local.yaml] [--questions 20] [--graph-runs 5] [--set a.b=c ...]

Input: the corpus the config's stores hold (``make demo`` builds the demo corpus into them),
served by the real Serve app on a free port with its own ``app.path`` (quotas lifted).
Questions: the ``QUESTION`` fields of the first ``--questions`` PubMedQA abstracts of
``data/demo/pubmedqa_demo.json`` (sorted by PMID) — what the corpus can answer; 2 more warm up.

Measured, in one run:
- ``chat``: each question typed into the chat and submitted; the page's own
  ``performance.measure("medgraph:first-answer-text")`` (submit → the first answer text in the
  DOM) and submit → the citations rendered. Baseline in the same run: the same questions over
  ``POST /chat`` with httpx (the whole answer, no browser): ``ratio_first_text_to_api_answer``.
  Goal: first text p50 ≤ 400 ms.
- ``graph``: the explorer on the entity with the most co-occurrence neighbours, ``limit=200``:
  ``medgraph:graph-drawn`` (elements built, Cytoscape's cose layout run, two frames painted),
  ``--graph-runs`` times. Goal ≤ 1 s for a 200-node neighbourhood.
- ``transfer``: bytes over the wire (``transferSize`` of the page and its files, API calls
  excluded) for a cold load of the chat, then everything the other pages add (the graph
  library is loaded only by the explorer). Goal ≤ 500 kB compressed.

Output: JSON on stdout (the last thing printed): date, command, CPU count, load before and after.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.serve_stores import stats  # noqa: E402  (n, p50_ms, p95_ms, mean_ms, min_ms, max_ms)


def questions(n: int) -> list[str]:
    data = json.loads((REPO / "data" / "demo" / "pubmedqa_demo.json").read_text())
    return [data[k]["QUESTION"] for k in sorted(data)][: n + 2]


def ask_in_browser(page: Any, question: str) -> tuple[float, float]:
    turns = page.locator("section.turn")
    n = turns.count()
    page.fill("#question", question)
    t0 = time.perf_counter()
    page.keyboard.press("Enter")
    turns.nth(n).locator(".disclaimer").filter(has_text=re.compile(r"\S")).wait_for()
    done_ms = 1000 * (time.perf_counter() - t0)
    first = page.evaluate("performance.getEntriesByName('medgraph:first-answer-text').map(e => e.duration)")
    return float(first[-1]) if first else float("nan"), done_ms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--graph-runs", type=int, default=5)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    args = ap.parse_args(argv)

    from playwright.sync_api import sync_playwright
    from ray import serve

    from medgraph.config import load_config
    from medgraph.stores import make_graph_store
    from medgraph.testing.net import free_port
    from serve.demo import start

    load_before = os.getloadavg()
    tmp = tempfile.mkdtemp(prefix="web-bench-")
    cfg = load_config(args.config, [*args.overrides, f"app.path={tmp}/app.sqlite", f"serve.port={free_port()}",
                                    "auth.required=false", "auth.per_user_daily=100000", "auth.global_daily=1000000"])
    graph = make_graph_store(cfg.stores.graph)
    pairs = graph.entity_chunk_pairs()
    counts = graph.counts()
    graph.close()
    # the entity with the most co-occurrence neighbours (the largest neighbourhood to draw)
    chunks_of: dict[str, set[str]] = {}
    entities_of: dict[str, set[str]] = {}
    for mesh_id, chunk_id, _ in pairs:
        chunks_of.setdefault(mesh_id, set()).add(chunk_id)
        entities_of.setdefault(chunk_id, set()).add(mesh_id)
    hub = max(chunks_of, key=lambda m: len(set().union(*(entities_of[c] for c in chunks_of[m]))))

    url = start(cfg)
    qs = questions(args.questions)
    out: dict[str, Any] = {"date": dt.datetime.now().isoformat(timespec="seconds"), "command": " ".join(sys.argv),
                           "cpus": os.cpu_count(), "load_before": [round(x, 2) for x in load_before],
                           "corpus": counts}
    try:
        api_ms = []
        for q in qs:
            t0 = time.perf_counter()
            r = httpx.post(f"{url}/chat", json={"message": q}, timeout=120)
            r.raise_for_status()
            api_ms.append(1000 * (time.perf_counter() - t0))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
            # transferred size: a cold load of each page in a fresh context (no cache)
            context = browser.new_context()
            page = context.new_page()
            page.goto(f"{url}/ui/#/chat")
            page.locator("#question").wait_for()

            def ui_bytes() -> dict[str, int]:
                return page.evaluate("""() => { const out = {}; for (const e of [...performance.getEntriesByType('navigation'),
                    ...performance.getEntriesByType('resource')]) { const u = new URL(e.name);
                    if (u.pathname.startsWith('/ui')) out[u.pathname] = e.transferSize; } return out; }""")
            chat_files = ui_bytes()
            page.goto(f"{url}/ui/#/explore?name=hand%20hygiene")
            page.locator("#entity-title").wait_for()
            all_files = ui_bytes()
            out["transfer"] = {"chat_page_bytes": sum(chat_files.values()), "all_pages_bytes": sum(all_files.values()),
                               "files": all_files, "goal_bytes": 500_000}
            context.close()

            context = browser.new_context()
            page = context.new_page()
            page.set_default_timeout(120_000)
            page.goto(f"{url}/ui/#/chat")
            first_ms, done_ms = [], []
            for i, q in enumerate(qs):
                if i and i % 5 == 0:
                    page.click("text=New conversation")
                f, d = ask_in_browser(page, q)
                if i >= 2:  # the first two warm up
                    first_ms.append(f)
                    done_ms.append(d)
            first, api = stats(first_ms), stats(api_ms[2:])
            out["chat"] = {"questions": len(first_ms), "first_answer_text": first,
                           "answer_rendered": stats(done_ms), "api_chat": api,
                           "ratio_first_text_to_api_answer": round(first["p50_ms"] / api["p50_ms"], 3),
                           "goal_first_text_p50_ms": 400}

            drawn, nodes = [], []
            for _ in range(args.graph_runs + 1):
                page.goto(f"{url}/ui/#/chat")
                page.goto(f"{url}/ui/#/explore?id={hub}&limit=200")
                page.locator("#graph[data-nodes]").wait_for(state="attached")
                m = page.evaluate("performance.getEntriesByName('medgraph:graph-drawn').map(e => [e.duration, e.detail.nodes])")
                drawn.append(m[-1][0])
                nodes.append(m[-1][1])
            out["graph"] = {"entity": hub, "nodes": nodes[-1], "drawn": stats(drawn[1:]), "goal_ms": 1000}
            browser.close()
    finally:
        serve.shutdown()
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
