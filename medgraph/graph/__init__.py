"""Graph algorithms that the stores, retrieval and the community build share, below all of them.

- ``ppr``: the Personalized PageRank index over the Entity—Chunk incidence (forward push on the
  two-step entity walk) and ``PPRHit``.
- ``cooccurrence``: the entity co-occurrence graph (shared chunks) derived from the incidence.
- ``leiden``: hierarchical Leiden partitions and their comparison (adjusted Rand index).
- ``communities``: the ``Community`` / ``Assignment`` records and their citations.

Nothing here imports a store, a retriever or Ray.
"""
