"""Opening the configured stores: the one place that knows every store implementation.

``make_graph_store(cfg.stores.graph)``: the embedded SQLite store or Neo4j (imported only when
chosen, so the embedded default needs no Neo4j driver). ``make_vector_store(cfg.stores.vector)``:
Qdrant in local mode (one owner process, an in-process index) or a Qdrant server (probed, so an
unreachable one is ``StoreUnavailable`` at once); raises ``StoreUnavailable`` when it cannot be
reached or locked.
"""

from __future__ import annotations

import os

from medgraph.config.models import GraphStoreConfig, QdrantLocalConfig, QdrantServerConfig
from medgraph.gcpause import gc_paused
from medgraph.stores.errors import StoreUnavailable
from medgraph.stores.graph import GraphStore
from medgraph.stores.vector import QdrantVectorStore, tune_local_persistence


def make_graph_store(cfg: GraphStoreConfig) -> GraphStore:
    if cfg.kind == "embedded":
        from medgraph.stores.embedded import EmbeddedGraphStore

        return EmbeddedGraphStore(cfg.path)
    if cfg.kind == "neo4j":
        from medgraph.stores.neo4j_store import Neo4jGraphStore

        return Neo4jGraphStore(cfg)
    raise ValueError(f"unknown graph store kind {cfg.kind!r}")


def make_vector_store(cfg: QdrantLocalConfig | QdrantServerConfig) -> QdrantVectorStore:
    """Open the configured store; raises ``StoreUnavailable`` when it cannot be reached or locked."""
    if isinstance(cfg, QdrantServerConfig):
        return _open_server(cfg)
    return _open_local(cfg)


def _open_local(cfg: QdrantLocalConfig) -> QdrantVectorStore:
    from qdrant_client import QdrantClient

    if cfg.path == ":memory:":
        return QdrantVectorStore(
            QdrantClient(location=":memory:"), cfg.collection, ":memory:", cfg.upsert_batch_size
        )
    os.makedirs(cfg.path, exist_ok=True)
    try:
        with gc_paused():  # local mode reads every point into memory here: see medgraph.gcpause
            client = QdrantClient(path=cfg.path)
    except RuntimeError as exc:  # portalocker: the path is held by another client
        raise StoreUnavailable(
            f"Qdrant local store {cfg.path} is held by another process ({exc}). Local mode allows "
            "one client per path: call the owner process, or use a Qdrant server."
        ) from exc
    tune_local_persistence(client)
    return QdrantVectorStore(client, cfg.collection, os.path.abspath(cfg.path), cfg.upsert_batch_size)


def _open_server(cfg: QdrantServerConfig) -> QdrantVectorStore:
    from qdrant_client import QdrantClient

    api_key = os.environ.get(cfg.api_key_env) or None
    client = QdrantClient(url=cfg.url, api_key=api_key, timeout=cfg.timeout_s, check_compatibility=False)
    store = QdrantVectorStore(client, cfg.collection, cfg.url, cfg.upsert_batch_size)
    try:
        _probe(store, cfg)
    except StoreUnavailable:
        store.close()
        raise
    return store


def _probe(store: QdrantVectorStore, cfg: QdrantServerConfig) -> None:
    """One cheap request, so that a wrong URL or a down server fails at start-up, not mid-job."""
    from qdrant_client.http.exceptions import UnexpectedResponse

    try:
        with store._guard("connect"):
            store.client.get_collections()
    except UnexpectedResponse as exc:
        auth = exc.status_code in (401, 403)
        hint = f"check the API key in ${cfg.api_key_env}" if auth else "is this a Qdrant server URL?"
        raise StoreUnavailable(
            f"{cfg.url} answered HTTP {exc.status_code} to a Qdrant request: {hint}"
        ) from exc
