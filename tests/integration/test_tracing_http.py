"""Traces over real Serve HTTP and a real corpus build, read back from the tracing backend.

The Arize Phoenix server of ``cluster/phoenix`` (``make tracing-start``; ``$MEDGRAPH_TRACING_URL``
is its OTLP endpoint) receives the spans; the test reads them back through Phoenix's REST API. A
Ray cluster whose processes carry the exporter's settings (``tests/conftest.py`` sets them before the
session starts Ray; run alone without them, Ray is restarted here after setting them): a build of a
small corpus with tracing on, then the Serve app on it. Checked: the build is one trace with a span per stage batch under ``corpus.build``; a
``/chat`` request is one trace (its ID in ``X-Trace-Id``, its page in ``X-Trace-URL``) whose spans
form one tree from the HTTP proxy's span through the ingress, the agent's nodes, the retriever's
paths and the answer; with the backend paused the same question gets the same answer; and a
screenshot of the trace in Phoenix's UI, taken in Chromium, and the web interface's link from an
answer to that trace.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jobs.build_corpus import build_corpus
from medgraph.config import load_config
from medgraph.observe.tracing import exporter_environment
from medgraph.testing.net import free_port
from tests.conftest import TRACING_PROJECT_ENV
from tests.helpers import require_module, unavailable

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("MEDGRAPH_ARTIFACTS", REPO / ".medgraph" / "artifacts" / "ui"))
CHROMIUM = "/usr/bin/chromium"
CORPUS = [
    {"doc_id": "metformin", "title": "Metformin safety", "language": "en",
     "text": "Metformin is the first-line drug for type 2 diabetes. The most common side effects of metformin "
             "are diarrhea and nausea; lactic acidosis is a rare but serious adverse effect."},
    {"doc_id": "hands", "title": "Hand hygiene", "language": "en",
     "text": "Hand hygiene with alcohol-based hand rubs prevents infections in outpatient clinics."},
]
QUESTION = "What are the side effects of metformin?"


@pytest.fixture(scope="module")
def phoenix() -> str:
    url = os.environ.get("MEDGRAPH_TRACING_URL", "")
    if not url:
        unavailable("no tracing backend (make tracing-start; MEDGRAPH_TRACING_URL)", "MEDGRAPH_REQUIRE_TRACING")
    base = url.removesuffix("/v1/traces")
    try:
        httpx.get(f"{base}/healthz", timeout=5).raise_for_status()
    except httpx.HTTPError as exc:
        unavailable(f"the tracing backend at {base} does not answer ({exc})", "MEDGRAPH_REQUIRE_TRACING")
    return base


@pytest.fixture(scope="module")
def traced(phoenix: str, tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Iterator[dict[str, Any]]:
    import ray
    from ray import serve

    from serve.demo import start

    saved = dict(os.environ)
    project = os.environ.get(TRACING_PROJECT_ENV) or f"medgraph-test-{uuid.uuid4().hex[:8]}"
    root = tmp_path_factory.mktemp("tracing")
    corpus = root / "corpus"
    corpus.mkdir()
    (corpus / "docs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in CORPUS))
    sets = [f"stores.graph.path={root}/graph.sqlite", f"stores.vector.path={root}/qdrant",
            f"app.path={root}/app.sqlite", f"serve.port={free_port()}", "embedding.dense=hashing",
            "tracing.enabled=true", f"tracing.endpoint={phoenix}/v1/traces", f"tracing.project={project}",
            f"tracing.ui={phoenix}/redirects/traces/{{trace_id}}",
            # a tier whose model is missing: the outage must show in the trace
            'tiers.engines.broken={"kind": "llamacpp", "model_path": "/nonexistent/model.gguf", '
            '"deployment": {"num_replicas": 1, "num_cpus": 0.05}}', "tiers.large=broken"]
    cfg = load_config(REPO / "configs" / "local.yaml", sets)
    # Ray's processes inherit the exporter's environment when Ray starts: restart it when it lacks it
    restart = ray.is_initialized() and any(saved.get(k) != v for k, v in exporter_environment(cfg.tracing).items())
    if restart:
        serve.shutdown()
        ray.shutdown()
    summary = build_corpus(cfg, [str(corpus)])
    assert summary["status"] == "succeeded"
    url = start(cfg)
    try:
        yield {"url": url, "phoenix": phoenix, "project": project, "run_id": summary["run_id"]}
    finally:
        serve.shutdown()
        if restart:  # the later modules' Ray without this module's settings
            ray.shutdown()
        os.environ.clear()
        os.environ.update(saved)


def _spans(t: dict[str, Any], **params: Any) -> list[dict[str, Any]]:
    r = httpx.get(f"{t['phoenix']}/v1/projects/{t['project']}/spans", params={"limit": 1000, **params}, timeout=30)
    if r.status_code == 404:  # the project appears with its first span
        return []
    r.raise_for_status()
    return list(r.json()["data"])


def _trace(t: dict[str, Any], trace_id: str, expect: set[str], timeout_s: float = 60.0) -> list[dict[str, Any]]:
    """The trace's spans once every name in ``expect`` is there and no more arrive."""
    deadline, last = time.monotonic() + timeout_s, -1
    while time.monotonic() < deadline:
        spans = _spans(t, trace_id=trace_id)
        names = {s["name"] for s in spans}
        if expect <= names and len(spans) == last:
            return spans
        last = len(spans)
        time.sleep(2)
    raise AssertionError(f"trace {trace_id}: {sorted(names)} lacks {sorted(expect - names)}")


