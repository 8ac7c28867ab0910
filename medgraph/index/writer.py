"""Corpus writer: processed chunks → graph store + vector store, idempotently.

Input: ``IndexedChunk`` records (a chunk with its linked mentions and its vectors). Output:
upserts into the ``GraphStore`` and the ``VectorStore``; documents whose chunks are all written
are marked complete, and chunks of their earlier versions are removed from both stores.

Order of writes per batch: vectors first, then graph chunks, then the completeness check. A
document is marked complete only when the graph holds all its chunks, so a complete document
always has all its vectors; a job killed at any point leaves at worst partial documents, which
the next run redoes (upserts keyed by content hashes never duplicate).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from medgraph.schemas import Chunk, Entity, Failure, Mention
from medgraph.stores.graph import DeleteResult, DocumentRecord, GraphStore

log = logging.getLogger(__name__)


@dataclass
class IndexedChunk:
    chunk: Chunk
    mentions: list[Mention]
    dense: np.ndarray | None = None
    sparse: Any = None  # medgraph.embed.SparseVector
    source_id: str = ""
    source_path: str = ""


@dataclass
class WriteStats:
    chunks: int = 0
    mentions: int = 0
    documents_completed: list[str] = field(default_factory=list)
    stale_chunks_removed: int = 0

    def add(self, other: WriteStats) -> None:
        self.chunks += other.chunks
        self.mentions += other.mentions
        self.documents_completed.extend(other.documents_completed)
        self.stale_chunks_removed += other.stale_chunks_removed


class CorpusWriter:
    def __init__(
        self, graph: GraphStore, vectors: Any, entity_lookup: Callable[[str], Entity | None]
    ) -> None:
        self.graph = graph
        self.vectors = vectors
        self.entity_lookup = entity_lookup

    def write(self, items: list[IndexedChunk]) -> WriteStats:
        if not items:
            return WriteStats()
        self._upsert_documents(items)
        chunks = [it.chunk for it in items]
        if self.vectors is not None:
            vectors = [it.dense for it in items if it.dense is not None]
            dense = np.stack(vectors) if len(vectors) == len(items) else None
            sparse = [it.sparse for it in items] if items[0].sparse is not None else None
            self.vectors.upsert(chunks, dense, sparse)
        for it in items:
            for m in it.mentions:
                m.chunk_id = it.chunk.chunk_id
        mentions = [m for it in items for m in it.mentions if m.mesh_id]
        entities = self._entities({m.mesh_id for m in mentions if m.mesh_id})
        self.graph.upsert_chunks(chunks, mentions, entities)
        done, stale = self.graph.complete_documents([c.doc_id for c in chunks])
        if stale and self.vectors is not None:
            self.vectors.delete_chunks(stale)
        return WriteStats(len(chunks), len(mentions), done, len(stale))

    def _upsert_documents(self, items: list[IndexedChunk]) -> None:
        docs: dict[str, DocumentRecord] = {}
        for it in items:
            c = it.chunk
            docs.setdefault(c.doc_id, DocumentRecord(
                c.doc_id, c.title, c.language, c.doc_hash, c.doc_chunk_count, it.source_id, it.source_path))
        self.graph.upsert_documents(list(docs.values()))

    def _entities(self, mesh_ids: set[str]) -> list[Entity]:
        out = []
        for mesh_id in sorted(mesh_ids):
            entity = self.entity_lookup(mesh_id)
            out.append(entity if entity is not None else Entity(mesh_id, mesh_id, ""))
        return out

    def delete_documents(self, doc_ids: list[str]) -> DeleteResult:
        result = self.graph.delete_documents(doc_ids)
        if self.vectors is not None:
            self.vectors.delete_documents(doc_ids, result.chunk_ids)
        log.info("deleted %d documents, %d chunks, %d orphaned entities",
                 result.documents, len(result.chunk_ids), result.entities_removed)
        return result

    def record_failures(self, run_id: str, failures: list[Failure]) -> None:
        if failures:
            self.graph.record_failures(run_id, failures)
