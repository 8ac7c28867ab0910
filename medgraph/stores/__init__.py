"""Stores: the graph store and the vector store (see their modules for inputs and outputs)."""

from medgraph.stores.factory import make_graph_store, make_vector_store
from medgraph.stores.graph import GraphStore

__all__ = ["GraphStore", "make_graph_store", "make_vector_store"]
