"""Ray Data stage adapters for the corpus build.

Each adapter is a callable class: ``__init__`` builds its model or index once per actor,
``__call__`` converts a batch to records, calls the Ray-free operation from ``medgraph``
(chunking, extraction and embedding are the steps of ``medgraph.index.pipeline``, the code every
index writer runs), and converts back. Parsing and OCR are their own stages (``Parse`` →
``OcrAndChunk``), each document in an isolated process with time and memory limits. From chunking
on, rows share one flat schema (``kind``: ``chunk`` | ``failure`` | ``skipped``) so that a failed
or skipped document travels through the pipeline to the summary without ever stopping it: when a
step fails on a document, each of its chunk rows becomes a failure row with the stage and reason.
``Write`` is the writer pool of builds with server stores (each actor writes its batches directly).
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from medgraph.config.models import (
    ChunkingConfig,
    EmbeddingConfig,
    LinkingConfig,
    NerConfig,
    ParseConfig,
    StoresConfig,
)
from medgraph.config.observe import TracingConfig
from medgraph.index.pipeline import chunk_documents, embed_chunks, extract_mentions
from medgraph.index.writer import IndexedChunk
from medgraph.ingest.chunking import Chunker
from medgraph.ingest.loaders import (
    Shard,
    format_of,
    load_shard,
    reads_whole,
    relocate_document,
)
from medgraph.ingest.storage import file_doc_id, local_copy
from medgraph.observe import metrics, tracing
from medgraph.schemas import Chunk, Document, Failure, mentions_from_json, mentions_to_json

log = logging.getLogger(__name__)

Batch = dict[str, Any]


@dataclass(frozen=True)
class BuildTrace:
    """A build's trace, handed to every stage actor: the tracing config and the driver's context
    (``medgraph.observe.tracing.carrier``). Each batch a stage handles is then a span of it."""

    cfg: TracingConfig
    carrier: dict[str, str]


class Stage:
    """A stage of the corpus build's dataset: its actors take the build's trace (None: untraced)."""

    trace: BuildTrace | None = None


def traced(stage: str) -> Callable[[Callable[[Any, Any], Any]], Callable[[Any, Any], Any]]:
    """A stage's ``__call__`` timed and counted (``medgraph_build_batch_seconds``,
    ``medgraph_build_rows_total``) and, when the stage was given the build's trace (``self.trace``),
    a span of it (``build.<stage>``: rows in and out, failures)."""

    def wrap(call: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        @functools.wraps(call)
        def inner(self: Any, batch: Any) -> Any:
            started, rows = time.perf_counter(), _count(batch)
            trace: BuildTrace | None = self.trace
            if trace is None or not tracing.setup_process(trace.cfg, "medgraph-build"):
                out = call(self, batch)
            else:
                with tracing.continued(trace.carrier), tracing.span(f"build.{stage}", {"rows_in": rows}) as span:
                    out = call(self, batch)
                    span.set_attributes({"rows_out": _count(out), "failures": _failures(out)})
            metrics.observe("medgraph_build_batch_seconds", time.perf_counter() - started, stage=stage)
            metrics.count("medgraph_build_rows_total", rows, stage=stage)
            return out

        return inner

    return wrap


def _count(rows: Any) -> int:
    """Rows in a list of rows, a column batch (``kind``: one per row) or one row (a dict of scalars)."""
    if isinstance(rows, list):
        return len(rows)
    if isinstance(rows, dict) and rows:
        first = rows["kind"] if "kind" in rows else next(iter(rows.values()))
        return len(first) if isinstance(first, (list, np.ndarray)) else 1
    return 1


def _failures(rows: Any) -> int:
    if isinstance(rows, list):
        return sum(1 for r in rows if r.get("kind") == "failure")
    if isinstance(rows, dict) and isinstance(rows.get("kind"), (list, np.ndarray)):
        return int(sum(1 for k in rows["kind"] if k == "failure"))
    if isinstance(rows, dict) and "failures_json" in rows:
        return sum(len(json.loads(str(f))) for f in rows["failures_json"])
    return 0


def _base_row(kind: str) -> dict[str, Any]:
    row = Chunk("", "", 0, "", [], "", "", 0, "").to_row()
    row.update(kind=kind, source_id="", source_path="", error_source="", error_stage="", error="",
               mentions_json="[]")
    return row


def failure_row(f: Failure) -> dict[str, Any]:
    row = _base_row("failure")
    row.update(doc_id=f.doc_id, error_source=f.source, error_stage=f.stage, error=f.reason)
    return row


def skipped_row(doc: Document) -> dict[str, Any]:
    row = _base_row("skipped")
    row.update(doc_id=doc.doc_id, source_path=doc.source_path)
    return row


def chunk_row(chunk: Chunk, doc: Document) -> dict[str, Any]:
    row = _base_row("chunk")
    row.update(chunk.to_row())
    row.update(source_id=doc.source_id, source_path=doc.source_path)
    return row


def _document_row(kind: str, payload: Any = None, failure: Failure | None = None) -> dict[str, Any]:
    """The row between the parse and OCR stages: a document, a PDF awaiting OCR, or a failure."""
    row = {"kind": kind, "payload": json.dumps(payload, ensure_ascii=False) if payload is not None else "",
           "doc_id": "", "error_source": "", "error_stage": "", "error": ""}
    if failure is not None:
        row.update(doc_id=failure.doc_id, error_source=failure.source, error_stage=failure.stage, error=failure.reason)
    return row


def parser_sandbox(parse: ParseConfig) -> Any:
    """The memory- and time-limited parser process of ``parse`` (None when ``parse.isolate`` is off)."""
    from medgraph.ingest.isolation import Sandbox

    return Sandbox(parse.memory_mb) if parse.isolate else None


class Parse(Stage):
    """Shard row → document rows. A PDF is parsed in the actor's isolated process (time and memory
    limits per document, ``parse:`` in the config): the text layer with layout, or the model tier;
    a PDF with pages to OCR travels on as ``ocr`` with its parsed pages. Other files go through
    the loaders. A document that fails here becomes a failure row; the job goes on."""

    def __init__(self, parse: ParseConfig, trace: BuildTrace | None = None) -> None:
        self.cfg = parse
        self.sandbox = parser_sandbox(parse)
        self.trace = trace

    @traced("parse")
    def __call__(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        from medgraph.ingest.isolation import run_isolated

        shard = Shard(row["path"], int(row["start"]), None if row["stop"] < 0 else int(row["stop"]))
        fmt = format_of(shard.path)
        if fmt is not None and fmt.paged:  # layout, tables and OCR: the PDF parser, isolated
            return [self._pdf(shard.path)]
        items: Iterable[Document | Failure]
        if self.sandbox is not None and reads_whole(shard.path):
            # a file parsed whole (JSON) or as one tree (XML) is parsed under the same memory and
            # time limits as a PDF: a file that needs more fails alone, the actor lives on
            try:
                items = run_isolated(self.sandbox, "medgraph.ingest.loaders:load_shard_list", shard,
                                     timeout_s=self.cfg.timeout_s)
            except Exception as exc:
                source = shard.path if shard.start == 0 and shard.stop is None else \
                    f"{shard.path}#{shard.start + 1}-{shard.stop}"
                return [_document_row("failure", failure=Failure(source, "load", _reason(exc)))]
        else:
            items = load_shard(shard)
        out = []
        for item in items:
            if isinstance(item, Failure):
                out.append(_document_row("failure", failure=item))
            else:
                out.append(_document_row("document", item.to_row()))
        return out

    def _pdf(self, location: str) -> dict[str, Any]:
        """A PDF by path or URI (an object-store PDF is parsed from a temporary local copy)."""
        from medgraph.ingest.isolation import run_isolated
        from medgraph.ingest.pdf import assemble

        try:
            with local_copy(location) as local:
                parsed = run_isolated(self.sandbox, "medgraph.ingest.pdf:parse_pdf", local, self.cfg,
                                      timeout_s=self.cfg.timeout_s)
            parsed = replace(parsed, path=location)  # the OCR stage reads it again, maybe on another node
            if parsed.ocr_pages:
                return _document_row("ocr", parsed.to_dict())
            return _document_row("document", relocate_document(assemble(parsed), location).to_row())
        except Exception as exc:  # one bad PDF never stops the job
            return _document_row("failure", failure=Failure(location, "parse", _reason(exc), file_doc_id(location)))


def _reason(exc: Exception) -> str:
    from medgraph.ingest.isolation import IsolationError

    return str(exc) if isinstance(exc, IsolationError) else f"{type(exc).__name__}: {exc}"


class OcrAndChunk(Stage):
    """Document rows → chunk rows. Pages without a text layer are OCR'd in the actor's isolated
    process (``parse.ocr``: engine per language, DPI, per-page and per-document time limits, the
    same memory limit), the document is assembled, then chunked. Documents already complete with
    the same content are skipped; a failure is recorded with its stage and reason."""

    def __init__(self, parse: ParseConfig, chunking: ChunkingConfig, complete: dict[str, str],
                 trace: BuildTrace | None = None) -> None:
        self.cfg = parse
        self.chunker = Chunker(chunking)
        self.complete = complete
        self.sandbox = parser_sandbox(parse)
        self.trace = trace

    @traced("ocr_and_chunk")
    def __call__(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        if row["kind"] == "failure":
            return [failure_row(Failure(row["error_source"], row["error_stage"], row["error"], row["doc_id"]))]
        if row["kind"] == "ocr":
            doc_or_failure = self._ocr(json.loads(row["payload"]))
            if isinstance(doc_or_failure, Failure):
                return [failure_row(doc_or_failure)]
            doc = doc_or_failure
        else:
            doc = Document.from_row(json.loads(row["payload"]))
        if self.complete.get(doc.doc_id) == doc.content_hash:
            return [skipped_row(doc)]
        return self._chunk(doc)

    def _ocr(self, payload: dict[str, Any]) -> Document | Failure:
        from medgraph.ingest.isolation import run_isolated
        from medgraph.ingest.parsed import ParsedPdf
        from medgraph.ingest.pdf import assemble

        parsed = ParsedPdf.from_dict(payload)
        try:
            with local_copy(parsed.path) as local:
                done = run_isolated(self.sandbox, "medgraph.ingest.pdf:ocr_parsed", replace(parsed, path=str(local)),
                                    self.cfg, timeout_s=self.cfg.ocr.timeout_s + 60)
            return relocate_document(assemble(replace(done, path=parsed.path)), parsed.path)
        except Exception as exc:  # one unreadable scan never stops the job
            return Failure(parsed.path, "ocr", _reason(exc), file_doc_id(parsed.path))

    def _chunk(self, doc: Document) -> list[dict[str, Any]]:
        batch = chunk_documents([doc], self.chunker)
        return [failure_row(f) for f in batch.failures] + [chunk_row(it.chunk, doc) for it in batch.items]


def _chunk_rows(batch: Batch) -> list[int]:
    return [i for i, kind in enumerate(batch["kind"]) if kind == "chunk"]


def _items(batch: Batch, rows: list[int]) -> list[IndexedChunk]:
    return [to_indexed({k: v[i] for k, v in batch.items()}) for i in rows]


def _fail_rows(batch: Batch, rows: list[int], items: list[IndexedChunk], failures: list[Failure]) -> None:
    """Turn the chunk rows of the documents that failed a step into failure rows (same schema)."""
    if not failures:
        return
    failed = {f.doc_id: f for f in failures}
    columns = {k: list(v) for k, v in batch.items() if k in ("kind", "error_source", "error_stage", "error")}
    for i, it in zip(rows, items, strict=True):
        if (f := failed.get(it.chunk.doc_id)) is not None:
            columns["kind"][i], columns["error_source"][i] = "failure", f.source
            columns["error_stage"][i], columns["error"][i] = f.stage, f.reason
    batch.update(columns)


class Extract(Stage):
    """Normalise units, then NER + MeSH linking on each chunk (``medgraph.index.pipeline.extract_mentions``).

    The whole batch goes to ``EntityExtractor.extract_many`` in one call, so with ``ner.kind: cascade``
    the GLiNER and token-classification passes run batched on the actor's device (the pool's
    ``num_gpus``: ``pipeline.extract`` in the config; ``ner.device: cuda``).
    """

    def __init__(self, vocab_path: str, ner: NerConfig, linking: LinkingConfig, normalise_text: bool,
                 trace: BuildTrace | None = None) -> None:
        from medgraph.link import EntityExtractor
        from medgraph.ontology.vocabulary import Vocabulary

        self.extractor = EntityExtractor(Vocabulary.load(vocab_path), ner, linking)
        self.normalise_text = normalise_text
        self.trace = trace

    @traced("extract")
    def __call__(self, batch: Batch) -> Batch:
        rows = _chunk_rows(batch)
        items = _items(batch, rows)
        done, failures = extract_mentions(list(items), self.extractor, self.normalise_text)
        ok = {id(it) for it in done}
        texts, mentions = list(batch["text"]), list(batch["mentions_json"])
        for i, it in zip(rows, items, strict=True):
            if id(it) in ok:
                texts[i], mentions[i] = it.chunk.text, mentions_to_json(it.mentions)
        batch["text"], batch["mentions_json"] = texts, mentions
        _fail_rows(batch, rows, items, failures)
        return batch


class Embed(Stage):
    """Dense and sparse vectors for each chunk (``medgraph.index.pipeline.embed_chunks``; zeros / empty
    for failure and skipped rows)."""

    def __init__(self, cfg: EmbeddingConfig, trace: BuildTrace | None = None) -> None:
        from medgraph.embed import make_embedder

        self.embedder = make_embedder(cfg)
        self.trace = trace

    @traced("embed")
    def __call__(self, batch: Batch) -> Batch:
        rows = _chunk_rows(batch)
        items = _items(batch, rows)
        done, failures = embed_chunks(list(items), self.embedder)
        ok = {id(it) for it in done}
        n = len(batch["kind"])
        dense = np.zeros((n, self.embedder.dim), dtype=np.float32)
        sparse = ["{}"] * n
        for i, it in zip(rows, items, strict=True):
            if id(it) not in ok:
                continue
            if it.dense is not None:
                dense[i] = it.dense
            if it.sparse is not None:
                sparse[i] = json.dumps({"indices": [int(x) for x in it.sparse.indices],
                                        "values": [float(x) for x in it.sparse.values]})
        batch["dense"], batch["sparse_json"] = dense, sparse
        _fail_rows(batch, rows, items, failures)
        return batch


def batch_failures(rows: list[dict[str, Any]]) -> list[Failure]:
    """The failures of a batch of rows, one per document and stage."""
    seen: dict[tuple[str, str, str], Failure] = {}
    for r in rows:
        if r["kind"] == "failure":
            f = Failure(str(r["error_source"]), str(r["error_stage"]), str(r["error"]), str(r["doc_id"]))
            seen.setdefault((f.doc_id, f.source, f.stage), f)
    return list(seen.values())


class Write(Stage):
    """A writer actor (builds with server stores): writes its batches of embedded chunk rows straight
    into the graph and vector stores through ``CorpusWriter`` and records the batch's failures.

    Writes are idempotent (content-hash chunk and point IDs, upserts), so a batch retried after a
    lost actor or node is written again without duplicates; a document is marked complete by
    whichever writer writes its last chunk. Returns one summary row per batch, for the driver's
    progress and the run's summary."""

    def __init__(self, stores: StoresConfig, vocab_path: str, run_id: str, trace: BuildTrace | None = None) -> None:
        from medgraph.index.writer import CorpusWriter
        from medgraph.ontology.vocabulary import Vocabulary
        from medgraph.stores import make_graph_store, make_vector_store

        vocab = Vocabulary.load(vocab_path)
        self.writer = CorpusWriter(make_graph_store(stores.graph), make_vector_store(stores.vector), vocab.get)
        self.run_id = run_id
        self.trace = trace

    @traced("write")
    def __call__(self, batch: Batch) -> Batch:
        stats, failures, skipped = write_batch(self.writer, self.run_id, batch)
        return {
            "chunks": np.array([stats.chunks]), "mentions": np.array([stats.mentions]),
            "skipped": np.array([skipped]),
            "completed_json": np.array([json.dumps(stats.documents_completed)]),
            "failures_json": np.array([json.dumps([f.__dict__ for f in failures], ensure_ascii=False)]),
        }


