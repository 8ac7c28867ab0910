"""Community detection and summary benchmark: hierarchical Leiden vs a Louvain baseline.

Input: two graphs. ``demo``: the entity–chunk graph of an embedded store (``--graph-db``, default
``.medgraph/graph.sqlite``, the ``make demo`` corpus; copied first, never written); ``synthetic``:
the seeded random bipartite graph of ``benchmarks/graph_store.py`` (``--mentions``, default
100,000: ~3.3 entities per chunk, Zipf entity popularity). Each becomes its co-occurrence graph
(``medgraph.graph.cooccurrence``).

Output: JSON on stdout. Per graph: nodes and edges; the co-occurrence build time; hierarchical
Leiden (graspologic-native, ``configs/local.yaml`` ``communities:``, seeded) time, level-0
modularity and community counts per level; the baseline in the same run, networkx Louvain
(seeded, same resolution): its time and modularity, and the ratios (Leiden time / Louvain time,
Leiden modularity / Louvain modularity). For ``demo`` also the summary build: extractive summaries
of every community (evidence reads from the store included), total and per community. With
``--neo4j --wipe`` each graph is also written to the Neo4j at ``--uri`` and detected with
``gds.leiden`` (time, modularity, adjusted Rand index against graspologic); ``--wipe`` says that
every MedGraph node there is removed.

    python benchmarks/communities.py [--mentions 100000] [--graphs demo synthetic] [--neo4j --wipe]
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.graph_store import synthetic_stream, write  # noqa: E402
from medgraph.community.build import detect, plan, summary_inputs  # noqa: E402
from medgraph.community.summarise import ExtractiveSummariser  # noqa: E402
from medgraph.config import load_config  # noqa: E402
from medgraph.config.models import CommunitiesConfig, Neo4jGraphStoreConfig  # noqa: E402
from medgraph.graph.cooccurrence import CooccurrenceGraph, build_cooccurrence, modularity  # noqa: E402
from medgraph.graph.leiden import adjusted_rand_index, partition  # noqa: E402
from medgraph.stores.embedded import EmbeddedGraphStore  # noqa: E402


def louvain(graph: CooccurrenceGraph, cfg: CommunitiesConfig) -> dict[str, Any]:
    """The baseline: networkx Louvain on the same weighted graph, seeded."""
    import networkx as nx

    g = nx.Graph()
    g.add_weighted_edges_from(graph.edges)
    started = time.perf_counter()
    parts = nx.community.louvain_communities(g, weight="weight", resolution=cfg.resolution, seed=cfg.seed)
    seconds = time.perf_counter() - started
    labels = {n: str(i) for i, part in enumerate(parts) for n in part}
    return {"seconds": round(seconds, 3), "modularity": round(modularity(graph.edges, labels, cfg.resolution), 4),
            "communities": len(parts)}


def bench(store: Any, cfg: CommunitiesConfig, summaries: bool) -> tuple[dict[str, Any], Any]:
    started = time.perf_counter()
    graph = build_cooccurrence(store.entity_chunk_pairs(), cfg.min_weight)
    cooc_s = time.perf_counter() - started
    detection = detect(store, cfg, graph)
    levels: dict[int, int] = {}
    for c in detection.communities:
        levels[c.level] = levels.get(c.level, 0) + 1
    base = louvain(graph, cfg)
    out: dict[str, Any] = {
        "entities": len(graph.nodes), "edges": len(graph.edges), "cooccurrence_s": round(cooc_s, 3),
        "leiden": {"backend": detection.backend, "seconds": round(detection.seconds, 3),
                   "modularity": round(detection.modularity, 4), "communities_per_level": levels},
        "louvain_baseline": base,
        "ratio_time_leiden_over_louvain": round(detection.seconds / max(base["seconds"], 1e-9), 3),
        "ratio_modularity_leiden_over_louvain": round(detection.modularity / max(base["modularity"], 1e-9), 3),
    }
    if summaries:
        t0 = time.perf_counter()
        work = plan(store, detection, cfg, full=True)
        items = summary_inputs(store, work.todo, graph, work.evidence, cfg.summary_entities)
        read_s = time.perf_counter() - t0
        summariser = ExtractiveSummariser(cfg.summary_entities, cfg.summary_sentences)
        t1 = time.perf_counter()
        done = [summariser.summarise(i) for i in items]
        write_s = time.perf_counter() - t1
        out["summaries"] = {
            "communities": len(done), "evidence_read_s": round(read_s, 3), "summarise_s": round(write_s, 3),
            "total_s": round(read_s + write_s, 3),
            "ms_per_community": round(1000 * (read_s + write_s) / max(len(done), 1), 2),
            "citations_per_summary": round(sum(len(c.citations) for c in done) / max(len(done), 1), 2)}
    return out, detection


def bench_neo4j(store: Any, cfg: CommunitiesConfig, local: Any, args: argparse.Namespace) -> dict[str, Any]:
    from medgraph.stores.neo4j_store import Neo4jGraphStore

    neo = Neo4jGraphStore(Neo4jGraphStoreConfig(kind="neo4j", uri=args.uri, password_env=args.password_env))
    try:
        _wipe(neo)
        chunks = store.get_chunks(sorted({c for _, c, _ in store.entity_chunk_pairs()}))
        ids = [c.chunk_id for c in chunks]
        for start in range(0, len(ids), 500):
            part = chunks[start:start + 500]
            mentions = [m for c in part for m in store.chunk_mentions(c.chunk_id)]
            entities = [e for e in (store.get_entity(x) for x in sorted({m.mesh_id for m in mentions if m.mesh_id}))
                        if e is not None]
            neo.upsert_chunks(part, mentions, entities)
        gds = detect(neo, cfg)
        return {"seconds": round(gds.seconds, 3), "modularity": round(gds.modularity, 4),
                "communities_level0": sum(1 for c in gds.communities if c.level == 0),
                "ari_vs_graspologic_level0": round(adjusted_rand_index(
                    partition(local.communities, 0), partition(gds.communities, 0)), 4),
                "ratio_time_gds_over_graspologic": round(gds.seconds / max(local.seconds, 1e-9), 3)}
    finally:
        _wipe(neo)
        neo.close()


def _wipe(neo: Any) -> None:
    with neo._driver.session(database=neo.cfg.database) as session:
        session.run("MATCH (n) WHERE n:Entity OR n:Chunk OR n:Document OR n:Run OR n:Failure OR n:Community "
                    "OR n:CommunityBuild CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graph-db", type=Path, default=REPO / ".medgraph" / "graph.sqlite")
    ap.add_argument("--mentions", type=int, default=100_000)
    ap.add_argument("--graphs", nargs="+", default=["demo", "synthetic"], choices=["demo", "synthetic"])
    ap.add_argument("--neo4j", action="store_true", help="also run gds.leiden on the Neo4j at --uri")
    ap.add_argument("--uri", default="bolt://127.0.0.1:7687")
    ap.add_argument("--password-env", default="NEO4J_DEV_PASSWORD")
    ap.add_argument("--wipe", action="store_true", help="required with --neo4j: MedGraph nodes are removed")
    args = ap.parse_args()
    if args.neo4j and not args.wipe:
        ap.error("--neo4j removes every MedGraph node from the server: pass --wipe to confirm")
    logging.basicConfig(level=logging.WARNING)
    cfg = load_config(REPO / "configs" / "local.yaml").communities
    result: dict[str, Any] = {"config": cfg.model_dump(exclude={"pool", "search"})}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.graphs:
            path = Path(tmp) / f"{name}.sqlite"
            if name == "demo":
                if not args.graph_db.is_file():
                    result[name] = {"skipped": f"{args.graph_db} not found (run make demo first)"}
                    continue
                shutil.copy(args.graph_db, path)
                store = EmbeddedGraphStore(path)
            else:
                store = EmbeddedGraphStore(path)
                write(store, synthetic_stream(args.mentions, 2048))
            result[name], detection = bench(store, cfg, summaries=name == "demo")
            if args.neo4j:
                result[name]["gds"] = bench_neo4j(store, cfg, detection, args)
            store.close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
