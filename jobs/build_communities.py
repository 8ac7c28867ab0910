"""Community build job: co-occurrence graph → hierarchical Leiden → summaries → stores.

    python -m jobs.build_communities --config configs/local.yaml [--full] [--set a.b=c ...] [--json]
    ray job submit --working-dir . -- python -m jobs.build_communities --config configs/cluster.yaml

Run it after a corpus build (``jobs.build_corpus``). The driver reads the entity–chunk graph from
the graph store, derives the co-occurrence graph, runs seeded hierarchical Leiden where the graph
lives (graspologic-native for the embedded store, ``gds.leiden`` for Neo4j) and plans what
changed; the summaries are written on a Ray Data actor pool (``communities.pool``), one
community per row, so a slow model-tier summariser scales out; the driver embeds the summaries
with the chunk embedder and writes ``(:Community)`` records with ``MEMBER_OF`` edges to the graph
store and the summaries to ``<collection><communities.collection_suffix>``.

Incremental (see ``medgraph.community.build``): an unchanged graph with unchanged settings is a
no-op (``status: up_to_date``); otherwise the partition is recomputed and only communities whose
members or evidence changed are summarised again. ``--full`` re-summarises every community. A
summary that fails is recorded (stage ``community_summary``, in the summary and the store's
``failures``), its community is stored without a summary and retried on the next run. The run
is recorded in the graph store (``runs``, ``info.job = build_communities``).
"""

from __future__ import annotations

import argparse
import logging
import pickle
import sys
import time
import uuid
from typing import Any

import numpy as np

from jobs.cli import finish, job_parser, start_logging
from medgraph.community.build import (
    cooccurrence,
    detect,
    make_summariser,
    plan,
    settings_signature,
    summary_inputs,
)
from medgraph.community.index import index_summaries, summary_store
from medgraph.community.summarise import SummaryInput
from medgraph.config import MedGraphConfig, load_config
from medgraph.graph.communities import Community
from medgraph.schemas import Failure

log = logging.getLogger("medgraph.build_communities")
STAGE = "community_summary"


class Summarise:
    """Ray Data stage: pickled ``SummaryInput`` rows → pickled summarised ``Community`` rows."""

    def __init__(self, cfg: MedGraphConfig) -> None:
        self.summariser = make_summariser(cfg)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        out, errors = [], []
        for blob in batch["item"]:
            item: SummaryInput = pickle.loads(blob)
            try:
                out.append(pickle.dumps(self.summariser.summarise(item)))
                errors.append("")
            except Exception as exc:  # noqa: BLE001 - one community's failure is recorded, the job goes on
                out.append(pickle.dumps(item.community))
                errors.append(f"{type(exc).__name__}: {exc}")
        return {"community": np.array(out, dtype=object), "error": np.array(errors, dtype=object)}


def summarise_on_ray(cfg: MedGraphConfig, items: list[SummaryInput]) -> list[tuple[Community, str]]:
    """Summaries of ``items`` on the ``communities.pool`` actor pool: (community, error or "")."""
    import ray.data

    from jobs.ray_runtime import init_ray

    init_ray(cfg.ray)
    pool = cfg.communities.pool
    ds = ray.data.from_items([{"item": pickle.dumps(i)} for i in items],
                             override_num_blocks=max(1, min(len(items), 4 * pool.max_actors)))
    ds = ds.map_batches(
        Summarise, fn_constructor_kwargs={"cfg": cfg}, batch_size=pool.batch_size, batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(min_size=pool.min_actors, max_size=pool.max_actors),
        num_cpus=pool.num_cpus, **({"num_gpus": pool.num_gpus} if pool.num_gpus else {}),
    )
    out: list[tuple[Community, str]] = []
    last = time.monotonic()
    for batch in ds.iter_batches(batch_size=64, batch_format="numpy"):
        out.extend((pickle.loads(c), str(e)) for c, e in zip(batch["community"], batch["error"], strict=True))
        if time.monotonic() - last >= 5.0:
            last = time.monotonic()
            log.info("summarised %d / %d communities", len(out), len(items))
    return out


