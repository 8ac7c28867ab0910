"""``serve.colocate``: parts built inside the agent's replica (serve/colocated.py), their handles'
call shapes, the deployments the app plans without them, and the agent serving them to the ingress."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from medgraph.config import load_config
from medgraph.llm.base import ModelUnavailable
from medgraph.retrieve.types import Candidate, QueryAnalysis
from serve import calls
from serve.colocated import LocalHandle, ViaAgent

REPO = Path(__file__).resolve().parents[2]


class _Service:
    def __init__(self) -> None:
        self.threads: list[str] = []
        self.closed = False

    def plain(self, x: int) -> int:
        self.threads.append(threading.current_thread().name)
        return x + 1

    async def coro(self, x: int) -> int:
        return x * 2

    async def events(self, n: int) -> Any:
        try:
            for i in range(n):
                yield {"delta": str(i)}
        finally:
            self.closed = True


def test_a_local_handle_has_a_deployment_handles_call_shapes() -> None:
    service = _Service()
    handle = LocalHandle(service)

    async def main() -> tuple[int, int, list[Any]]:
        loop_thread = threading.current_thread().name
        plain = await calls.call(handle.plain, 1, timeout=5, late=TimeoutError, translate=lambda e: None)
        assert service.threads and service.threads[-1] != loop_thread  # CPU work off the event loop
        coro = await handle.coro.remote(3)
        gen = handle.options(stream=True).events.remote(3)
        events = [e async for e in calls.stream(gen, first_timeout=5, timeout=5, late=TimeoutError,
                                                translate=lambda e: None)]
        return plain, coro, events

    plain, coro, events = asyncio.run(main())
    assert (plain, coro) == (2, 6) and events == [{"delta": "0"}, {"delta": "1"}, {"delta": "2"}]
    assert handle.plain.remote(41).result(timeout_s=1) == 42  # a worker thread waiting as on a handle


def test_a_cancelled_local_stream_closes_its_generator() -> None:
    service = _Service()

    async def main() -> None:
        gen = LocalHandle(service).options(stream=True).events.remote(10)
        assert await gen.__anext__() == {"delta": "0"}
        gen.cancel()
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    asyncio.run(main())
    assert service.closed


class _Recorder:
    """A deployment handle's stand-in that records ``method.remote(*args)`` calls."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.opts = options or {}

    def options(self, **kwargs: Any) -> _Recorder:
        other = _Recorder(kwargs)
        other.calls = self.calls
        return other

    def __getattr__(self, name: str) -> Any:
        recorder = self

        class _Method:
            def remote(self, *args: Any) -> str:
                recorder.calls.append((name, args, recorder.opts))
                return "response"

        return _Method()


def test_via_agent_sends_the_parts_calls_to_the_agents_colocated_method() -> None:
    agent = _Recorder()
    analyzer = ViaAgent(agent, "analyzer")
    assert analyzer.link_name.remote("Herzinfarkt", "de") == "response"
    assert analyzer.options(stream=False).analyze.remote("q", None) == "response"
    assert agent.calls == [("colocated", ("analyzer", "link_name", "Herzinfarkt", "de"), {}),
                           ("colocated", ("analyzer", "analyze", "q", None), {"stream": False})]


def test_colocated_parts_are_not_deployments() -> None:
    from ray.serve._private.build_app import build_app

    from serve.app import build, deployment_names

    split = load_config(REPO / "configs" / "local.yaml", ["serve.colocate=[]"])
    assert {"analyzer", "reranker", "router", "llm-extractive"} <= set(deployment_names(split))
    cfg = load_config(REPO / "configs" / "local.yaml", ["serve.colocate=[reranker,extractive]",
                                                        "tiers.medium=gemma"])
    names = deployment_names(cfg)
    assert "reranker" not in names and "llm-extractive" not in names
    assert {"ingress", "agent", "analyzer", "retriever", "router", "llm-gemma"} <= set(names)  # an LLM stays
    built = build_app(build(cfg), name="medgraph")
    assert sorted(d.name for d in built.deployments) == sorted(names)
    default = load_config(REPO / "configs" / "local.yaml")
    assert sorted(deployment_names(default)) == ["agent", "ingress", "retriever"]


def test_sizing_a_colocated_part_on_its_own_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    from serve.app import build

    with caplog.at_level("WARNING", logger="serve.app"):
        build(load_config(REPO / "configs" / "local.yaml"))
    assert not [r for r in caplog.records if "serve.colocate" in r.getMessage()]  # the default is consistent
    with caplog.at_level("WARNING", logger="serve.app"):
        build(load_config(REPO / "configs" / "local.yaml", ["serve.reranker.num_replicas=3"]))
    (warning,) = [r for r in caplog.records if "serve.colocate" in r.getMessage()]
    assert "reranker" in warning.getMessage() and "scales with the agent" in warning.getMessage()


def test_an_unknown_part_cannot_be_colocated() -> None:
    with pytest.raises(ValueError, match="colocate"):
        load_config(REPO / "configs" / "local.yaml", ["serve.colocate=[retriever]"])


def _agent(tmp_path: Path, colocate: str) -> Any:
    from serve.agent import AgentService

    cfg = load_config(REPO / "configs" / "local.yaml", [
        f"app.path={tmp_path}/app.sqlite", f"serve.colocate={colocate}", "answer.sentence_dense=off"])
    engines: dict[str, Any] = {"extractive": None}
    service = AgentService(cfg, None, None, None, None, engines)
    # Serve scans the bound arguments for handles again after __init__: the parts built here (a
    # model session cannot be pickled) must not be put into them
    assert engines == {"extractive": None}
    return service


def test_the_agent_builds_its_colocated_parts_and_serves_them_to_the_ingress(tmp_path: Path) -> None:
    service = _agent(tmp_path, "[reranker,router,extractive]")
    assert sorted(service.colocated_parts) == ["extractive", "reranker", "router"]
    assert service.engines["extractive"] is service.colocated_parts["extractive"]
    analysis = QueryAnalysis(text="Is hypertension a risk factor for stroke?", language="en")
    candidate = Candidate(chunk_id="c1", score=1.0, features={"dense": 0.9, "lexical": 0.8, "entity": 1.0,
                                                              "ppr": 0.0, "rrf": 1.0, "cross_lingual": 0.0})

    async def main() -> tuple[Any, Any, dict[str, Any]]:
        route = await service._route(analysis, None)
        ranked = await service._rerank(analysis.text, [candidate])
        stats = await service.colocated("extractive", "stats")
        return route, ranked, stats

    route, ranked, stats = asyncio.run(main())
    assert route.tier in ("small", "medium", "large")
    assert ranked[0].chunk_id == "c1" and 0.5 < ranked[0].relevance <= 1.0  # the reranker ran here
    assert stats["kind"] == "extractive"
    with pytest.raises(ValueError, match="does not run in the agent"):
        asyncio.run(service.colocated("analyzer", "analyze", "q", None))
    with pytest.raises(ModelUnavailable, match="extractive"):  # the guard's model tier cannot chat with it
        service._blocking_chat("extractive", 8)


def test_the_agent_answers_with_its_colocated_extractive_tier(tmp_path: Path) -> None:
    service = _agent(tmp_path, "[extractive]")
    analysis = QueryAnalysis(text="What lowers blood pressure?", language="en")

    async def main() -> list[dict[str, Any]]:
        return [event async for event in service._generate("small", analysis.text, analysis, [])]

    events = asyncio.run(main())
    assert events and events[-1]["answer"].refused  # no evidence: refused, by the engine in this process
