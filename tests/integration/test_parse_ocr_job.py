"""Parsing and OCR as stages of the corpus-build Ray job, on a real local Ray cluster.

One job over: the CDC guide (text layer), a CDC page scanned to an image-only PDF (OCR), a long
scan that cannot finish within the per-document OCR time limit, and a corrupt PDF. The bad two
fail alone with their stage and reason; the others are written with section paths and pages that
come back from the store and show up in a citation of the real answer composer.

The one-page scan is OCR'd once before the job, into the job's OCR cache: inside the job it is
then read from the cache in milliseconds, so a 3 s per-document limit can stop the 8-page scan
(which needs several seconds per page) without the test depending on how loaded the machine is.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from jobs.build_corpus import build_corpus
from medgraph.config import load_config
from medgraph.config.models import AnswerConfig
from medgraph.generate.extractive import ExtractiveComposer
from medgraph.ingest.chunking import Chunker
from medgraph.ingest.ocr import ocr_pdf_pages
from medgraph.ingest.pdf import load_pdf
from medgraph.ingest.pdf_tools import rasterise_pdf
from medgraph.ingest.storage import file_doc_id
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.stores import make_graph_store
from tests.helpers import unavailable

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
CDC = "cdc_guide_infection_prevention_outpatient_2016.pdf"
OCR_TIMEOUT_S = 3  # per document; the long scan needs 8 pages x 1-5 s


@pytest.fixture(scope="module")
def job(tmp_path_factory, shared_data):
    if shutil.which("tesseract") is None:
        reason = "tesseract is not installed (make install adds it)"
        unavailable(reason, "MEDGRAPH_REQUIRE_SHARED")
    root = tmp_path_factory.mktemp("parse_job")
    corpus = root / "corpus"
    corpus.mkdir()
    src = shared_data / "pdfs" / CDC
    shutil.copy(src, corpus / "cdc.pdf")
    rasterise_pdf(src, corpus / "cdc_p3_scan.pdf", [3], dpi=300)
    rasterise_pdf(src, corpus / "long_scan.pdf", list(range(5, 13)), dpi=100)
    (corpus / "corrupt.pdf").write_bytes(b"%PDF-1.7\n not a PDF after all")
    home = root / "store"
    cfg = load_config(REPO / "configs" / "local.yaml", [
        f"stores.graph.path={home}/graph.sqlite", f"stores.vector.path={home}/qdrant",
        "embedding.dense=hashing", "ray.num_cpus=2",
        f"parse.ocr.timeout_s={OCR_TIMEOUT_S}", f"parse.ocr.cache_dir={root}/ocr_cache",
    ])
    warm = cfg.parse.ocr.model_copy(update={"timeout_s": 300.0})
    ocr_pdf_pages(corpus / "cdc_p3_scan.pdf", [1], "", warm)  # fills the cache the job reads
    return cfg, build_corpus(cfg, [str(corpus)]), corpus


def _chunks(cfg, doc_id: str):
    with sqlite3.connect(cfg.stores.graph.path) as conn:
        ids = [r[0] for r in conn.execute("SELECT chunk_id FROM chunks WHERE doc_id=? ORDER BY idx", (doc_id,))]
    graph = make_graph_store(cfg.stores.graph)
    try:
        return graph.get_chunks(ids)
    finally:
        graph.close()


def test_bad_documents_fail_alone_with_stage_and_reason(job):
    _cfg, summary, _corpus = job
    assert summary["status"] == "succeeded"
    failures = {Path(f["source"]).name: f for f in summary["failures"]}
    assert set(failures) == {"corrupt.pdf", "long_scan.pdf"}
    assert failures["corrupt.pdf"]["stage"] == "parse" and "not a readable PDF" in failures["corrupt.pdf"]["reason"]
    assert failures["long_scan.pdf"]["stage"] == "ocr"
    assert f"OCR of the document exceeded {OCR_TIMEOUT_S} s" in failures["long_scan.pdf"]["reason"]
    assert summary["documents_written"] == 2


def test_the_text_layer_document_is_stored_with_section_paths_and_pages(job, shared_data):
    cfg, _summary, corpus = job
    expected = Chunker(cfg.chunking).chunk(load_pdf(shared_data / "pdfs" / CDC))
    stored = _chunks(cfg, file_doc_id(corpus / "cdc.pdf"))
    assert [(c.section_path, c.page) for c in stored] == [(c.section_path, c.page) for c in expected]


def test_the_scanned_page_is_ocrd_into_its_section(job):
    cfg, _summary, corpus = job
    stored = _chunks(cfg, file_doc_id(corpus / "cdc_p3_scan.pdf"))
    assert stored and all(c.page == 1 and c.section_path == ["Introduction"] for c in stored)
    assert "transition of healthcare delivery" in " ".join(c.text for c in stored)


def test_citations_show_page_and_section(job):
    cfg, _summary, corpus = job
    chunk = next(c for c in _chunks(cfg, file_doc_id(corpus / "cdc.pdf")) if "Develop and maintain infection prevention" in c.text)
    question = "What should outpatient settings do to develop and maintain infection prevention programs?"
    answer = ExtractiveComposer(AnswerConfig()).generate(
        question, QueryAnalysis(question, "en"), [Candidate(chunk.chunk_id, chunk=chunk, relevance=0.9)])
    assert not answer.refused
    citation = answer.citations[0]
    assert citation.page == 7
    assert citation.section_path[-1] == "Key administrative recommendations for outpatient settings"
    assert citation.section_path[0].startswith("Fundamental Elements Needed to Prevent Transmission")
