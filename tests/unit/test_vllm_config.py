"""The ``vllm`` engine kind: configuration building and validation (its runtime needs CUDA GPUs).

The ``LLMConfig`` arguments are validated against Ray's public ``ray.serve.llm.LLMConfig`` where it
imports (Ray 2.60 imports it only with vLLM installed, so on CPU this one test skips with the
reason); the gate's runtime is tested on CPU with a fake (tests/unit/test_vllm_engine.py,
tests/integration/test_vllm_fake_serve.py) and on a GPU by tests/integration/test_vllm_tier.py.
"""

from __future__ import annotations

import pytest

from medgraph.config import ConfigError, load_config
from medgraph.config.llm import VLLMEngineConfig
from medgraph.llm.vllm_config import llm_config_kwargs, sleep_kwargs, vllm_engine_kwargs


def _engine(**kw) -> VLLMEngineConfig:
    base = {"kind": "vllm", "model_id": "medgraph-large", "model_source": "/models/qwen2.5-7b-instruct"}
    return VLLMEngineConfig(**{**base, **kw})


def test_llm_config_arguments():
    cfg = _engine(accelerator_type="L4", max_model_len=8192, idle_sleep_s=600, sleep_level=2,
                  engine_kwargs={"enforce_eager": True},
                  deployment={"num_gpus": 0.5, "num_cpus": 2,
                              "autoscaling": {"min_replicas": 0, "max_replicas": 3, "target_ongoing_requests": 8}})
    kw = llm_config_kwargs(cfg, "large")
    assert kw["model_loading_config"] == {"model_id": "medgraph-large", "model_source": "/models/qwen2.5-7b-instruct"}
    assert kw["accelerator_type"] == "L4"
    assert kw["engine_kwargs"] == {"tensor_parallel_size": 1, "gpu_memory_utilization": 0.85,
                                   "enable_sleep_mode": True, "max_model_len": 8192, "enforce_eager": True}
    assert kw["placement_group_config"] == {"bundles": [{"GPU": 0.5, "CPU": 2.0}], "strategy": "PACK"}
    assert kw["deployment_config"] == {"max_ongoing_requests": 16, "autoscaling_config": {
        "min_replicas": 0, "max_replicas": 3, "target_ongoing_requests": 8.0}}
    assert sleep_kwargs(cfg) == {"level": 2}
    tp = llm_config_kwargs(_engine(tensor_parallel_size=4, deployment={"num_gpus": 1, "num_replicas": 2}), "x")
    assert len(tp["placement_group_config"]["bundles"]) == 4 and tp["deployment_config"]["num_replicas"] == 2


@pytest.mark.parametrize("kw,match", [
    ({"deployment": {"num_gpus": 0}}, "num_gpus must be > 0"),
    ({"tensor_parallel_size": 2, "deployment": {"num_gpus": 0.5}}, "whole GPUs"),
    ({"idle_sleep_s": 60, "enable_sleep_mode": False}, "enable_sleep_mode"),
    ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization"),
    ({"model_id": ""}, "model_id"),
])
def test_invalid_engines_are_rejected(kw, match):
    with pytest.raises(ValueError, match=match):
        _engine(**kw)


def test_engine_kwargs_may_not_shadow_engine_fields():
    with pytest.raises(ValueError, match="tensor_parallel_size"):
        vllm_engine_kwargs(_engine(engine_kwargs={"tensor_parallel_size": 2}))


def test_validated_by_ray_serve_llm_config(repo_root):
    try:
        from ray.serve.llm import LLMConfig
    except ImportError as exc:
        # skip-ok: ray.serve.llm imports only where vLLM is installed (GPU images), never in CPU CI
        pytest.skip(f"ray.serve.llm not importable here (it needs vLLM): {exc}")
    cfg = load_config(repo_root / "configs" / "cluster.yaml")
    vllm = {n: e for n, e in cfg.tiers.engines.items() if e.kind == "vllm"}
    assert vllm, "configs/cluster.yaml should run its tiers on vLLM"
    for name, engine in vllm.items():
        llm_config = LLMConfig(**llm_config_kwargs(engine, name))
        assert llm_config.engine_kwargs["enable_sleep_mode"] is True
        assert llm_config.accelerator_type == engine.accelerator_type
    with pytest.raises(ValueError, match="accelerator"):
        LLMConfig(**llm_config_kwargs(_engine(accelerator_type="NOT-A-GPU"), "x"))


def test_cluster_yaml_vllm_engines_sleep_when_idle(repo_root):
    cfg = load_config(repo_root / "configs" / "cluster.yaml")
    for tier in ("small", "medium", "large"):
        engine = cfg.tiers.engines[cfg.tiers.engine_for(tier)]
        assert engine.kind == "vllm" and engine.idle_sleep_s and engine.accelerator_type
    with pytest.raises(ConfigError, match="not in tiers.engines"):
        load_config(repo_root / "configs" / "cluster.yaml", ["tiers.large=nope"])
