"""``medgraph.assemble`` builds the system's parts once for every caller: the Serve deployments, the
in-process agent of the answer evaluation and the retrieval evaluation get the same parts with the
same settings (model tiers included), so that a benchmark measures what is served."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from medgraph.agent.guard import LlamaGuard, RuleGuard
from medgraph.agent.plan import RulePlanner
from medgraph.agent.rewrite import RuleRewriter
from medgraph.assemble import (
    PLANNER_TOKENS,
    LocalEngines,
    agent_settings,
    build_agent_parts,
    chat_engines,
)
from medgraph.config import load_config
from tests.helpers import REPO, index_tiny_corpus, require_module

FIXTURES = REPO / "tests" / "fixtures"
CORPUS = [
    {"doc_id": "heart", "title": "Metformin and myocardial infarction", "language": "en",
     "sections": [{"title": "Results", "text": "Metformin lowered myocardial infarction in diabetes."}]},
    {"doc_id": "fever", "title": "Fever after vaccination", "language": "en",
     "sections": [{"title": "Results", "text": "Fever after vaccination resolved within two days in most children."}]},
]
SOURCES = [{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")}]
ENGINE = {"kind": "openai", "model": "openai/tiny-med", "api_base": "http://127.0.0.1:9/v1",
          "api_key_env": "MEDGRAPH_TEST_OPENAI_KEY"}
MEMORY = ["memory.session_max_age_days=3", "memory.half_life_days=7", "memory.capacity_per_entity=2"]


def _cfg(tmp_path: Path, *sets: str) -> Any:
    return load_config(REPO / "configs" / "local.yaml", [f"app.path={tmp_path}/app.sqlite", *sets])


def test_every_engine_a_model_tier_chats_with_gets_a_deployment(tmp_path: Path) -> None:
    """The planner's engine was missing: with ``agent.decompose: dspy`` on an engine no tier uses,
    the agent deployment failed at start ("engine ... is not deployed")."""
    from serve.app import deployed_engines, deployment_names

    cfg = _cfg(tmp_path, f"tiers.engines.planner={json.dumps(ENGINE)}", "agent.decompose=dspy",
               "agent.planner_engine=planner")
    assert chat_engines(cfg) == ["planner"]
    assert "planner" in deployed_engines(cfg) and "llm-planner" in deployment_names(cfg)
    assert chat_engines(_cfg(tmp_path)) == []  # the offline tiers chat with nothing


def test_the_agents_parts_carry_the_configured_settings(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, *MEMORY, "gaps.enabled=false")

    def link(text: str) -> list[tuple[str, str]]:
        return [("D008687", "metformin")] if "metformin" in text else []

    parts = build_agent_parts(cfg, None, link)
    try:
        assert isinstance(parts.guard, RuleGuard) and isinstance(parts.planner, RulePlanner)
        assert isinstance(parts.rewriter, RuleRewriter) and parts.rewriter.find_entities is link
        assert parts.sessions.max_age_s == 3 * 86400
        assert (parts.memory.half_life_days, parts.memory.capacity_per_entity) == (7.0, 2)
        assert parts.sources == [] and parts.settings == agent_settings(cfg)
        assert parts.settings.top_k == cfg.retrieval.top_k and parts.settings.gaps_enabled is False
    finally:
        parts.sessions.close()
        parts.memory.close()
    assert build_agent_parts(_cfg(tmp_path, "agent.decompose=off"), None).planner is None


def test_a_model_tier_without_a_chat_is_an_error_that_names_its_engine(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, f"tiers.engines.planner={json.dumps(ENGINE)}", "agent.decompose=dspy",
               "agent.planner_engine=planner")
    with pytest.raises(ValueError, match="agent.decompose dspy.*'planner'"):
        build_agent_parts(cfg, None)
    asked: list[tuple[str | None, int]] = []

    def chat_for(engine: str | None, max_tokens: int) -> Any:
        asked.append((engine, max_tokens))
        return lambda messages, params=None: "unused"

    parts = build_agent_parts(cfg, chat_for)
    try:
        assert type(parts.planner).__name__ == "DSPyPlanner" and asked == [("planner", PLANNER_TOKENS)]
    finally:
        parts.sessions.close()
        parts.memory.close()


def test_local_engines_answer_each_tier_with_its_own_engine(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, f"tiers.engines.remote={json.dumps(ENGINE)}", "tiers.large=remote")
    engines = LocalEngines(cfg)
    assert engines.for_tier("small").kind == "extractive" and engines.for_tier("large").kind == "openai"
    assert engines.for_tier("medium") is engines.for_tier("small")  # one engine object per engine
    with pytest.raises(ValueError, match="not configured"):
        engines.get("nowhere")


def test_the_in_process_agent_builds_the_deployments_model_tiers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The answer evaluation's agent once built the guard without a chat (``guard.kind:
    llama_guard`` raised), the rewriter without linking, the session store and memory without their
    configured ages and sizes, and answered every tier with the small tier's engine."""
    require_module("litellm", "MEDGRAPH_REQUIRE_LLM", "litellm not installed (extra 'llm')")
    from medgraph.agent.graph import AgentRequest
    from medgraph.testing.openai_server import FakeOpenAIServer
    from serve.inprocess import build_agent

    (tmp_path / "index").mkdir()
    index, base = index_tiny_corpus(tmp_path / "index", CORPUS, SOURCES)
    path, vocab = index.path, base.vocabulary
    index.close()
    monkeypatch.setenv("MEDGRAPH_TEST_OPENAI_KEY", "sk-test")
    with FakeOpenAIServer(lambda messages: "safe", api_key="sk-test") as server:
        engine = {**ENGINE, "api_base": server.base_url}
        cfg = load_config(REPO / "configs" / "local.yaml", [
            "embedding.dense=hashing", f"vocabulary.path={vocab.path}", f"vocabulary.sources={json.dumps(SOURCES)}",
            f"stores.graph.path={path}/graph.sqlite", f"stores.vector.path={path}/qdrant",
            "stores.vector.collection=chunks", f"app.path={tmp_path}/app.sqlite", "gaps.enabled=false",
            f"tiers.engines.guard={json.dumps(engine)}", "guard.kind=llama_guard", "guard.engine=guard", *MEMORY,
        ])
        built = build_agent(cfg)
        try:
            deps = built.agent.deps
            assert isinstance(deps.guard, LlamaGuard)
            assert deps.rewriter.find_entities is not None
            assert deps.sessions.max_age_s == 3 * 86400 and deps.memory.half_life_days == 7.0
            assert built.retriever.live.extractor is built.analyzer.extractor  # one vocabulary in the process
            state = asyncio.run(built.agent.run(AgentRequest("Does metformin lower myocardial infarction?",
                                                             session_id="s1", user_id="u1")))
            assert not state["answer"].refused and state["answer"].citations
            assert server.requests, "the guard's model tier was never asked"
        finally:
            built.close()


