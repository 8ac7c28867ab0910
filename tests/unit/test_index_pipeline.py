"""The indexing pipeline (``medgraph.index.pipeline``) and the corpus job's stage adapters over it:
a document that breaks a step fails alone with its stage and reason, the others are indexed, and
the Ray stages turn a failed document's chunk rows into failure rows instead of stopping the job."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from jobs.stages import Embed, Extract, Write, batch_failures, chunk_row, rows_of
from medgraph.config.models import (
    ChunkingConfig,
    EmbeddedGraphStoreConfig,
    EmbeddingConfig,
    QdrantLocalConfig,
    StoresConfig,
    VocabularyConfig,
)
from medgraph.embed import make_embedder
from medgraph.index.pipeline import IndexModels, index_documents
from medgraph.ingest.chunking import Chunker
from medgraph.ontology.build import load_or_build
from medgraph.schemas import Document, Mention, Section
from medgraph.stores import make_graph_store, make_vector_store
from tests.helpers import FIXTURES


class PoisonedExtractor:
    """A linker that breaks on one word, standing in for a model that crashes on one input."""

    def extract(self, text: str, language: str = "en", context: str | None = None) -> list[Mention]:
        if "POISON" in text:
            raise RuntimeError("tokenizer overflow")
        i = text.find("aspirin")
        return [Mention(i, i + 7, "aspirin", "D001241", "Chemicals and Drugs", "exact", 1.0)] if i >= 0 else []

    def extract_many(self, texts: list[str], languages: list[str]) -> list[list[Mention]]:
        return [self.extract(text, language) for text, language in zip(texts, languages, strict=True)]


class PoisonedEmbedder:
    """The real embedder, except that one text breaks it (as an out-of-range token id would)."""

    def __init__(self) -> None:
        self.inner = make_embedder(EmbeddingConfig(dense="hashing", sparse="lexical"))
        self.dim, self.has_dense, self.has_sparse = self.inner.dim, self.inner.has_dense, self.inner.has_sparse

    def embed_dense(self, texts: list[str]) -> Any:
        if any("BADVEC" in t for t in texts):
            raise ValueError("non-finite vector")
        return self.inner.embed_dense(texts)

    def embed_sparse(self, texts: list[str], languages: Any = None) -> Any:
        return self.inner.embed_sparse(texts, languages)


def doc(doc_id: str, text: str) -> Document:
    return Document(doc_id, f"Title {doc_id}", "en", [Section("Results", text)], f"ID:{doc_id}", f"/corpus/{doc_id}.txt")


DOCS = [
    doc("a", "Low-dose aspirin reduced recurrent stroke in older adults."),
    doc("b", "POISON in this abstract breaks the linker. Aspirin was not studied."),
    doc("c", "This abstract about aspirin yields a BADVEC when embedded."),
    doc("d", "Statins lowered LDL cholesterol in the trial."),
    Document("e", "Empty", "en", [], "ID:e", "/corpus/e.txt"),
]


@pytest.fixture
def models() -> IndexModels:
    return IndexModels(Chunker(ChunkingConfig()), PoisonedExtractor(), PoisonedEmbedder(), normalise_text=True)


def test_each_document_fails_alone_with_its_stage_and_reason(models):
    batch = index_documents(DOCS, models)
    assert batch.doc_ids == ["a", "d"]
    failed = {f.doc_id: f for f in batch.failures}
    assert failed["b"].stage == "extract" and "tokenizer overflow" in failed["b"].reason
    assert failed["c"].stage == "embed" and "non-finite vector" in failed["c"].reason
    assert failed["e"].stage == "chunk" and failed["e"].reason == "no text to index"
    assert failed["b"].source == "/corpus/b.txt"
    a = next(it for it in batch.items if it.chunk.doc_id == "a")
    assert [m.mesh_id for m in a.mentions] == ["D001241"]
    assert a.dense is not None and a.dense.shape == (models.embedder.dim,) and a.sparse is not None


def test_units_are_normalised_in_the_indexed_text(models):
    batch = index_documents([doc("u", "Patients took 500mg of aspirin daily.")], models)
    assert "500 mg" in batch.items[0].chunk.text


def _batch(docs: list[Document], chunker: Chunker) -> dict[str, Any]:
    rows = [chunk_row(c, d) for d in docs for c in chunker.chunk(d)]
    return {k: np.array([r[k] for r in rows], dtype=object) for k in rows[0]}


def test_the_ray_stages_turn_a_failed_documents_rows_into_failure_rows(models):
    extract, embed = Extract.__new__(Extract), Embed.__new__(Embed)
    extract.extractor, extract.normalise_text = models.extractor, True
    embed.embedder = models.embedder
    out = embed(extract(_batch(DOCS[:4], models.chunker)))
    rows = rows_of(out)
    kinds = {str(r["doc_id"]): str(r["kind"]) for r in rows}
    assert kinds == {"a": "chunk", "b": "failure", "c": "failure", "d": "chunk"}
    failures = {f.doc_id: f for f in batch_failures(rows)}
    assert failures["b"].stage == "extract" and failures["c"].stage == "embed"
    a = next(r for r in rows if r["doc_id"] == "a")
    assert "D001241" in a["mentions_json"] and np.any(a["dense"]) and a["sparse_json"] != "{}"


def test_a_writer_actor_writes_its_batches_and_returns_their_summary(models, tmp_path):
    vocab_cfg = VocabularyConfig(path=str(tmp_path / "vocab"),
                                 sources=[{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")}])
    load_or_build(vocab_cfg)
    stores = StoresConfig(graph=EmbeddedGraphStoreConfig(path=str(tmp_path / "g.sqlite")),
                          vector=QdrantLocalConfig(path=str(tmp_path / "q")))
    vectors = make_vector_store(stores.vector)
    vectors.ensure_collection(models.embedder.dim, True)
    vectors.close()
    extract, embed = Extract.__new__(Extract), Embed.__new__(Embed)
    extract.extractor, extract.normalise_text = models.extractor, True
    embed.embedder = models.embedder
    batch = embed(extract(_batch(DOCS[:4], models.chunker)))
    write = Write(stores, vocab_cfg.path, "run-1")
    summary = write(batch)
    assert int(summary["chunks"][0]) == 2 and int(summary["mentions"][0]) == 1
    assert sorted(json.loads(str(summary["completed_json"][0]))) == ["a", "d"]
    assert {f["doc_id"] for f in json.loads(str(summary["failures_json"][0]))} == {"b", "c"}
    assert int(write(batch)["chunks"][0]) == 2  # written again (a retried batch): no duplicates
    write.writer.graph.close()
    write.writer.vectors.close()
    graph = make_graph_store(stores.graph)
    assert graph.counts()["chunks"] == 2 and {f.doc_id for f in graph.failures("run-1")} == {"b", "c"}
    graph.close()


def test_the_runs_progress_is_recorded_in_the_graph_store_while_it_runs(tmp_path):
    from jobs.build_corpus import Progress, consume_summaries

    graph = make_graph_store(EmbeddedGraphStoreConfig(path=str(tmp_path / "g.sqlite")))
    graph.start_run("r1", {"inputs": ["x"]})

    class Summaries:  # what the writer pool's dataset yields: one row per written batch
        def iter_rows(self):
            yield {"chunks": 5, "mentions": 9, "skipped": 1, "completed_json": '["a", "b"]',
                   "failures_json": json.dumps([{"source": "/c.txt", "stage": "embed", "reason": "boom", "doc_id": "c"}])}
            yield {"chunks": 3, "mentions": 2, "skipped": 0, "completed_json": '["d"]',
                   "failures_json": json.dumps([{"source": "/c.txt", "stage": "embed", "reason": "boom", "doc_id": "c"}])}

    progress = Progress(graph, "r1", every=0.0)
    consume_summaries(Summaries(), progress)
    run = graph.last_run()
    assert run["status"] == "running"
    assert run["summary"]["documents_done"] == 3 and run["summary"]["documents_skipped"] == 1
    assert run["summary"]["documents_failed"] == 1 and run["summary"]["chunks"] == 8  # one failure per document
    graph.close()
