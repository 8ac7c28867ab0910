"""Communities of the entity co-occurrence graph: detection (hierarchical Leiden), summaries, search.

``cooccurrence``: entity–entity edges derived from the entity–chunk graph. ``leiden``: seeded
hierarchical Leiden (graspologic-native in process; GDS on a Neo4j store). ``summarise``:
extractive summaries with citations (offline) or a DSPy summariser (model tier). ``index``:
the summaries' vector collection and the ``community`` retrieval path. ``build``: the whole
build, incremental by community content.
"""