def _one_tree(spans: list[dict[str, Any]]) -> dict[str, Any]:
    """The trace's root, after checking that every other span's parent is in the trace."""
    ids = {s["context"]["span_id"] for s in spans}
    roots = [s for s in spans if not s.get("parent_id")]
    orphans = [s["name"] for s in spans if s.get("parent_id") and s["parent_id"] not in ids]
    assert len(roots) == 1 and not orphans, (sorted(s["name"] for s in roots), orphans)
    return roots[0]


def _ancestors(span: dict[str, Any], spans: list[dict[str, Any]]) -> list[str]:
    by_id = {s["context"]["span_id"]: s for s in spans}
    names, parent = [], span.get("parent_id")
    while parent:
        names.append(by_id[parent]["name"])
        parent = by_id[parent].get("parent_id")
    return names


def test_a_build_is_one_trace_with_a_span_per_stage(traced: dict[str, Any]) -> None:
    (build,) = [s for s in _spans(traced, name="corpus.build") if s["attributes"].get("run_id") == traced["run_id"]]
    stages = {"build.parse", "build.ocr_and_chunk", "build.extract", "build.embed", "build.write"}
    spans = _trace(traced, build["context"]["trace_id"], {"corpus.build", *stages})
    assert _one_tree(spans)["name"] == "corpus.build"
    assert build["attributes"]["chunks"] >= 2 and build["attributes"]["status"] == "succeeded"
    for s in spans:
        if s["name"] in stages:
            assert s["parent_id"] == build["context"]["span_id"], s["name"]  # the actors continue the driver's trace
    embed = next(s for s in spans if s["name"] == "build.embed")
    assert embed["attributes"]["rows_in"] >= 1 and embed["attributes"]["failures"] == 0


def test_a_chat_request_is_one_trace_with_a_span_per_hop(traced: dict[str, Any]) -> None:
    r = httpx.post(f"{traced['url']}/chat", json={"message": QUESTION}, timeout=120)
    assert r.status_code == 200, r.text
    trace_id = r.headers["x-trace-id"]
    assert len(trace_id) == 32 and r.headers["x-trace-url"] == f"{traced['phoenix']}/redirects/traces/{trace_id}"
    hops = {"agent.guard_input", "agent.analyse", "agent.semantic", "agent.fuse", "agent.generate",
            "retrieve.embed", "retrieve.dense", "retrieve.sparse"}
    spans = _trace(traced, trace_id, hops)
    root = _one_tree(spans)
    names = {s["name"] for s in spans}
    assert len(names) >= 12, sorted(names)
    dense = next(s for s in spans if s["name"] == "retrieve.dense")
    assert "agent.semantic" in _ancestors(dense, spans)  # across the agent -> retriever handle call
    assert root["name"] in _ancestors(dense, spans)
    assert dense["span_kind"] == "RETRIEVER" and dense["attributes"]["candidates"] >= 1
    r.raise_for_status()
    traced["answer"] = r.json()["content"]
    traced["trace_id"] = trace_id


def test_an_openai_compatible_request_is_one_trace_too(traced: dict[str, Any]) -> None:
    body = {"model": "medgraph", "messages": [{"role": "user", "content": QUESTION}]}
    r = httpx.post(f"{traced['url']}/v1/chat/completions", json=body, timeout=120)
    assert r.status_code == 200, r.text
    spans = _trace(traced, r.headers["x-trace-id"], {"agent.generate", "retrieve.dense"})
    assert _one_tree(spans)["name"] == "POST /v1/chat/completions"


