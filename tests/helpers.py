"""Helpers shared by test modules (plain functions, not fixtures)."""

from __future__ import annotations

from typing import Any

from medgraph.stores import make_graph_store, make_vector_store


def store_counts(cfg: Any) -> dict[str, int]:
    """Graph-store counts plus the vector count, for the stores a config points at."""
    graph, vectors = make_graph_store(cfg.stores.graph), make_vector_store(cfg.stores.vector)
    try:
        return {**graph.counts(), "vectors": vectors.count()}
    finally:
        graph.close()
        vectors.close()
