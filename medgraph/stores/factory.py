"""Opening the configured stores: the one place that knows every store implementation.

``make_graph_store(cfg.stores.graph)``: the embedded SQLite store or Neo4j (imported only when
chosen, so the embedded default needs no Neo4j driver). ``make_vector_store`` (Qdrant local mode
or a server) lives with the vector store.
"""

from __future__ import annotations

from medgraph.config.models import GraphStoreConfig
from medgraph.stores.graph import GraphStore


def make_graph_store(cfg: GraphStoreConfig) -> GraphStore:
    if cfg.kind == "embedded":
        from medgraph.stores.embedded import EmbeddedGraphStore

        return EmbeddedGraphStore(cfg.path)
    if cfg.kind == "neo4j":
        from medgraph.stores.neo4j_store import Neo4jGraphStore

        return Neo4jGraphStore(cfg)
    raise ValueError(f"unknown graph store kind {cfg.kind!r}")
