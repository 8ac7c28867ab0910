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

The deployments are one table, ``DEPLOYMENTS`` (name, class, sizing section of ``serve:``, the
deployments it calls, whether it owns local files); ``build(cfg)`` binds them in order and
``deployment_names(cfg)`` derives from the same table (without Ray or vLLM), so the cluster manifests
can be checked against the code (tests/unit/test_cluster_configs.py). A new deployment is one row.

Questions flow ingress (identity, quota, concurrency) → agent (the LangGraph agent, serve/agent.py)
→ analyzer, router, retriever, reranker and the tier engines. The agent owns the session and
memory file (``app.path``), so it runs one replica. The parts named in ``serve.colocate`` (analyzer,
reranker, router, the extractive engines) are not deployed: the agent builds them in its own replica
and the ingress reaches them through it (serve/colocated.py); their handles are bound as ``None``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ray import serve
from ray.serve.deployment import Application

from medgraph.config import MedGraphConfig, load_config
from medgraph.config.llm import EngineConfig
from medgraph.config.models import DeploymentConfig, ServeConfig
from medgraph.memory.database import is_postgres_url
from serve.agent import AgentService
from serve.api import Ingress
from serve.colocated import colocated_engines
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


@dataclass(frozen=True)
class Deployment:
    """One row of the application: ``cls(cfg, *calls)`` as deployment ``name``, sized by
    ``sizing(cfg.serve)``. ``calls``: the handles it is bound to, by name: earlier rows, ``engines``
    (every engine deployment, by engine name) or ``classifier`` (the router's engine, or None).
    ``owns_files(cfg)``: it is the single owner of local files (runs one replica)."""

    name: str
    cls: type
    sizing: Callable[[ServeConfig], DeploymentConfig]
    calls: tuple[str, ...] = ()
    owns_files: Callable[[MedGraphConfig], bool] = lambda cfg: False


# In binding order: a row may call only the rows above it; the last row is the application's entry
# (its HTTP routes).
DEPLOYMENTS: tuple[Deployment, ...] = (
    Deployment("analyzer", AnalyzerService, lambda s: s.analyzer),
    # with embedded stores the retriever is the single owner of the store files
    Deployment("retriever", RetrieverService, lambda s: s.retriever, owns_files=lambda cfg: cfg.stores.embedded),
    Deployment("reranker", RerankerService, lambda s: s.reranker),
    Deployment("router", RouterService, lambda s: s.router, calls=("classifier",)),
    # with a SQLite app.path the agent owns the session and memory file: one replica, like the
    # embedded stores; with PostgreSQL every replica reaches the same state and the agent scales
    Deployment("agent", AgentService, lambda s: s.agent, calls=("analyzer", "retriever", "reranker", "router", "engines"),
               owns_files=lambda cfg: not is_postgres_url(cfg.app.path)),
    Deployment("ingress", Ingress, lambda s: s.ingress, calls=("analyzer", "retriever", "router", "agent", "engines")),
)


def deployment_names(cfg: MedGraphConfig) -> list[str]:
    names = [d.name for d in DEPLOYMENTS if d.name not in cfg.serve.colocate]
    inside = colocated_engines(cfg)
    for name, e in deployed_engines(cfg).items():
        if name in inside:
            continue
        names.append(f"llm-{name}")
        if e.kind == "vllm":
            names.append(f"vllm-{name}")  # prefix of its LLMServer deployment's name
    return names


def build(cfg: MedGraphConfig) -> Application:
    s = cfg.serve
    engines: dict[str, Any] = {}
    inside = colocated_engines(cfg)
    for name, e in deployed_engines(cfg).items():
        if name in inside:  # built by the agent (serve.colocate)
            engines[name] = None
            continue
        server = None
        if e.kind == "vllm":
            from serve.vllm_engine import build_llm_server

            server = build_llm_server(e, name)  # type: ignore[arg-type]
        engines[name] = serve.deployment(TierService).options(**tier_options(name, e, s)).bind(cfg, name, server)
    r = cfg.router
    bound: dict[str, Any] = {
        "engines": engines, "classifier": engines.get(r.engine) if r.kind in ("llm", "dspy") and r.engine else None}
    for d in DEPLOYMENTS:
        if d.name in s.colocate:  # built by the agent, reached by the ingress through it
            sizing = d.sizing(s)
            if sizing.num_replicas != 1 or sizing.autoscaling or sizing.num_gpus:
                log.warning("%s runs in the agent's replica (serve.colocate): its replicas, autoscaling and "
                            "GPUs (serve.%s) are not used; it scales with the agent", d.name, d.name)
            bound[d.name] = None
            continue
        options = _options(d.name, d.sizing(s), s, single_owner=d.owns_files(cfg))
        bound[d.name] = serve.deployment(d.cls).options(**options).bind(cfg, *(bound[c] for c in d.calls))
    return bound[DEPLOYMENTS[-1].name]  # type: ignore[no-any-return]


def build_app(args: dict[str, Any]) -> Application:
    """Serve's application builder (``import_path: serve.app:build_app``)."""
    unknown = set(args) - {"config", "set"}
    if unknown:
        raise ValueError(f"unknown application args {sorted(unknown)}; expected 'config' and 'set'")
    cfg = load_config(args.get("config", "configs/local.yaml"), args.get("set", []))
    return build(cfg)