def build_communities(cfg: MedGraphConfig, full: bool = False, run_id: str | None = None) -> dict[str, Any]:
    """Run the whole build; returns the summary that is also recorded as the run's status."""
    from medgraph.embed import make_embedder
    from medgraph.stores import make_graph_store, make_vector_store

    started = time.time()
    run_id = run_id or "communities-" + time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
    cc = cfg.communities
    graph, vectors = make_graph_store(cfg.stores.graph), make_vector_store(cfg.stores.vector)
    summaries = summary_store(vectors, cc)
    graph.start_run(run_id, {"job": "build_communities", "full": full})
    summary: dict[str, Any] = {"run_id": run_id, "status": "failed", "full": full}
    failures: list[Failure] = []
    try:
        cooc = cooccurrence(graph, cc)
        meta = graph.community_meta()
        summary.update(entities=len(cooc.nodes), edges=len(cooc.edges))
        unchanged = (meta.get("graph") == cooc.signature() and meta.get("settings") == settings_signature(cc)
                     and summaries.client.collection_exists(summaries.collection))
        if unchanged and not full:
            summary.update(status="up_to_date", communities=meta.get("communities", 0), summarised=0,
                           reused=meta.get("communities", 0), removed=0)
            return summary
        detection = detect(graph, cc, cooc)
        work = plan(graph, detection, cc, full)
        log.info("%d communities (%s, %.2f s, modularity %.3f): %d to summarise, %d reused, %d removed",
                 len(work.communities), detection.backend, detection.seconds, detection.modularity,
                 len(work.todo), len(work.reused), len(work.removed))
        t0 = time.perf_counter()
        items = summary_inputs(graph, work.todo, cooc, work.evidence, cc.summary_entities)
        done = summarise_on_ray(cfg, items) if items else []
        summarise_s = time.perf_counter() - t0
        fresh = {c.community_id: c for c, error in done if not error}
        for c, error in done:
            if error:
                failures.append(Failure(c.community_id, STAGE, error))
        stored = [fresh.get(c.community_id, c) for c in work.communities]
        graph.replace_communities(stored, {
            "graph": cooc.signature(), "settings": settings_signature(cc), "run_id": run_id,
            "communities": len(stored), "backend": detection.backend, "modularity": detection.modularity,
            "built_at": time.time()})
        t1 = time.perf_counter()
        index_summaries(summaries, make_embedder(cfg.embedding), list(fresh.values()),
                        work.removed + [f.source for f in failures])
        graph.record_failures(run_id, failures)
        summary.update(
            status="succeeded", communities=len(stored), levels=len({c.level for c in stored}),
            summarised=len(fresh), reused=len(work.reused), removed=len(work.removed),
            backend=detection.backend, detect_s=round(detection.seconds, 3),
            modularity=round(detection.modularity, 4), summarise_s=round(summarise_s, 3),
            index_s=round(time.perf_counter() - t1, 3))
        return summary
    finally:
        summary["failures"] = [{"source": f.source, "stage": f.stage, "reason": f.reason} for f in failures]
        summary["seconds"] = round(time.time() - started, 2)
        graph.finish_run(run_id, summary["status"], summary)
        graph.close()
        vectors.close()


def summary_text(summary: dict[str, Any]) -> str:
    return (f"run {summary['run_id']}: {summary['status']} in {summary['seconds']} s; "
            f"{summary.get('communities', 0)} communities ({summary.get('summarised', 0)} summarised, "
            f"{summary.get('reused', 0)} reused, {summary.get('removed', 0)} removed), "
            f"{len(summary['failures'])} failures")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = job_parser("jobs.build_communities", __doc__)
    ap.add_argument("--full", action="store_true", help="re-summarise every community")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start_logging()
    summary = build_communities(load_config(args.config, args.overrides), args.full, args.run_id)
    return finish(summary, args, summary_text, ok=("succeeded", "up_to_date"))


if __name__ == "__main__":
    sys.exit(main())
