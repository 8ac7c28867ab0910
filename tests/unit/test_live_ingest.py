"""Live ingestion of fetched literature: a record about an entity the corpus lacks becomes evidence
the retriever returns (graph and vector paths), re-ingesting it writes nothing, a corpus document
is not overwritten, and RetrieverService.ingest closes an evidence gap end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from medgraph.config import load_config
from medgraph.eval.retrieval import EvalIndex
from medgraph.literature.base import LiteratureRecord
from medgraph.literature.ingest import LiveIngestor, record_to_document
from medgraph.retrieve.query import QueryAnalyzer
from medgraph.retrieve.retriever import Retriever
from medgraph.stores.local_index import LocalVectorIndex
from tests.helpers import FIXTURES, REPO, index_tiny_corpus

ALL, MI, FEVER = "D054198", "D009203", "D005334"
CORPUS = [
    {"doc_id": "mi", "title": "", "language": "en",
     "text": "Metformin after myocardial infarction reduced the infarct size in a small cohort."},
    {"doc_id": "fever", "title": "", "language": "en",
     "text": "Fever raised the heart rate of most children after vaccination."},
    {"doc_id": "warf", "title": "", "language": "en",
     "text": "Warfarin is an anticoagulant; major bleeding and intracranial haemorrhage are its risks."},
]
SOURCES = [{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")}]
LEUKEMIA = LiteratureRecord(
    doc_id="pmid-900001", title="Induction therapy in childhood leukaemia",
    text="BACKGROUND: Children with precursor cell lymphoblastic leukemia-lymphoma received induction "
         "chemotherapy.\n\nRESULTS: Remission was reached in most of the children within four weeks.",
    source="pubmed", url="https://pubmed.ncbi.nlm.nih.gov/900001/", pmid="900001", year=2020)
QUESTION = "How is precursor cell lymphoblastic leukemia-lymphoma treated in children?"


@pytest.fixture
def index(fresh_tiny_index: tuple[EvalIndex, Any]) -> tuple[EvalIndex, Any]:
    return fresh_tiny_index  # each test ingests into its own copy


def _docs(idx: EvalIndex, cands: list[Any]) -> list[str]:
    chunks = {c.chunk_id: c.doc_id for c in idx.graph.get_chunks([c.chunk_id for c in cands])}
    return list(dict.fromkeys(chunks[c.chunk_id] for c in cands if c.chunk_id in chunks))


def test_ingested_record_becomes_evidence_and_reingest_is_skipped(
    index: tuple[EvalIndex, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    idx, cfg = index
    retriever = Retriever(cfg.retrieval, idx.graph, idx.vectors, idx.embedder)
    retriever.warm_up()  # the PPR index is built before the ingest: refresh() must replace it
    reads: list[int] = []  # the vector index, loaded by warm_up, then follows the ingest's writes
    original = LocalVectorIndex.from_collection
    monkeypatch.setattr(LocalVectorIndex, "from_collection",
                        classmethod(lambda cls, *a, **k: reads.append(1) or original(*a, **k)))
    analysis = QueryAnalyzer(idx.extractor, 0).analyze(QUESTION, "en")
    assert list(analysis.seeds) == [ALL]
    before = retriever.retrieve(analysis)
    assert "pmid-900001" not in _docs(idx, before.candidates) and before.per_path["ppr"] == []

    ingestor = LiveIngestor(cfg, idx.graph, idx.vectors, idx.extractor, idx.embedder)
    report = ingestor.ingest([LEUKEMIA])
    assert report.doc_ids == ["pmid-900001"] and len(report.chunk_ids) >= 1 and report.mentions >= 1
    assert report.skipped == [] and report.seconds > 0
    retriever.refresh()

    after = retriever.retrieve(analysis)
    assert _docs(idx, after.candidates)[0] == "pmid-900001"
    assert _docs(idx, after.per_path["ppr"]) == ["pmid-900001"]  # the graph path sees the new entity
    assert after.per_path["ppr"][0].entity_path == [ALL]
    assert "pmid-900001" in _docs(idx, after.per_path["sparse"])  # and the vector index the new vectors
    top = after.candidates[0].chunk
    assert top is not None and top.source_id == "PMID:900001" and top.title == LEUKEMIA.title
    assert ALL in idx.graph.chunk_entities([after.candidates[0].chunk_id])[after.candidates[0].chunk_id]

    assert reads == []
    counts = {**idx.graph.counts(), "vectors": idx.vectors.count()}
    again = ingestor.ingest([LEUKEMIA])
    assert again.doc_ids == [] and again.chunk_ids == [] and again.skipped == ["pmid-900001: already in the store"]
    assert {**idx.graph.counts(), "vectors": idx.vectors.count()} == counts


def test_corpus_documents_are_kept_and_bad_records_skipped(index: tuple[EvalIndex, Any]) -> None:
    idx, cfg = index
    ingestor = LiveIngestor(cfg, idx.graph, idx.vectors, idx.extractor, idx.embedder)
    other = LiteratureRecord("mi", "Other", "A different text about myocardial infarction.")
    report = ingestor.ingest([other, LiteratureRecord("", "t", "text"), LiteratureRecord("empty", "t", "  "),
                              LEUKEMIA, LEUKEMIA])
    assert report.doc_ids == ["pmid-900001"]
    assert report.skipped == ["mi: in the store with other content (kept)", "?: record has no doc_id",
                              "empty: record has no text", "pmid-900001: duplicate in this batch"]
    old = idx.graph.document_hashes()["mi"]
    replaced = LiveIngestor(cfg, idx.graph, idx.vectors, idx.extractor, idx.embedder, replace_existing=True)
    assert replaced.ingest([other]).doc_ids == ["mi"]
    assert idx.graph.document_hashes()["mi"] == record_to_document(other).content_hash != old
    assert idx.graph.counts()["documents"] == 4


def test_record_to_document_keeps_source_and_sections() -> None:
    doc = record_to_document(LEUKEMIA)
    assert (doc.doc_id, doc.source_id, doc.language, doc.metadata["year"]) == ("pmid-900001", "PMID:900001", "en", 2020)
    assert doc.source_path == LEUKEMIA.url and doc.sections[0].text.startswith("BACKGROUND: Children")
    assert record_to_document(LiteratureRecord("x", "", "Ein Herzinfarkt ist ein Notfall.", language="")).language == "de"


def test_retriever_service_ingest_closes_an_unconnected_gap(tmp_path: Path) -> None:
    from serve.services import AnalyzerService, RetrieverService

    idx, _ = index_tiny_corpus(tmp_path, CORPUS, SOURCES)
    idx.close()  # the service opens the stores itself (it is their single owner)
    cfg = load_config(REPO / "configs" / "local.yaml", [
        "embedding.dense=hashing", f"vocabulary.path={tmp_path / 'vocab'}",
        f"vocabulary.sources={__import__('json').dumps(SOURCES)}",
        f"stores.graph.path={idx.path / 'graph.sqlite'}", f"stores.vector.path={idx.path / 'qdrant'}",
    ])
    analysis = AnalyzerService(cfg).analyze("Is fever a sign of myocardial infarction?", "en")
    service = RetrieverService(cfg)
    try:
        ranked = service.retrieve(analysis).candidates
        (gap,) = service.find_gaps(analysis, ranked)
        assert gap.kind == "unconnected" and gap.mesh_ids == (FEVER, MI)
        record = LiteratureRecord("pmid-900002", "Fever after myocardial infarction",
                                  "Fever after myocardial infarction predicted a larger infarct.", pmid="900002")
        report = service.ingest([record])
        assert report.doc_ids == ["pmid-900002"]
        assert service.find_gaps(analysis, ranked) == []
        assert set(report.chunk_ids) <= set(service.graph.connecting_evidence(FEVER, MI).chunk_ids)
        result = service.retrieve(analysis)
        assert result.candidates[0].chunk_id in report.chunk_ids
        assert service.ingest([record]).skipped == ["pmid-900002: already in the store"]
        assert service.ready()["documents"] == 4
    finally:
        service.graph.close()
        service.vectors.close()


def test_refresh_lets_the_graph_path_see_writes_of_another_store_handle(index: tuple[EvalIndex, Any]) -> None:
    from medgraph.stores.embedded import EmbeddedGraphStore

    idx, cfg = index
    retriever = Retriever(cfg.retrieval, idx.graph, idx.vectors, idx.embedder)
    retriever.warm_up()
    other = EmbeddedGraphStore(idx.path / "graph.sqlite")  # e.g. a writer in another process
    try:
        LiveIngestor(cfg, other, None, idx.extractor, idx.embedder).ingest([LEUKEMIA])
    finally:
        other.close()
    analysis = QueryAnalyzer(idx.extractor, 0).analyze(QUESTION, "en")
    assert retriever.search_path("ppr", analysis, 5) == []  # the cached PPR index predates the write
    retriever.refresh()
    assert _docs(idx, retriever.search_path("ppr", analysis, 5)) == ["pmid-900001"]


def test_a_gap_is_reported_only_after_the_index_followed_the_store(index: tuple[EvalIndex, Any]) -> None:
    """Another replica's ingest lands in the shared store between this replica's polls: the gap
    search checks the store before asking for literature that is already there."""
    from serve.services import LiveIngestion

    idx, cfg = index
    retriever = Retriever(cfg.retrieval.model_copy(update={"ppr_refresh_s": 3600.0}), idx.graph, idx.vectors,
                          idx.embedder)
    retriever.warm_up()
    live = LiveIngestion(cfg, idx.graph, idx.vectors, retriever, idx.extractor)
    analysis = QueryAnalyzer(idx.extractor, 0).analyze("Is fever a sign of myocardial infarction?", "en")
    ranked = retriever.retrieve(analysis).candidates
    (gap,) = live.find_gaps(analysis, ranked)
    assert gap.kind == "unconnected" and gap.mesh_ids == (FEVER, MI)
    assert not retriever.follow_store()  # nothing written: the served index stays
    record = LiteratureRecord("pmid-900002", "Fever after myocardial infarction",
                              "Fever after myocardial infarction predicted a larger infarct.", pmid="900002")
    LiveIngestor(cfg, idx.graph, idx.vectors, idx.extractor, idx.embedder).ingest([record])  # not via `live`
    generation = retriever.ppr_index.state.generation
    assert not retriever.served_graph.connecting_evidence(FEVER, MI).connected  # the next poll is an hour away
    assert live.find_gaps(analysis, ranked) == []
    assert retriever.ppr_index.state.generation == generation + 1
    assert retriever.served_graph.connecting_evidence(FEVER, MI).connected
