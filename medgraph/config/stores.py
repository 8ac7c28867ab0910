"""Configuration of the stores: the graph store (embedded SQLite or Neo4j) and the vector store
(Qdrant local mode or a server), tagged unions on ``kind``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from medgraph.config.base import _Model


class EmbeddedGraphStoreConfig(_Model):
    kind: Literal["embedded"] = "embedded"
    path: str = "./.medgraph/graph.sqlite"


class Neo4jGraphStoreConfig(_Model):
    kind: Literal["neo4j"]
    uri: str = "bolt://127.0.0.1:7687"
    user: str = "neo4j"
    password_env: str = "NEO4J_PASSWORD"
    database: str = "neo4j"


GraphStoreConfig = Annotated[
    EmbeddedGraphStoreConfig | Neo4jGraphStoreConfig, Field(discriminator="kind")
]


class QdrantLocalConfig(_Model):
    kind: Literal["qdrant_local"] = "qdrant_local"
    path: str = "./.medgraph/qdrant"  # ":memory:" keeps the collection in memory
    collection: str = "chunks"
    upsert_batch_size: int = Field(default=256, ge=1)


class QdrantServerConfig(_Model):
    kind: Literal["qdrant_server"]
    url: str = "http://127.0.0.1:6333"
    api_key_env: str = "QDRANT_API_KEY"
    collection: str = "chunks"
    timeout_s: int = Field(default=10, ge=1)  # per request; an unreachable server fails within it
    upsert_batch_size: int = Field(default=256, ge=1)


VectorStoreConfig = Annotated[QdrantLocalConfig | QdrantServerConfig, Field(discriminator="kind")]


class StoresConfig(_Model):
    graph: GraphStoreConfig = EmbeddedGraphStoreConfig()
    vector: VectorStoreConfig = QdrantLocalConfig()

    @property
    def embedded(self) -> bool:
        """True when a store has a single owner process (local SQLite / Qdrant local mode)."""
        return self.graph.kind == "embedded" or self.vector.kind == "qdrant_local"
