"""The Serve application builder: ``import_path: serve.app:build_app`` in configs/serve/*.yaml.

    serve run configs/serve/local.yaml            # or: serve deploy configs/serve/local.yaml
    python -m serve.demo --question "..."         # build + serve + ask, in one process

``args`` of the Serve config: ``config`` (path to a MedGraph config, default configs/local.yaml)
and ``set`` (a list of ``a.b=c`` overrides). Replicas and resources of each deployment come from
the ``serve:`` section of that config. With embedded stores the retriever is the single owner
of the store files, so it is forced to one replica.
"""

from __future__ import annotations

import logging
from typing import Any

from ray import serve
from ray.serve.deployment import Application

from medgraph.config import MedGraphConfig, load_config
from medgraph.config.models import DeploymentConfig, ServeConfig
from serve.api import Ingress
from serve.services import AnalyzerService, AnswererService, RerankerService, RetrieverService

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
            log.warning("embedded stores have one owner process: running %s with 1 replica", name)
        opts["num_replicas"] = 1
    elif d.autoscaling:
        opts["autoscaling_config"] = dict(d.autoscaling)
    else:
        opts["num_replicas"] = d.num_replicas
    return opts


def build(cfg: MedGraphConfig) -> Application:
    s = cfg.serve
    analyzer = serve.deployment(AnalyzerService).options(**_options("analyzer", s.analyzer, s)).bind(cfg)
    retriever = serve.deployment(RetrieverService).options(
        **_options("retriever", s.retriever, s, single_owner=cfg.stores.embedded)).bind(cfg)
    reranker = serve.deployment(RerankerService).options(**_options("reranker", s.reranker, s)).bind(cfg)
    answerer = serve.deployment(AnswererService).options(**_options("answerer", s.answerer, s)).bind(cfg)
    ingress = serve.deployment(Ingress).options(**_options("ingress", s.ingress, s))
    return ingress.bind(cfg.serve, analyzer, retriever, reranker, answerer)


def build_app(args: dict[str, Any]) -> Application:
    """Serve's application builder (``import_path: serve.app:build_app``)."""
    unknown = set(args) - {"config", "set"}
    if unknown:
        raise ValueError(f"unknown application args {sorted(unknown)}; expected 'config' and 'set'")
    cfg = load_config(args.get("config", "configs/local.yaml"), args.get("set", []))
    return build(cfg)
