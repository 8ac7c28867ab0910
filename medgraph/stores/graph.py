"""The ``GraphStore`` interface: a relation-free bipartite entity–chunk graph.

``(:Entity)-[:MENTIONED_IN]->(:Chunk)-[:FROM_DOC]->(:Document)``. Backends: the embedded store
(``medgraph.stores.embedded``: SQLite + scipy.sparse) and Neo4j. Every write is an idempotent
upsert keyed by content hashes, so a retried batch or a re-run job never duplicates.
``make_graph_store`` imports the configured backend lazily (``medgraph.stores.neo4j_store`` for
``kind: neo4j``). ``ppr`` ranks chunks by Personalized PageRank from seed entities; each backend
runs it where its graph lives (scipy.sparse in process, GDS on the Neo4j server). ``incidence`` and
``graph_signature`` let the retriever run PPR in process for any backend instead
(``retrieval.ppr_engine: process``, ``medgraph.retrieve.ppr.ProcessPPR``).

The interface is split by role, so that each user names only what it needs: ``GraphWriter`` (the
corpus build and live ingestion), ``GraphReader`` (retrieval, the agent, the explorer),
``CommunityStore`` (``medgraph.community``) and ``RunLog`` (builds, their progress and failures).
``GraphStore`` is all four; both backends implement all of it (``tests/contract``).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from medgraph.schemas import Chunk, Entity, Failure, Mention

if TYPE_CHECKING:
    import scipy.sparse as sp

    from medgraph.graph.communities import Assignment, Community
    from medgraph.graph.leiden import LeidenParams
    from medgraph.graph.ppr import PPRHit


@dataclass(frozen=True)
class DocumentRecord:
    doc_id: str
    title: str
    language: str
    content_hash: str
    n_chunks: int
    source_id: str = ""
    source_path: str = ""


@dataclass
class DeleteResult:
    documents: int = 0
    chunk_ids: list[str] = field(default_factory=list)
    entities_removed: int = 0


@dataclass(frozen=True)
class Connection:
    """How two entities are connected in the graph (``GraphStore.connecting_evidence``)."""

    chunk_ids: list[str] = field(default_factory=list)  # chunks that mention both
    bridges: list[str] = field(default_factory=list)  # entities that share a chunk with each

    @property
    def connected(self) -> bool:
        return bool(self.chunk_ids or self.bridges)


class GraphWriter(Protocol):
    """Writes of a corpus build or a live ingest: documents, their chunks and mentions, deletes."""

    def upsert_documents(self, docs: list[DocumentRecord]) -> None: ...

    def upsert_chunks(self, chunks: list[Chunk], mentions: list[Mention], entities: list[Entity]) -> None:
        """Chunks with their mentions (``Mention.chunk_id`` set) and the entities they link to."""
        ...

    def complete_documents(self, doc_ids: list[str]) -> tuple[list[str], list[str]]:
        """Mark documents whose chunks are all written as complete.

        Returns the IDs among ``doc_ids`` that are complete now (by this call or already: a batch
        written again after a retry still reports its documents, so concurrent writers' summaries
        never undercount) and the IDs of chunks of earlier versions of the documents this call
        completed, which it removed (the caller removes their vectors).
        """
        ...

    def document_hashes(self, complete_only: bool = True) -> dict[str, str]: ...

    def delete_documents(self, doc_ids: list[str]) -> DeleteResult: ...


class GraphReader(Protocol):
    """Reads of the entity–chunk graph: passages, entities, neighbourhoods, PPR and its inputs."""

    def counts(self) -> dict[str, int]: ...

    def get_chunks(self, chunk_ids: list[str]) -> list[Chunk]: ...

    def get_entity(self, mesh_id: str) -> Entity | None: ...

    def chunk_mentions(self, chunk_id: str) -> list[Mention]: ...

    def chunk_entities(self, chunk_ids: list[str]) -> dict[str, set[str]]:
        """The MeSH IDs mentioned in each of the given chunks."""
        ...

    def neighbourhood(self, mesh_id: str, hops: int = 1, limit: int = 25) -> list[tuple[str, str, int]]:
        """Co-occurrence edges ``(source, target, shared-chunk count)`` around an entity."""
        ...

    def connecting_evidence(self, a: str, b: str, limit: int = 10) -> Connection:
        """Up to ``limit`` chunks mentioning both entities and up to ``limit`` bridge entities
        (each shares a chunk with ``a`` and one with ``b``), both sorted by ID; empty when either is unknown."""
        ...

    def ppr(self, seeds: dict[str, float], damping: float = 0.5, top_k: int = 50) -> list[PPRHit]:
        """Top-``top_k`` chunks by Personalized PageRank restarting at the weighted seed entities.

        ``damping`` is the probability of following an edge (GDS ``dampingFactor``); the walk runs
        on the undirected Entity—Chunk graph weighted by mention counts. Unknown seeds are ignored.
        """
        ...

    def incidence(self) -> tuple[sp.csr_matrix, list[str], list[str]]:
        """Entity × chunk matrix (mention counts) with its sorted entity and chunk IDs: the input
        of the in-process PPR index (``medgraph.retrieve.ppr.ProcessPPR``)."""
        ...

    def graph_signature(self) -> Hashable:
        """A cheap value that changes when the entity–chunk graph does (polled to refresh the
        in-process PPR index): the embedded store's write version, Neo4j's counts + latest update."""
        ...

    def refresh(self) -> None:
        """Forget what this process cached of the graph (another process may have written): the
        embedded store's incidence matrix and PPR index; nothing for Neo4j, which reads the server."""
        ...

    def entity_chunk_pairs(self) -> list[tuple[str, str, int]]:
        """The bipartite graph as ``(mesh_id, chunk_id, mention count)`` rows (co-occurrence input)."""
        ...


