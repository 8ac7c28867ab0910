"""Deployment options built from the ``serve:`` config section."""

from __future__ import annotations

from medgraph.config.models import DeploymentConfig, ServeConfig
from serve.app import _options


def test_options_carry_resources_replicas_and_logging() -> None:
    d = DeploymentConfig(num_replicas=3, num_cpus=0.2, num_gpus=0.5, max_ongoing_requests=7)
    opts = _options("reranker", d, ServeConfig())
    assert opts["name"] == "reranker" and opts["num_replicas"] == 3 and opts["max_ongoing_requests"] == 7
    assert opts["ray_actor_options"] == {"num_cpus": 0.2, "num_gpus": 0.5}
    assert opts["logging_config"] == {"enable_access_log": False, "log_level": "INFO"}
    loud = _options("reranker", d, ServeConfig(access_log=True, log_level="DEBUG"))
    assert loud["logging_config"] == {"enable_access_log": True, "log_level": "DEBUG"}


def test_autoscaling_and_the_single_owner_rule() -> None:
    auto = DeploymentConfig(autoscaling={"min_replicas": 0, "max_replicas": 4, "target_ongoing_requests": 2})
    opts = _options("answerer", auto, ServeConfig())
    assert opts["autoscaling_config"]["max_replicas"] == 4 and "num_replicas" not in opts
    owner = _options("retriever", auto, ServeConfig(), single_owner=True)
    assert owner["num_replicas"] == 1 and "autoscaling_config" not in owner