def write_batch(writer: Any, run_id: str, batch: Batch) -> tuple[Any, list[Failure], int]:
    """Record a batch's failures and write its chunk rows (``CorpusWriter``): (write stats, the
    failures, the number of skipped documents). The driver's and the writer actors' write step."""
    rows = rows_of(batch)
    failures = batch_failures(rows)
    writer.record_failures(run_id, failures)
    stats = writer.write([to_indexed(r) for r in rows if r["kind"] == "chunk"])
    return stats, failures, sum(1 for r in rows if r["kind"] == "skipped")


def rows_of(batch: Batch) -> list[dict[str, Any]]:
    n = len(batch["kind"])
    return [{k: v[i] for k, v in batch.items()} for i in range(n)]


def to_indexed(row: dict[str, Any]) -> IndexedChunk:
    from medgraph.embed import SparseVector

    sparse = json.loads(row["sparse_json"]) if row.get("sparse_json") not in (None, "{}") else None
    return IndexedChunk(
        chunk=Chunk.from_row(row),
        mentions=mentions_from_json(row["mentions_json"]),
        dense=np.asarray(row["dense"], dtype=np.float32) if "dense" in row else None,
        sparse=SparseVector(np.asarray(sparse["indices"]), np.asarray(sparse["values"], dtype=np.float32))
        if sparse else None,
        source_id=str(row["source_id"]),
        source_path=str(row["source_path"]),
    )