class CommunityStore(Protocol):
    """Communities (``medgraph.community``): Community nodes with MEMBER_OF edges, and their input."""

    def entity_chunk_pairs(self) -> list[tuple[str, str, int]]:
        """The bipartite graph as ``(mesh_id, chunk_id, mention count)`` rows (co-occurrence input)."""
        ...

    def leiden(self, params: LeidenParams, min_weight: int = 1) -> list[Assignment] | None:
        """Hierarchical Leiden run where the graph lives (Neo4j: GDS on the server), or None where
        the store has no engine of its own (the caller runs it in process on the co-occurrence edges)."""
        ...

    def replace_communities(self, communities: list[Community], meta: dict[str, Any]) -> None:
        """Store this set of communities (with members and summaries) in place of the previous one."""
        ...

    def communities(self, level: int | None = None, members: bool = False,
                    ids: list[str] | None = None, limit: int | None = None, offset: int = 0) -> list[Community]:
        """Stored communities (one level, or the given IDs), by level then largest first;
        ``members`` loads them; ``limit`` / ``offset``: one page of that order, read as a page."""
        ...

    def community_levels(self) -> dict[int, int]:
        """Level → how many communities it has (counted in the store, none read)."""
        ...

    def entity_communities(self, mesh_ids: list[str]) -> dict[str, list[str]]:
        """MeSH ID → the IDs of the communities it belongs to, coarsest level first."""
        ...

    def community_meta(self) -> dict[str, Any]:
        """What the last community build recorded (graph signature, parameters, run ID), or {}."""
        ...


class RunLog(Protocol):
    """Corpus builds: their start, progress and end, and the documents that failed."""

    def record_failures(self, run_id: str, failures: list[Failure]) -> None: ...

    def failures(self, run_id: str | None = None, limit: int | None = None) -> list[Failure]:
        """The recorded failures (of one run), by source; at most ``limit``."""
        ...

    def failure_count(self, run_id: str | None = None) -> int:
        """How many failures are recorded (for one run), without reading them."""
        ...

    def start_run(self, run_id: str, info: dict[str, Any]) -> None: ...

    def report_progress(self, run_id: str, progress: dict[str, Any]) -> None:
        """A running build's progress, read back as the run's ``summary`` until it finishes."""
        ...

    def finish_run(self, run_id: str, status: str, summary: dict[str, Any]) -> None: ...

    def last_run(self) -> dict[str, Any] | None:
        """The latest run (by start time) as ``runs`` returns it, or None."""
        ...

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """The ``limit`` latest runs, newest first: ``run_id``, ``started``, ``finished`` (None while
        running), ``status``, ``info`` and ``summary`` (a running build's progress)."""
        ...


class GraphStore(GraphWriter, GraphReader, CommunityStore, RunLog, Protocol):
    """The whole store, as the factory builds it; users take the role they need."""

    def close(self) -> None: ...