def _shape(deps: Any) -> dict[str, Any]:
    """What the agent's own parts are, as comparable values."""
    sessions = getattr(deps.sessions, "_store", deps.sessions)
    memory = getattr(deps.memory, "_store", deps.memory)
    return {"settings": deps.settings, "guard": type(deps.guard).__name__, "rewriter": type(deps.rewriter).__name__,
            "window": deps.rewriter.window, "links_history": deps.rewriter.find_entities is not None,
            "planner": type(deps.planner).__name__, "sessions_max_age_s": sessions.max_age_s,
            "memory": (memory.half_life_days, memory.capacity_per_entity),
            "gap_completion": deps.fetch is not None, "bounded_stores": type(deps.sessions).__name__}


def _retrieval_shape(retriever: Any, reranker: Any) -> dict[str, Any]:
    return {"retrieval": retriever.cfg, "community_index": retriever.communities is not None,
            "embedder": retriever.embedder.name, "ppr_index": retriever.ppr_index is not None,
            "reranker": (type(reranker).__name__, getattr(reranker, "weights", None),
                         getattr(reranker, "cross_weights", None), reranker.order)}


def test_the_served_and_the_benchmarked_system_are_built_alike(tmp_path: Path) -> None:
    """One config, built three ways: as the deployments build their parts, as the answer
    evaluation's in-process agent does, and as the retrieval evaluation does: the same settings,
    paths, weights, models and tiers."""
    from medgraph.eval.retrieval import query_parts
    from serve.agent import AgentService
    from serve.inprocess import build_agent

    (tmp_path / "index").mkdir()
    index, base = index_tiny_corpus(tmp_path / "index", CORPUS, SOURCES)
    cfg = load_config(REPO / "configs" / "local.yaml", [
        "embedding.dense=hashing", f"vocabulary.path={base.vocabulary.path}",
        f"vocabulary.sources={json.dumps(SOURCES)}", f"stores.graph.path={index.path}/graph.sqlite",
        f"stores.vector.path={index.path}/qdrant", "stores.vector.collection=chunks",
        f"app.path={tmp_path}/app.sqlite", "gaps.enabled=false", *MEMORY, "memory.rewriter.window=3",
        "agent.hop_passages=2", "retrieval.weights.sparse=0.7",
    ])
    try:
        evaluated = query_parts(index, cfg)
        benchmarked = _retrieval_shape(evaluated.retriever, evaluated.reranker)
        eval_planner = type(evaluated.planner).__name__
    finally:
        index.close()
    served = AgentService(cfg, None, None, None, None, {})
    built = build_agent(cfg)
    try:
        in_process = _shape(built.agent.deps)
        assert _shape(served.agent.deps) == in_process
        assert in_process["window"] == 3 and in_process["settings"].hop_passages == 2
        assert in_process["bounded_stores"] == "BoundedStore" and in_process["planner"] == eval_planner == "RulePlanner"
        retrieval = _retrieval_shape(built.retriever.retriever, built.reranker.reranker)
    finally:
        built.close()
    assert retrieval == benchmarked
    assert retrieval["community_index"] and retrieval["retrieval"].weights["sparse"] == 0.7
