"""Graph store benchmark: write throughput and PPR latency, Neo4j + GDS vs the embedded store.

Input: two batch streams, written through the ``GraphStore`` calls the corpus writer makes
(``upsert_documents``, ``upsert_chunks``, ``complete_documents`` per batch of ``--batch`` chunks):
``demo``: the PubMedQA demo abstracts (``data/demo/pubmedqa_demo.json``) chunked and linked by the
offline tier (``configs/local.yaml``); ``synthetic``: ``--mentions`` (default 100,000) mentions of
a seeded random bipartite graph (~3.3 entities per chunk, Zipf entity popularity).
Then ``--queries`` PPR queries per graph (1–3 seeds drawn in proportion to mention counts, unit
weights, damping 0.5, top 10).

Output: JSON on stdout. Per graph: write throughput (mentions/s) of the embedded store, of Neo4j
with one writer and with ``--writers`` concurrent writers (final counts checked equal); PPR p50/p95
latency of the embedded store (``PPRIndex``), of GDS on the store's named projection (the
projection time reported apart: it is paid once per write generation), and of GDS on a per-query
Cypher projection of the seeds' 2-hop subgraph (seeds → chunks → entities → all their chunks; the
strategy the store does not use); top-10 overlap of each with the exact PPR (ties counted as hits).

Uses the Neo4j at ``--uri`` (default the dev server, ``make neo4j-start``) and removes every
MedGraph node from it (``--wipe`` is required to say so).

    python benchmarks/graph_store.py --wipe [--mentions 100000] [--queries 50] [--writers 4]
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from medgraph.config.models import EmbeddedGraphStoreConfig, Neo4jGraphStoreConfig
from medgraph.eval.metrics import overlap_at  # noqa: E402
from medgraph.graph.ppr import PPRIndex
from medgraph.schemas import Chunk, Entity, Mention
from medgraph.stores import neo4j_cypher
from medgraph.stores.factory import make_graph_store
from medgraph.stores.graph import DocumentRecord

REPO = Path(__file__).resolve().parents[1]
DAMPING, TOP = 0.5, 10
Batch = tuple[list[DocumentRecord], list[Chunk], list[Mention], list[Entity]]
_WIPE = "MATCH (n) WHERE n:Entity OR n:Chunk OR n:Document OR n:Run OR n:Failure DETACH DELETE n"
_SUBGRAPH = """
MATCH (s:Entity) WHERE s.mesh_id IN $seeds
OPTIONAL MATCH (s)-[:MENTIONED_IN]->(:Chunk)<-[:MENTIONED_IN]-(n:Entity)
WITH collect(DISTINCT s) + collect(DISTINCT n) AS entities
UNWIND entities AS e
WITH DISTINCT e
MATCH (e)-[m:MENTIONED_IN]->(c:Chunk)
WITH e, c, count(m) AS w
WITH gds.graph.project($graph, e, c, {sourceNodeLabels: ['Entity'], targetNodeLabels: ['Chunk'],
     relationshipType: 'MENTIONED_IN', relationshipProperties: {weight: toFloat(w)}},
     {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.nodeCount AS nodes, g.relationshipCount AS rels
"""


# --- batch streams -------------------------------------------------------------------------


def demo_stream(batch: int) -> list[Batch]:
    """The PubMedQA demo abstracts, chunked and linked with the offline tier of configs/local.yaml."""
    from medgraph.assemble import load_extractor
    from medgraph.config import load_config
    from medgraph.ingest.chunking import Chunker
    from medgraph.ingest.loaders import pubmedqa_document
    from medgraph.ontology.build import load_or_build

    cfg = load_config(REPO / "configs" / "local.yaml")
    vocab = load_or_build(cfg.vocabulary)
    extractor, chunker = load_extractor(cfg, vocab), Chunker(cfg.chunking)
    path = REPO / "data" / "demo" / "pubmedqa_demo.json"
    data = json.loads(path.read_text())
    items: list[tuple[Chunk, list[Mention], str]] = []
    for pmid in sorted(data):
        doc = pubmedqa_document(pmid, data[pmid], path)
        for c in chunker.chunk(doc):
            mentions = [m for m in extractor.extract(c.text, c.language) if m.mesh_id]
            for m in mentions:
                m.chunk_id = c.chunk_id
            items.append((c, mentions, doc.source_id))
    return _batches(items, batch, lambda mesh_id: vocab.get(mesh_id) or Entity(mesh_id, mesh_id, ""))


def synthetic_stream(mentions: int, batch: int, seed: int = 0) -> list[Batch]:
    """~``mentions`` mentions: 1 + Poisson(2.3) per chunk, Zipf entity popularity, 8 chunks a document."""
    rng = np.random.default_rng(seed)
    n_chunk = max(1, round(mentions / 3.3))
    n_ent = max(2, n_chunk // 6)
    popularity = 1.0 / np.arange(1, n_ent + 1)
    per_chunk = 1 + rng.poisson(2.3, n_chunk)
    ents = rng.choice(n_ent, size=int(per_chunk.sum()), p=popularity / popularity.sum())
    items, pos = [], 0
    for j, k in enumerate(per_chunk.tolist()):
        doc = f"doc{j // 8:06d}"
        c = Chunk(f"{doc}-c{j:07d}", doc, j % 8, f"chunk {j}", ["Abstract"], f"{doc}-p", "", 50, "en",
                  title=doc, doc_hash="h", doc_chunk_count=min(8, n_chunk - (j // 8) * 8))
        ms = [Mention(4 * i, 4 * i + 3, f"e{e}", f"D{e:06d}", "Disease", "exact", 1.0, c.chunk_id)
              for i, e in enumerate(ents[pos:pos + k].tolist())]
        pos += k
        items.append((c, ms, f"SYN:{doc}"))
    return _batches(items, batch, lambda mesh_id: Entity(mesh_id, f"entity {mesh_id}", "Disease"))


def _batches(items: list[tuple[Chunk, list[Mention], str]], size: int,
             entity: Callable[[str], Entity]) -> list[Batch]:
    out: list[Batch] = []
    for i in range(0, len(items), size):
        part = items[i:i + size]
        docs = {c.doc_id: DocumentRecord(c.doc_id, c.title, c.language, c.doc_hash, c.doc_chunk_count, src)
                for c, _, src in part}
        mentions = [m for _, ms, _ in part for m in ms]
        out.append((list(docs.values()), [c for c, _, _ in part], mentions,
                    [entity(e) for e in sorted({m.mesh_id for m in mentions if m.mesh_id})]))
    return out


# --- writes --------------------------------------------------------------------------------


def write(store: Any, batches: list[Batch], writers: int = 1) -> dict[str, Any]:
    """Write the stream with ``writers`` threads (batches dealt round-robin); mentions/s."""

    def work(mine: list[Batch]) -> None:
        for docs, chunks, mentions, entities in mine:
            store.upsert_documents(docs)
            store.upsert_chunks(chunks, mentions, entities)
            store.complete_documents([d.doc_id for d in docs])

    start = time.perf_counter()
    with ThreadPoolExecutor(writers) as pool:  # a writer's exception is raised here
        list(pool.map(work, [batches[t::writers] for t in range(writers)]))
    seconds = time.perf_counter() - start
    n = sum(len(b[2]) for b in batches)
    return {"writers": writers, "seconds": round(seconds, 2), "mentions_per_s": round(n / seconds, 1),
            "chunks_per_s": round(sum(len(b[1]) for b in batches) / seconds, 1), "counts": store.counts()}


# --- PPR -----------------------------------------------------------------------------------


def draw_queries(index: PPRIndex, n: int, seed: int = 1) -> list[dict[str, float]]:
    rng = np.random.default_rng(seed)
    p = index.ent_degree / index.ent_degree.sum()
    return [{index.entity_ids[i]: 1.0 for i in rng.choice(len(p), size=int(rng.integers(1, 4)), replace=False, p=p)}
            for _ in range(n)]


def latency(fn: Callable[[dict[str, float]], list[str]], queries: list[dict[str, float]],
            exact: list[dict[str, float]]) -> dict[str, Any]:
    fn(queries[0])  # warm-up (query plans, JIT)
    wall, hits = [], []
    for q, ex in zip(queries, exact, strict=True):
        start = time.perf_counter()
        found = fn(q)
        wall.append((time.perf_counter() - start) * 1000)
        hits.append(overlap_at(found, ex, TOP))
    return {"n": len(wall), "p50_ms": round(float(np.percentile(wall, 50)), 2),
            "p95_ms": round(float(np.percentile(wall, 95)), 2), "top10_overlap_ties": round(float(np.mean(hits)), 4)}


def gds_subgraph(store: Any) -> Callable[[dict[str, float]], list[str]]:
    """The alternative strategy: project the seeds' 2-hop subgraph per query, run PPR, drop it."""
    def run(seeds: dict[str, float]) -> list[str]:
        name = f"medgraph_sub_{uuid.uuid4().hex[:12]}"
        store.read(_SUBGRAPH, graph=name, seeds=list(seeds))
        try:
            rows = store.read(neo4j_cypher.PPR_UNIFORM, graph=name, seeds=[{"id": k, "w": w} for k, w in seeds.items()],
                               damping=DAMPING, top_k=TOP, tolerance=1e-7, iterations=24, concurrency=1)
        finally:
            store.read("CALL gds.graph.drop($g, false) YIELD graphName RETURN graphName", g=name)
        return [r["chunk_id"] for r in rows]

    return run


def bench_graph(name: str, batches: list[Batch], args: argparse.Namespace) -> dict[str, Any]:
    logging.info("%s: %d batches, %d mentions", name, len(batches), sum(len(b[2]) for b in batches))
    out: dict[str, Any] = {"batches": len(batches), "batch_chunks": args.batch}
    with tempfile.TemporaryDirectory() as tmp:
        embedded = make_graph_store(EmbeddedGraphStoreConfig(path=f"{tmp}/graph.sqlite"))
        neo = make_graph_store(Neo4jGraphStoreConfig(kind="neo4j", uri=args.uri, password_env=args.password_env))
        try:
            out["write_embedded"] = write(embedded, batches)
            for writers in (args.writers, 1):  # single writer last: the graph then stays for PPR
                wipe(neo)
                out[f"write_neo4j_{writers}"] = write(neo, batches, writers)
                assert out[f"write_neo4j_{writers}"]["counts"] == out["write_embedded"]["counts"]
            out["graph"] = out["write_embedded"].pop("counts")
            for key in (f"write_neo4j_{args.writers}", "write_neo4j_1"):
                out[key].pop("counts")
            out.update(bench_ppr(embedded, neo, args))
        finally:
            wipe(neo)
            neo.close()
            embedded.close()
    return out


def bench_ppr(embedded: Any, neo: Any, args: argparse.Namespace) -> dict[str, Any]:
    start = time.perf_counter()
    index = PPRIndex(*embedded.incidence())
    out: dict[str, Any] = {"embedded_index_build_ms": round((time.perf_counter() - start) * 1000, 1)}
    queries = draw_queries(index, args.queries)
    exact = [dict(zip(index.chunk_ids, index.exact(q, DAMPING, tol=1e-12).tolist(), strict=True)) for q in queries]
    start = time.perf_counter()
    neo.projection(force=True)
    out["gds_named_projection_ms"] = round((time.perf_counter() - start) * 1000, 1)

    def ids(store: Any) -> Callable[[dict[str, float]], list[str]]:
        return lambda q: [h.chunk_id for h in store.ppr(q, DAMPING, TOP)]

    out["ppr_embedded"] = latency(ids(embedded), queries, exact)
    out["ppr_gds_named_projection"] = latency(ids(neo), queries, exact)
    out["ppr_gds_subgraph_per_query"] = latency(gds_subgraph(neo), queries, exact)
    return out


def wipe(store: Any) -> None:
    with store._driver.session(database=store.cfg.database) as session:
        session.run(_WIPE).consume()
        session.run("CALL gds.graph.list() YIELD graphName WHERE graphName STARTS WITH 'medgraph_' "
                    "CALL gds.graph.drop(graphName, false) YIELD graphName AS g RETURN g").consume()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--uri", default="bolt://127.0.0.1:7687")
    ap.add_argument("--password-env", default="NEO4J_DEV_PASSWORD")
    ap.add_argument("--mentions", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--batch", type=int, default=256, help="chunks per write batch (the writer's batch)")
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--graphs", nargs="+", default=["demo", "synthetic"], choices=["demo", "synthetic"])
    ap.add_argument("--wipe", action="store_true", help="required: the benchmark removes MedGraph nodes")
    args = ap.parse_args()
    if not args.wipe:
        ap.error("--wipe is required: the benchmark deletes every MedGraph node in the Neo4j database")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    logging.getLogger("neo4j").setLevel(logging.WARNING)
    streams = {"demo": lambda: demo_stream(args.batch),
               "synthetic": lambda: synthetic_stream(args.mentions, args.batch)}
    result: dict[str, Any] = {"damping": DAMPING, "top_k": TOP}
    for name in args.graphs:
        result[name] = bench_graph(name, streams[name](), args)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
