"""Starting or joining Ray, the same way for every job and for the Serve app.

``address: null`` starts a local cluster sized by the config (CPU count, capped object store,
no dashboard); an address (or ``RAY_ADDRESS``, which ``ray job submit`` sets) joins a cluster.

A local cluster gets Serve's throughput-optimised mode (``ray.serve_throughput_optimized``, on by
default): calls between deployments go over gRPC instead of Ray actor calls, which on the demo
corpus took /chat from ~8 to ~12 requests/s at 16 clients on two CPUs (docs/benchmarks.md, "Serve
load"). Of what that switch bundles, three parts are turned back: direct ingress (the app keeps its
HTTP proxy on ``serve.host:serve.port``; tests run several apps on free ports), quiet replicas
(their logs stay on the console) and user code and handle routing on the replica's main loop
(measured: no gain; and the agent's blocking handle calls from worker threads need the router's
own loop). Ray's processes read these variables when they start, so they
are set before Ray starts; a variable already in the environment wins. A cluster the config
joins carries its own (``cluster/kuberay/rayservice.yaml``).
"""

from __future__ import annotations

import logging
import os

import ray

from medgraph.config.models import RayConfig

log = logging.getLogger(__name__)

SERVE_THROUGHPUT_ENV = {
    "RAY_SERVE_THROUGHPUT_OPTIMIZED": "1",
    "RAY_SERVE_ENABLE_DIRECT_INGRESS": "0",
    "RAY_SERVE_LOG_TO_STDERR": "1",
    # the handle router keeps its own event loop, user code its own thread: the agent's model-tier
    # guard and rewriter wait on handle calls from worker threads, which Serve refuses otherwise
    "RAY_SERVE_RUN_ROUTER_IN_SEPARATE_LOOP": "1",
    "RAY_SERVE_RUN_USER_CODE_IN_SEPARATE_THREAD": "1",
}


def init_ray(cfg: RayConfig) -> None:
    if ray.is_initialized():
        return
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    address = cfg.address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, log_to_driver=True)
        log.info("joined Ray cluster at %s", address)
        return
    if cfg.serve_throughput_optimized:
        for name, value in SERVE_THROUGHPUT_ENV.items():
            os.environ.setdefault(name, value)
    ray.init(
        num_cpus=cfg.num_cpus,
        object_store_memory=cfg.object_store_memory_mb * 1024 * 1024,
        include_dashboard=cfg.include_dashboard,
        log_to_driver=True,
        configure_logging=True,
        logging_level=logging.WARNING,
    )
    log.info("started local Ray with %s CPUs", ray.cluster_resources().get("CPU"))
