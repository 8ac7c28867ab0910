"""``jobs.ray_runtime.init_ray``: a local cluster it starts gets Serve's throughput-optimised data
plane in its environment before Ray starts (Ray's processes inherit it); a variable already set
wins; a cluster it joins is left as it is; the config can turn it off."""

from __future__ import annotations

from typing import Any

import pytest

from jobs import ray_runtime
from medgraph.config.pipeline import RayConfig


@pytest.fixture()
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``ray.init`` replaced by a recorder of the environment it would start with."""
    import os

    # a copy of the environment for the test: what init_ray sets does not outlive it
    env = {k: v for k, v in os.environ.items() if k not in ray_runtime.SERVE_THROUGHPUT_ENV and k != "RAY_ADDRESS"}
    monkeypatch.setattr(os, "environ", env)
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(ray_runtime.ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray_runtime.ray, "init", lambda **kw: calls.append({"kw": kw, "env": dict(os.environ)}))
    monkeypatch.setattr(ray_runtime.ray, "cluster_resources", lambda: {"CPU": 2.0})
    return calls


def test_a_local_cluster_starts_with_grpc_between_replicas(started: list[dict[str, Any]]) -> None:
    ray_runtime.init_ray(RayConfig(num_cpus=2))
    env = started[0]["env"]
    assert env["RAY_SERVE_THROUGHPUT_OPTIMIZED"] == "1"
    assert env["RAY_SERVE_ENABLE_DIRECT_INGRESS"] == "0"  # the app's own HTTP proxy and port stay
    assert env["RAY_SERVE_LOG_TO_STDERR"] == "1"


def test_an_operators_setting_wins(started: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_SERVE_ENABLE_DIRECT_INGRESS", "1")
    ray_runtime.init_ray(RayConfig(num_cpus=2))
    assert started[0]["env"]["RAY_SERVE_ENABLE_DIRECT_INGRESS"] == "1"


def test_off_in_the_config_or_when_joining_a_cluster(started: list[dict[str, Any]]) -> None:
    ray_runtime.init_ray(RayConfig(num_cpus=2, serve_throughput_optimized=False))
    ray_runtime.init_ray(RayConfig(address="ray://head:10001"))
    assert started[1]["kw"]["address"] == "ray://head:10001"
    for call in started:
        assert not any(name in call["env"] for name in ray_runtime.SERVE_THROUGHPUT_ENV)