def test_a_dependency_outage_is_an_error_span_in_the_requests_trace(traced: dict[str, Any]) -> None:
    r = httpx.post(f"{traced['url']}/chat", json={"message": QUESTION, "tier": "large"}, timeout=120)
    assert r.status_code == 503, r.text
    trace_id = r.headers["x-trace-id"]
    deadline, errors = time.monotonic() + 60, []
    while time.monotonic() < deadline and not errors:
        errors = [s for s in _spans(traced, trace_id=trace_id) if s["status_code"] == "ERROR"]
        time.sleep(2)
    assert errors, "no span of the failed request is marked as an error"
    assert any("model" in (s.get("status_message") or "").lower() or s["events"] for s in errors), errors


def test_the_stage_metrics_reach_rays_prometheus_endpoint(traced: dict[str, Any]) -> None:
    """The histograms and counters the dashboard charts (cluster/grafana/medgraph.json), summed over
    the replicas and actors, on the node's metrics endpoint."""
    import ray

    port = ray.nodes()[0]["MetricsExportPort"]
    wanted = ['ray_medgraph_agent_node_seconds_bucket{', 'node="generate"', 'ray_medgraph_retrieval_path_seconds_bucket{',
              'path="dense"', "ray_medgraph_gate_wait_seconds_bucket", 'ray_medgraph_build_rows_total{',
              'stage="embed"', "ray_medgraph_build_batch_seconds_bucket"]
    deadline, text = time.monotonic() + 90, ""
    while time.monotonic() < deadline:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        if all(w in text for w in wanted):
            break
        time.sleep(3)
    assert [w for w in wanted if w not in text] == []


def test_the_backend_being_down_costs_the_request_nothing(traced: dict[str, Any]) -> None:
    pid_file = Path(os.environ.get("MEDGRAPH_PHOENIX_DIR", REPO / ".medgraph" / "phoenix")) / "phoenix.pid"
    if not pid_file.is_file():
        unavailable(f"the tracing backend's pid file {pid_file} is missing", "MEDGRAPH_REQUIRE_TRACING")
    pid = int(pid_file.read_text())
    os.kill(pid, signal.SIGSTOP)  # a backend that hangs: the exports time out in the background
    try:
        started = time.perf_counter()
        r = httpx.post(f"{traced['url']}/chat", json={"message": QUESTION}, timeout=120)
        elapsed = time.perf_counter() - started
    finally:
        os.kill(pid, signal.SIGCONT)
    assert r.status_code == 200, r.text
    assert r.json()["content"] == traced.get("answer") or traced.get("answer") is None
    assert elapsed < 30, elapsed  # not held by the exporter (its limit is tracing.export_timeout_s)


def test_a_screenshot_of_the_trace_in_the_tracing_ui(traced: dict[str, Any]) -> None:
    playwright = require_module("playwright.sync_api", "MEDGRAPH_REQUIRE_BROWSER", "Playwright is not installed")
    if not Path(CHROMIUM).is_file():
        unavailable(f"no chromium at {CHROMIUM} (make system-deps installs Debian's)", "MEDGRAPH_REQUIRE_BROWSER")
    trace_id = traced.get("trace_id")
    if trace_id is None:
        r = httpx.post(f"{traced['url']}/chat", json={"message": QUESTION}, timeout=120)
        trace_id = r.headers["x-trace-id"]
        _trace(traced, trace_id, {"agent.generate"})
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        # the web interface links the answer to its trace
        page.goto(f"{traced['url']}/ui/#/chat")
        page.fill("#question", QUESTION)
        page.keyboard.press("Enter")
        link = page.locator("section.turn a.trace").first
        link.wait_for(timeout=60_000)
        href = link.get_attribute("href") or ""
        assert href.startswith(f"{traced['phoenix']}/redirects/traces/") and len(href.rsplit("/", 1)[1]) == 32
        page.goto(f"{traced['phoenix']}/redirects/traces/{trace_id}")
        page.get_by_text("agent.generate").first.wait_for(timeout=60_000)
        assert trace_id in page.url or page.get_by_text("retrieve.dense").count() > 0
        page.screenshot(path=str(ARTIFACTS / "tracing-trace.png"))
        browser.close()
    assert (ARTIFACTS / "tracing-trace.png").stat().st_size > 20_000
