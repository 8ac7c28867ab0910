"""The indexing pipeline: documents → chunks → normalised text → linked mentions → vectors.

One Ray-free implementation used by every writer of the index: the corpus job's Ray stages
(``jobs/stages.py`` calls the steps one by one, each on its own actor pool), the in-process index
of the retrieval and answer benchmarks, and live ingestion of fetched literature (both call
``index_documents``).

Input: ``Document`` records and the models (``IndexModels``: chunker, entity extractor, embedder).
Output: ``IndexedChunk`` records (a chunk with its linked mentions and its dense / sparse vectors)
ready for ``CorpusWriter``, and a ``Failure`` per document that could not be indexed.

Each step works on a batch but fails per document: when a step raises on a batch, it is redone
document by document, and only the documents that still raise are dropped, each with its stage
(``chunk``, ``extract``, ``embed``) and reason. A document is never half indexed by this
module: all of its chunks in the batch go on, or none do.

Normalisation rewrites units (``5mg`` → ``5 mg``) in the indexed text. Dosing-frequency codes
(``medgraph.extract.normalise.find_timings``) are a query-side feature and are not computed here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from medgraph.embed.base import Embedder
from medgraph.extract.normalise import normalise_units
from medgraph.index.writer import IndexedChunk
from medgraph.ingest.chunking import Chunker
from medgraph.schemas import Document, Failure, Mention

log = logging.getLogger(__name__)


class MentionExtractor(Protocol):
    """NER + MeSH linking of a batch of chunks (``medgraph.link.extractor.EntityExtractor``)."""

    def extract_many(self, texts: list[str], languages: list[str]) -> list[list[Mention]]: ...


@dataclass
class IndexModels:
    """What a process needs to index documents; build once per process (or Ray actor)."""

    chunker: Chunker
    extractor: MentionExtractor  # medgraph.link.EntityExtractor
    embedder: Embedder
    normalise_text: bool = True


@dataclass
class IndexedBatch:
    items: list[IndexedChunk] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)

    @property
    def doc_ids(self) -> list[str]:
        return list(dict.fromkeys(it.chunk.doc_id for it in self.items))


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _failure(item: IndexedChunk, stage: str, reason: str) -> Failure:
    return Failure(item.source_path or item.source_id or item.chunk.doc_id, stage, reason, item.chunk.doc_id)


def by_document(items: Sequence[IndexedChunk]) -> dict[str, list[IndexedChunk]]:
    groups: dict[str, list[IndexedChunk]] = {}
    for it in items:
        groups.setdefault(it.chunk.doc_id, []).append(it)
    return groups


def per_document(
    items: list[IndexedChunk], stage: str, step: Callable[[list[IndexedChunk]], None]
) -> tuple[list[IndexedChunk], list[Failure]]:
    """Run ``step`` on the whole batch; when it raises, on each document alone.

    Returns the items of the documents the step succeeded on and one failure per other document.
    """
    if not items:
        return [], []
    try:
        step(items)
        return items, []
    except Exception as batch_exc:  # find the document(s) that broke the batch
        groups = by_document(items)
        if len(groups) == 1:
            return [], [_failure(items[0], stage, _reason(batch_exc))]
    ok: list[IndexedChunk] = []
    failures: list[Failure] = []
    for group in groups.values():
        try:
            step(group)
            ok.extend(group)
        except Exception as exc:  # this document fails alone; the others go on
            failures.append(_failure(group[0], stage, _reason(exc)))
    if failures:
        log.warning("%s: %d of %d documents failed: %s", stage, len(failures), len(groups),
                    "; ".join(f"{f.doc_id}: {f.reason}" for f in failures[:3]))
    return ok, failures


def chunk_documents(docs: Iterable[Document], chunker: Chunker) -> IndexedBatch:
    """Chunks of each document (``IndexedChunk`` with no mentions or vectors yet)."""
    out = IndexedBatch()
    for doc in docs:
        try:
            chunks = chunker.chunk(doc)
        except Exception as exc:  # a document that breaks the chunker fails alone
            out.failures.append(Failure(doc.source_path or doc.doc_id, "chunk", _reason(exc), doc.doc_id))
            continue
        if not chunks:
            out.failures.append(Failure(doc.source_path or doc.doc_id, "chunk", "no text to index", doc.doc_id))
            continue
        out.items.extend(IndexedChunk(c, [], source_id=doc.source_id, source_path=doc.source_path) for c in chunks)
    return out


def extract_mentions(
    items: list[IndexedChunk], extractor: MentionExtractor, normalise_text: bool = True
) -> tuple[list[IndexedChunk], list[Failure]]:
    """Normalise each chunk's units, then find and link its mentions (NER + MeSH linking)."""

    def step(batch: list[IndexedChunk]) -> None:
        texts = [normalise_units(it.chunk.text) if normalise_text else it.chunk.text for it in batch]
        languages = [it.chunk.language for it in batch]
        mentions = extractor.extract_many(texts, languages)  # one call per batch: the NER model tier batches
        for it, text, found in zip(batch, texts, mentions, strict=True):  # all or nothing per batch
            it.chunk.text, it.mentions = text, found

    return per_document(items, "extract", step)


def embed_chunks(items: list[IndexedChunk], embedder: Embedder) -> tuple[list[IndexedChunk], list[Failure]]:
    """Dense and sparse vectors of each chunk's indexed text (title + text)."""

    def step(batch: list[IndexedChunk]) -> None:
        texts = [it.chunk.indexed_text for it in batch]
        dense = embedder.embed_dense(texts) if embedder.has_dense else None
        sparse = embedder.embed_sparse(texts, [it.chunk.language for it in batch]) if embedder.has_sparse else None
        if dense is not None and len(dense) != len(batch) or sparse is not None and len(sparse) != len(batch):
            raise ValueError(f"the embedder returned vectors for {len(dense if dense is not None else sparse or [])} "
                             f"of {len(batch)} chunks")
        for i, it in enumerate(batch):
            it.dense = dense[i] if dense is not None else None
            it.sparse = sparse[i] if sparse is not None else None

    return per_document(items, "embed", step)


def index_documents(docs: Iterable[Document], models: IndexModels) -> IndexedBatch:
    """Chunk → normalise → NER + linking → embed a batch of documents; see the module docstring."""
    batch = chunk_documents(docs, models.chunker)
    items, failed = extract_mentions(batch.items, models.extractor, models.normalise_text)
    batch.failures.extend(failed)
    items, failed = embed_chunks(items, models.embedder)
    batch.failures.extend(failed)
    batch.items = items
    return batch
