"""The in-process PPR index fed from the Neo4j store agrees with GDS PageRank and follows writes.

Uses the local dev server (``cluster/neo4j/neo4j-dev.sh start && ... wait``) at
``bolt://$NEO4J_DEV_HOST:$NEO4J_DEV_PORT`` (password from ``NEO4J_DEV_PASSWORD`` if set); skips
with the reason when nothing answers, unless ``MEDGRAPH_REQUIRE_NEO4J=1``, in which case it fails.

The store's schema has no namespace, so every document, chunk and entity written here carries an
ID prefix unique to the test session, and only those are deleted afterwards (``delete_documents``
removes the chunks and the entities left without mentions), with the GDS projection this module
made. Seeds are this module's entities, whose component holds only its own chunks, so other data
in the database does not change the rankings compared here.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from medgraph.retrieve.ppr import ProcessPPR
from medgraph.schemas import Chunk, Entity, Mention
from medgraph.stores.graph import DocumentRecord
from tests.helpers import unavailable

pytestmark = pytest.mark.integration
URI = f"bolt://{os.environ.get('NEO4J_DEV_HOST', '127.0.0.1')}:{os.environ.get('NEO4J_DEV_PORT', '7687')}"
TAG = f"mgppr{uuid.uuid4().hex[:8]}"
N_ENT, N_DOCS, CHUNKS_PER_DOC = 30, 25, 4


def _unavailable(reason: str) -> None:
    unavailable(reason, "MEDGRAPH_REQUIRE_NEO4J")


def ent(i: int) -> str:
    return f"{TAG}-D{i:03d}"


def write_doc(store: Any, doc: str, chunks: list[list[int]]) -> list[str]:
    """One document of chunks, each mentioning the given entities (by number); its chunk IDs."""
    doc_id = f"{TAG}-{doc}"
    store.upsert_documents([DocumentRecord(doc_id, doc, "en", "h", len(chunks), f"TEST:{doc_id}")])
    rows: list[Chunk] = []
    mentions: list[Mention] = []
    for j, ents in enumerate(chunks):
        c = Chunk(f"{doc_id}-c{j}", doc_id, j, "text", ["Abstract"], f"{doc_id}-p", "", 5, "en", title=doc,
                  doc_hash="h", doc_chunk_count=len(chunks))
        rows.append(c)
        mentions += [Mention(4 * k, 4 * k + 3, "x", ent(e), "Disease", "exact", 1.0, c.chunk_id)
                     for k, e in enumerate(ents)]
    entities = [Entity(m, m, "Disease") for m in sorted({ent(e) for ents in chunks for e in ents})]
    store.upsert_chunks(rows, mentions, entities)
    store.complete_documents([doc_id])
    return [c.chunk_id for c in rows]


@pytest.fixture(scope="module")
def store() -> Iterator[Any]:
    from medgraph.config.models import Neo4jGraphStoreConfig
    from medgraph.stores.errors import StoreUnavailable
    from medgraph.stores.neo4j_store import Neo4jGraphStore

    try:
        neo = Neo4jGraphStore(Neo4jGraphStoreConfig(kind="neo4j", uri=URI, password_env="NEO4J_DEV_PASSWORD"))
    except StoreUnavailable as exc:
        _unavailable(f"no Neo4j answering at {URI} ({exc}); start it with cluster/neo4j/neo4j-dev.sh start "
                     "&& cluster/neo4j/neo4j-dev.sh wait")
    rng = np.random.default_rng(11)
    popularity = 1.0 / np.arange(1, N_ENT + 1)
    docs = {f"doc{d:02d}": [sorted(rng.choice(N_ENT, size=int(rng.integers(1, 4)), replace=False,
                                              p=popularity / popularity.sum()).tolist())
                            for _ in range(CHUNKS_PER_DOC)] for d in range(N_DOCS)}
    try:
        for doc, chunks in docs.items():
            write_doc(neo, doc, chunks)
        yield neo
    finally:
        neo.delete_documents([f"{TAG}-{d}" for d in [*docs, "late"]])
        projection = neo._projection
        if projection is not None:  # the projection this module made (it holds this module's nodes)
            neo.read("CALL gds.graph.drop($g, false) YIELD graphName RETURN graphName", g=projection[2])
        neo.close()


def _mine(hits: list[Any]) -> list[Any]:
    return [h for h in hits if h.chunk_id.startswith(TAG)]


def test_incidence_holds_what_was_written(store: Any) -> None:
    matrix, entities, chunks = store.incidence(page=7)  # several pages
    mine = [i for i, c in enumerate(chunks) if c.startswith(TAG)]
    assert len(mine) == N_DOCS * CHUNKS_PER_DOC and chunks == sorted(chunks) and entities == sorted(entities)
    counts = {row["mesh_id"]: row["n"] for row in store.read(
        "MATCH (e:Entity)-[m:MENTIONED_IN]->() WHERE e.mesh_id STARTS WITH $tag RETURN e.mesh_id AS mesh_id, "
        "count(m) AS n", tag=TAG)}
    degree = np.asarray(matrix.sum(axis=1)).ravel()
    assert {e: int(degree[i]) for i, e in enumerate(entities) if e.startswith(TAG)} == counts


@pytest.mark.parametrize("damping", [0.5, 0.85])
def test_process_and_gds_ppr_agree(store: Any, damping: float) -> None:
    engine = ProcessPPR(store, poll_s=3600)
    rng = np.random.default_rng(5)
    overlaps = []
    for q in range(8):
        picked = rng.choice(N_ENT, size=1 + q % 3, replace=False)
        seeds = {ent(int(e)): (1.0 if q < 4 else float(rng.uniform(0.5, 1.0))) for e in picked}
        gds = _mine(store.ppr(seeds, damping=damping, top_k=10))
        process = engine.query(seeds, damping=damping, top_k=10, tol=1e-9)
        assert gds and [h.chunk_id for h in process] and len(process) == len(gds)
        exact = dict(zip(engine.ensure_built().index.chunk_ids,
                         engine.ensure_built().index.exact(seeds, damping).tolist(), strict=True))
        kth = sorted(exact.values(), reverse=True)[len(gds) - 1]
        for hits in (gds, process):  # both are the exact top 10 (a chunk tied with the 10th counts)
            assert all(exact[h.chunk_id] >= kth * (1 - 1e-6) for h in hits), (seeds, hits)
        by_id = {h.chunk_id: h.score for h in process}
        for h in gds:  # same scale; GDS stops at tolerance 1e-7
            assert h.chunk_id not in by_id or by_id[h.chunk_id] == pytest.approx(h.score, rel=1e-3, abs=1e-6)
        overlaps.append(len({h.chunk_id for h in gds} & set(by_id)) / len(gds))
    assert min(overlaps) >= 0.9, overlaps


def test_the_index_follows_a_write_by_signature(store: Any) -> None:
    engine = ProcessPPR(store, poll_s=3600)
    seeds = {ent(N_ENT - 1): 1.0}  # the least popular entity
    before = engine.query(seeds)
    signature = store.graph_signature()
    assert engine.state is not None and engine.state.signature == signature
    engine.check(wait=True)
    assert engine.stats()["generation"] == 1  # unchanged signature: no rebuild
    new = write_doc(store, "late", [[N_ENT - 1, N_ENT + 5]])
    assert store.graph_signature() != signature
    assert new[0] not in [h.chunk_id for h in engine.query(seeds)]  # the old index until the swap
    engine.check(wait=True)
    after = engine.query(seeds)
    assert engine.stats()["generation"] == 2 and new[0] in [h.chunk_id for h in after]
    assert [h.chunk_id for h in after] != [h.chunk_id for h in before]
    # GDS sees the same new chunk
    assert new[0] in [h.chunk_id for h in store.ppr(seeds, 0.5, 50)]
