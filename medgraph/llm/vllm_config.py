"""Build the ``ray.serve.llm.LLMConfig`` arguments of a ``vllm`` engine (pure data, no vLLM import).

Input: ``VLLMEngineConfig``. Output: the keyword arguments of ``LLMConfig`` — model loading
(model ID + source), the accelerator type, vLLM engine kwargs (tensor parallelism, memory share,
context length, ``enable_sleep_mode``), one placement bundle per tensor-parallel worker with the
configured GPU share, and the Serve deployment options (replicas or autoscaling, concurrency).
``serve/vllm_engine.py`` turns them into an ``LLMConfig`` and an ``LLMServer`` deployment on a
GPU cluster; tests validate them against Ray's ``LLMConfig`` model where it imports.
"""

from __future__ import annotations

from typing import Any

from medgraph.config.llm import VLLMEngineConfig


def vllm_engine_kwargs(cfg: VLLMEngineConfig) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "tensor_parallel_size": cfg.tensor_parallel_size,
        "gpu_memory_utilization": cfg.gpu_memory_utilization,
        "enable_sleep_mode": cfg.enable_sleep_mode,
    }
    if cfg.max_model_len is not None:
        kwargs["max_model_len"] = cfg.max_model_len
    overlap = set(kwargs) & set(cfg.engine_kwargs)
    if overlap:
        raise ValueError(f"engine_kwargs repeats {sorted(overlap)}: set them as engine fields instead")
    return {**kwargs, **cfg.engine_kwargs}


def vllm_deployment_config(cfg: VLLMEngineConfig) -> dict[str, Any]:
    d = cfg.deployment
    out: dict[str, Any] = {"max_ongoing_requests": d.max_ongoing_requests}
    if d.autoscaling is not None:
        out["autoscaling_config"] = d.autoscaling.serve_options()
    else:
        out["num_replicas"] = d.num_replicas
    return out


def llm_config_kwargs(cfg: VLLMEngineConfig, name: str) -> dict[str, Any]:
    """Keyword arguments of ``ray.serve.llm.LLMConfig`` for the engine called ``name``."""
    bundle = {"GPU": cfg.deployment.num_gpus, "CPU": cfg.deployment.num_cpus}
    out: dict[str, Any] = {
        "model_loading_config": {"model_id": cfg.model_id, "model_source": cfg.model_source},
        "engine_kwargs": vllm_engine_kwargs(cfg),
        "placement_group_config": {"bundles": [dict(bundle) for _ in range(cfg.tensor_parallel_size)],
                                   "strategy": "PACK"},
        "deployment_config": vllm_deployment_config(cfg),
        "log_engine_metrics": True,
    }
    if cfg.accelerator_type:
        out["accelerator_type"] = cfg.accelerator_type
    return out


def sleep_kwargs(cfg: VLLMEngineConfig) -> dict[str, Any]:
    """Arguments of ``LLMServer.sleep``: level 1 offloads weights to CPU RAM, level 2 drops them."""
    return {"level": cfg.sleep_level}
