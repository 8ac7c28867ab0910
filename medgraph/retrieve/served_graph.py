"""The graph as the serving path reads it: co-occurrence lookups from memory, records from the store.

Input: a graph store and the retriever's in-process index (``medgraph.retrieve.ppr.ProcessPPR``).
Output: the ``GraphReader`` calls the agent's relational channel and the gap search make —
``connecting_evidence`` and ``neighbourhood`` answered by the index generation's ``Connections``
(sparse lookups over the incidence the PPR index was built from), ``get_chunks`` and
``get_entity`` by the store. The lookups are exactly the store's answers for the graph the index
was built from, and as fresh as PPR: a write is seen once the index follows it (its signature check,
or ``Retriever.refresh`` after a live ingest).

Why: the Neo4j store answers these with Cypher traversals whose cost follows the popular entities'
degree (the relational channel took 556 ms per question at p50 and 4.9 s at p95 on a 10k-document
graph, 6.2 lookups per question; `benchmarks/relational.py`). The embedded store builds the same
lookups for its own callers (the graph explorer); the question path reads the index's, so both
stores are served alike.
"""

from __future__ import annotations

from medgraph.retrieve.ppr import ProcessPPR
from medgraph.schemas import Chunk, Entity
from medgraph.stores.graph import Connection, GraphReader


class ServedGraph:
    """``connecting_evidence`` / ``neighbourhood`` from the served index; passages and entities from the store."""

    def __init__(self, store: GraphReader, index: ProcessPPR) -> None:
        self.store = store
        self.index = index

    def connecting_evidence(self, a: str, b: str, limit: int = 10) -> Connection:
        lookups = self.index.connections()
        return Connection(lookups.both(a, b, limit), lookups.bridges(a, b, limit))

    def neighbourhood(self, mesh_id: str, hops: int = 1, limit: int = 25) -> list[tuple[str, str, int]]:
        return self.index.connections().neighbourhood(mesh_id, hops, limit)

    def get_chunks(self, chunk_ids: list[str]) -> list[Chunk]:
        return self.store.get_chunks(chunk_ids)

    def get_entity(self, mesh_id: str) -> Entity | None:
        return self.store.get_entity(mesh_id)
