"""On-the-fly ingestion of fetched literature into the live stores.

Input: ``LiteratureRecord`` documents (from ``PubMedSource``, ``LocalDirectorySource`` ...).
Output: their chunks, mentions and vectors in the graph and vector stores the retriever reads, and
an ``IngestReport`` (documents and chunks written, mentions, skipped documents with the reason).

The documents go through the corpus build's own indexing pipeline, in process
(``medgraph.index.pipeline.index_documents``: chunker, unit normalisation, NER + MeSH linking,
embedder, each document failing alone) and ``CorpusWriter`` (vectors first, then graph chunks,
then the document is marked complete), so a fetched abstract is indexed exactly as it would be by a
corpus build. Idempotent: a document already complete in the store with the same content
hash is skipped; one complete with other content is skipped too unless ``replace_existing`` (a
fetched abstract does not overwrite a curated corpus document of the same ID). With embedded
stores the caller must be the stores' single owner process (the Serve retriever).
After an ingest, call ``Retriever.refresh()`` so the graph path sees the new chunks.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from medgraph.config import MedGraphConfig
from medgraph.embed.base import Embedder
from medgraph.index.pipeline import IndexModels, index_documents
from medgraph.index.writer import CorpusWriter
from medgraph.ingest.chunking import Chunker
from medgraph.ingest.loaders import parse_plain_text
from medgraph.ingest.text import detect_language
from medgraph.link import EntityExtractor
from medgraph.literature.base import LiteratureRecord
from medgraph.schemas import Document
from medgraph.stores.graph import GraphStore

log = logging.getLogger(__name__)


@dataclass
class IngestReport:
    doc_ids: list[str] = field(default_factory=list)  # documents written
    chunk_ids: list[str] = field(default_factory=list)
    mentions: int = 0
    skipped: list[str] = field(default_factory=list)  # "<doc_id>: <reason>"
    seconds: float = 0.0


def record_to_document(record: LiteratureRecord) -> Document:
    """A literature record as a corpus ``Document`` (``ValueError`` when it has no ID or no text)."""
    if not record.doc_id.strip():
        raise ValueError("record has no doc_id")
    sections = parse_plain_text(record.text)
    if not sections:
        raise ValueError("record has no text")
    source_id = f"PMID:{record.pmid}" if record.pmid else (record.url or record.doc_id)
    metadata: dict[str, Any] = {"source": record.source, "url": record.url}
    if record.year is not None:
        metadata["year"] = record.year
    return Document(
        doc_id=record.doc_id, title=record.title or record.doc_id,
        language=record.language or detect_language(f"{record.title} {record.text[:500]}"),
        sections=sections, source_id=source_id, source_path=record.url or record.source, metadata=metadata,
    )


class LiveIngestor:
    """Indexes literature records into live stores; see the module docstring."""

    def __init__(
        self, cfg: MedGraphConfig, graph: GraphStore, vectors: Any, extractor: EntityExtractor, embedder: Embedder,
        replace_existing: bool = False,
    ) -> None:
        self.cfg = cfg
        self.graph, self.vectors = graph, vectors
        self.extractor, self.embedder = extractor, embedder
        self.models = IndexModels(Chunker(cfg.chunking), extractor, embedder, cfg.normalise.enabled)
        self.writer = CorpusWriter(graph, vectors, extractor.vocab.get)
        self.replace_existing = replace_existing
        self._lock = threading.Lock()  # one ingest at a time: the writer is the stores' single writer
        self._collection_ready = False

    def ingest(self, records: Sequence[LiteratureRecord]) -> IngestReport:
        started = time.perf_counter()
        with self._lock:
            report = IngestReport()
            docs = self._new_documents(records, report.skipped)
            if docs:
                self._write(docs, report)
        report.seconds = round(time.perf_counter() - started, 4)
        log.info("ingested %d documents (%d chunks, %d mentions), skipped %d in %.2f s",
                 len(report.doc_ids), len(report.chunk_ids), report.mentions, len(report.skipped), report.seconds)
        return report

    def _new_documents(self, records: Sequence[LiteratureRecord], skipped: list[str]) -> list[Document]:
        """The records to write, as documents; the others are added to ``skipped`` with the reason."""
        known = self.graph.document_hashes(complete_only=True)
        docs: dict[str, Document] = {}
        for record in records:
            try:
                doc = record_to_document(record)
            except ValueError as exc:
                skipped.append(f"{record.doc_id or '?'}: {exc}")
                continue
            if doc.doc_id in docs:
                skipped.append(f"{doc.doc_id}: duplicate in this batch")
            elif known.get(doc.doc_id) == doc.content_hash:
                skipped.append(f"{doc.doc_id}: already in the store")
            elif doc.doc_id in known and not self.replace_existing:
                skipped.append(f"{doc.doc_id}: in the store with other content (kept)")
            else:
                docs[doc.doc_id] = doc
        return list(docs.values())

    def _write(self, docs: list[Document], report: IngestReport) -> None:
        if not self._collection_ready and self.vectors is not None:
            self.vectors.ensure_collection(self.embedder.dim, self.embedder.sparse_idf)
            self._collection_ready = True
        batch = index_documents(docs, self.models)
        stats = self.writer.write(batch.items)
        complete = set(stats.documents_completed)
        report.doc_ids = [d.doc_id for d in docs if d.doc_id in complete]
        report.chunk_ids = [it.chunk.chunk_id for it in batch.items if it.chunk.doc_id in complete]
        report.mentions = stats.mentions
        failed = {f.doc_id: f for f in batch.failures}
        report.skipped.extend(
            f"{d.doc_id}: {failed[d.doc_id].stage} failed: {failed[d.doc_id].reason}" if d.doc_id in failed
            else f"{d.doc_id}: not written" for d in docs if d.doc_id not in complete)
