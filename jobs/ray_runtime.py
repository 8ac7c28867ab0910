"""Starting or joining Ray, the same way for every job and for the Serve app.

``address: null`` starts a local cluster sized by the config (CPU count, capped object store,
no dashboard); an address (or ``RAY_ADDRESS``, which ``ray job submit`` sets) joins a cluster.
"""

from __future__ import annotations

import logging
import os

import ray

from medgraph.config.models import RayConfig

log = logging.getLogger(__name__)


def init_ray(cfg: RayConfig) -> None:
    if ray.is_initialized():
        return
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    address = cfg.address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, log_to_driver=True)
        log.info("joined Ray cluster at %s", address)
        return
    ray.init(
        num_cpus=cfg.num_cpus,
        object_store_memory=cfg.object_store_memory_mb * 1024 * 1024,
        include_dashboard=cfg.include_dashboard,
        log_to_driver=True,
        configure_logging=True,
        logging_level=logging.WARNING,
    )
    log.info("started local Ray with %s CPUs", ray.cluster_resources().get("CPU"))
