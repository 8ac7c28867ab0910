"""The Serve application builder: ``import_path: serve.app:build_app`` in configs/serve/*.yaml.

    serve run configs/serve/local.yaml            # or: serve deploy configs/serve/local.yaml
    python -m serve.demo --question "..."         # build + serve + ask, in one process

``args`` of the Serve config: ``config`` (path to a MedGraph config, default configs/local.yaml)
and ``set`` (a list of ``a.b=c`` overrides). Replicas and resources of each deployment come from
the ``serve:`` section of that config; each LLM engine of ``tiers.engines`` that a tier (or the
LLM router) uses is one more deployment, ``llm-<engine>``, sized by its ``deployment:`` block. A
``vllm`` engine adds its ``LLMServer`` deployment (GPU, autoscaled) behind a one-replica
``llm-<engine>`` gate that sleeps and wakes it. With embedded stores the retriever is the single
owner of the store files, so it is forced to one replica.

``deployment_names(cfg)`` lists the deployments ``build(cfg)`` creates (without Ray or vLLM), so
the cluster manifests can be checked against the code (tests/unit/test_cluster_configs.py).

Questions flow ingress (identity, quota, concurrency) → agent (the LangGraph agent, serve/agent.py)
→ analyzer, router, retriever, reranker and the tier engines. The agent owns the session and
memory file (``app.path``), so it runs one replica.
"""

from __future__ import annotations

import logging
from typing import Any

from ray import serve
from ray.serve.deployment import Application

from medgraph.config import MedGraphConfig, load_config
from medgraph.config.llm import EngineConfig
from medgraph.config.models import DeploymentConfig, ServeConfig
from medgraph.memory.database import is_postgres_url
from serve.agent import AgentService
from serve.api import Ingress
from serve.services import AnalyzerService, RerankerService, RetrieverService, RouterService
from serve.tiers import TierService

log = logging.getLogger(__name__)


def _options(name: str, d: DeploymentConfig, s: ServeConfig, single_owner: bool = False) -> dict[str, Any]:
    actor: dict[str, Any] = {"num_cpus": d.num_cpus}
    if d.num_gpus:
        actor["num_gpus"] = d.num_gpus
    opts: dict[str, Any] = {
        "name": name, "ray_actor_options": actor, "max_ongoing_requests": d.max_ongoing_requests,
        "logging_config": {"enable_access_log": s.access_log, "log_level": s.log_level},
    }
    if single_owner:
        if d.num_replicas != 1 or d.autoscaling:
            log.warning("%s owns local files (embedded stores, app store): running it with 1 replica", name)
        opts["num_replicas"] = 1
    elif d.autoscaling:
        opts["autoscaling_config"] = dict(d.autoscaling)
    else:
        opts["num_replicas"] = d.num_replicas
    return opts


def tier_options(name: str, e: EngineConfig, s: ServeConfig) -> dict[str, Any]:
    """Serve options of engine ``name``'s deployment (``llm-<name>``)."""
    d = e.deployment
    actor: dict[str, Any] = {"num_cpus": d.num_cpus}
    opts: dict[str, Any] = {
        "name": f"llm-{name}", "ray_actor_options": actor, "max_ongoing_requests": d.max_ongoing_requests,
        "logging_config": {"enable_access_log": s.access_log, "log_level": s.log_level},
    }
    if e.kind == "vllm":  # a light gate: the GPUs, replicas and autoscaling belong to its LLMServer
        actor["num_cpus"] = min(d.num_cpus, 0.25)
        opts["num_replicas"] = 1
        opts["max_ongoing_requests"] = max(d.max_ongoing_requests * 8, 64)
        return opts
    if d.num_gpus:
        actor["num_gpus"] = d.num_gpus
    if d.autoscaling is not None:
        opts["autoscaling_config"] = d.autoscaling.serve_options()
    else:
        opts["num_replicas"] = d.num_replicas
    return opts


def deployed_engines(cfg: MedGraphConfig) -> dict[str, EngineConfig]:
    """Engines that get a deployment: those a tier maps to, and those the model tiers of the
    router, the guard (Llama Guard), the rewriter and the planner (DSPy) chat with."""
    from medgraph.assemble import chat_engines

    engines = cfg.tiers.used_engines()
    for name in chat_engines(cfg):
        engines.setdefault(name, cfg.tiers.engines[name])
    return engines


def deployment_names(cfg: MedGraphConfig) -> list[str]:
    names = ["ingress", "agent", "analyzer", "retriever", "reranker", "router"]
    for name, e in deployed_engines(cfg).items():
        names.append(f"llm-{name}")
        if e.kind == "vllm":
            names.append(f"vllm-{name}")  # prefix of its LLMServer deployment's name
    return names


def build(cfg: MedGraphConfig) -> Application:
    s = cfg.serve
    analyzer = serve.deployment(AnalyzerService).options(**_options("analyzer", s.analyzer, s)).bind(cfg)
    retriever = serve.deployment(RetrieverService).options(
        **_options("retriever", s.retriever, s, single_owner=cfg.stores.embedded)).bind(cfg)
    reranker = serve.deployment(RerankerService).options(**_options("reranker", s.reranker, s)).bind(cfg)
    engines: dict[str, Any] = {}
    for name, e in deployed_engines(cfg).items():
        server = None
        if e.kind == "vllm":
            from serve.vllm_engine import build_llm_server

            server = build_llm_server(e, name)  # type: ignore[arg-type]
        engines[name] = serve.deployment(TierService).options(**tier_options(name, e, s)).bind(cfg, name, server)
    classifier = engines.get(cfg.router.engine) if cfg.router.kind in ("llm", "dspy") and cfg.router.engine else None
    router = serve.deployment(RouterService).options(**_options("router", s.router, s)).bind(cfg, classifier)
    # with a SQLite app.path the agent owns the session and memory file: one replica, like the embedded
    # stores; with PostgreSQL every replica reaches the same state and the agent scales
    agent = serve.deployment(AgentService).options(
        **_options("agent", s.agent, s, single_owner=not is_postgres_url(cfg.app.path))).bind(
        cfg, analyzer, retriever, reranker, router, engines)
    ingress = serve.deployment(Ingress).options(**_options("ingress", s.ingress, s))
    return ingress.bind(cfg, analyzer, retriever, router, agent, engines)


def build_app(args: dict[str, Any]) -> Application:
    """Serve's application builder (``import_path: serve.app:build_app``)."""
    unknown = set(args) - {"config", "set"}
    if unknown:
        raise ValueError(f"unknown application args {sorted(unknown)}; expected 'config' and 'set'")
    cfg = load_config(args.get("config", "configs/local.yaml"), args.get("set", []))
    return build(cfg)
