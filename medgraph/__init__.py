"""MedGraph: multilingual medical GraphRAG.

The library is Ray-free: stage packages (``ingest``, ``extract``, ``link``, ``embed``, ``stores``,
``ontology``, ``eval``) hold operations over the typed records of ``medgraph.schemas``;
``jobs/`` and ``serve/`` wire them into Ray Data and Ray Serve.
"""

__version__ = "0.1.0"
