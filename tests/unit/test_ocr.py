"""OCR with the real Tesseract 5 on real text rendered to image-only PDFs (EN, DE, ZH).

No openly licensed scanned medical PDF exists in the shared data, so scans are made here: a page
of the CDC guide (public domain) is rasterised at 300 dpi into an image-only PDF, and its own text
layer, parsed the same way, is the ground truth. German and Chinese samples are real clinical text
from the shared data, typeset into a PDF with a system font and rasterised the same way.
Tesseract is required: without it these tests skip, or fail when ``MEDGRAPH_REQUIRE_SHARED=1`` (CI).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from medgraph.config.models import OcrConfig, ParseConfig
from medgraph.ingest.ocr import (
    OcrError,
    Tesseract,
    character_error_rate,
    levenshtein,
    ocr_pdf_pages,
    tsv_lines,
)
from medgraph.ingest.pdf import load_pdf, parse_pdf
from medgraph.ingest.pdf_tools import rasterise_pdf, text_pdf
from tests.helpers import unavailable

CDC = "cdc_guide_infection_prevention_outpatient_2016.pdf"
FONTS = {"latin": Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
         "cjk": Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")}


def _require(what: str, ok: bool) -> None:
    if not ok:
        reason = f"{what} is not installed (make install adds it)"
        unavailable(reason, "MEDGRAPH_REQUIRE_SHARED")


@pytest.fixture(scope="module")
def tesseract() -> Tesseract:
    _require("tesseract (with eng, deu, chi_sim)", shutil.which("tesseract") is not None)
    engine = Tesseract()
    _require("Tesseract language data eng/deu/chi_sim", {"eng", "deu", "chi_sim"} <= engine.languages())
    return engine


def _pages(src: Path, pages: list[int], dst: Path) -> Path:
    """A PDF made of some pages of another, text layer kept."""
    out = pdfium.PdfDocument.new()
    out.import_pages(pdfium.PdfDocument(str(src)), [p - 1 for p in pages])
    out.save(str(dst))
    return dst


def _merge(parts: list[Path], dst: Path) -> Path:
    out = pdfium.PdfDocument.new()
    for part in parts:
        out.import_pages(pdfium.PdfDocument(str(part)))
    out.new_page(612, 792)  # and a blank page: nothing to read, nothing to OCR
    out.save(str(dst))
    return dst


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, shared_data, tesseract):
    """[CDC p.3 scanned at 300 dpi, CDC p.4 with its text layer, a blank page], parsed with a cache."""
    root = tmp_path_factory.mktemp("ocr")
    src = shared_data / "pdfs" / CDC
    reference = _pages(src, [3], root / "p3.pdf")
    scan = rasterise_pdf(src, root / "p3_scan.pdf", [3], dpi=300)
    mixed = _merge([scan, _pages(src, [4], root / "p4.pdf")], root / "mixed.pdf")
    cfg = ParseConfig(ocr=OcrConfig(cache_dir=str(root / "cache")))
    return load_pdf(mixed, cfg), load_pdf(reference), mixed, cfg


def test_only_pages_without_a_text_layer_go_to_ocr(mixed):
    _doc, _ref, path, cfg = mixed
    parsed = parse_pdf(path, cfg)
    assert parsed.ocr_pages == [1]  # the scan; the text page is read, the blank page skipped
    assert [p.page for p in parsed.pages] == [2, 3] and not parsed.pages[1].lines


def test_a_scanned_page_is_read_back_within_5_percent_cer(mixed):
    doc, reference, _path, _cfg = mixed
    assert doc.metadata["ocr_pages"] == [1]
    ocr_text = "\n\n".join(s.text for s in doc.sections if s.page == 1)
    ref_text = "\n\n".join(s.text for s in reference.sections)
    assert len(ref_text) > 3000
    assert character_error_rate(ref_text, ocr_text) <= 0.05


def test_headings_of_a_scanned_page_come_from_the_type_size(mixed):
    doc, _ref, _path, _cfg = mixed
    by_page = {s.page: s for s in doc.sections}
    assert by_page[1].title == "Introduction"  # 18 pt on the scan: a heading, measured from the word boxes
    assert by_page[2].title == "Introduction" and by_page[2].text.startswith("imaging centers")
    assert doc.language == "en"


def test_ocr_results_are_cached_by_content(mixed):
    _doc, _ref, path, cfg = mixed

    class MustNotRun:
        name = "tesseract"

        def read(self, *args, **kwargs):
            raise AssertionError("the cached page was OCR'd again")

    pages, language = ocr_pdf_pages(path, [1], "en", cfg.ocr, engines={"tesseract": MustNotRun()})
    assert language == "en" and any("INTRODUCTION" in ln.text.upper() for ln in pages[0].lines)


def all_text(doc) -> str:
    """Headings and text of a document, in order (headings once, not per page)."""
    parts, last = [], None
    for section in doc.sections:
        if section.title and section.title != last:
            parts.append(section.title)
        parts.append(section.text)
        last = section.title
    return "\n\n".join(parts)


def _sample_pdf(tmp_path: Path, text: str, font: str, name: str) -> tuple[Path, str]:
    _require(f"font {FONTS[font]}", FONTS[font].is_file())
    born_digital = text_pdf(text, FONTS[font], tmp_path / f"{name}.pdf", size=12, cjk=font == "cjk")
    truth = all_text(load_pdf(born_digital))
    return rasterise_pdf(born_digital, tmp_path / f"{name}_scan.pdf", dpi=300), truth


def test_german_scan_is_recognised_as_german(tmp_path, shared_data, tesseract):
    letter = json.loads((shared_data / "german_grascco" / "grascco_phi.jsonl").open(encoding="utf-8").readline())
    text = " ".join(letter["text"].split())[:600]
    scan, truth = _sample_pdf(tmp_path, text, "latin", "de")
    doc = load_pdf(scan)
    assert doc.language == "de"
    assert character_error_rate(truth, all_text(doc)) <= 0.05


def test_chinese_scan_is_detected_and_read_with_the_chinese_model(tmp_path, shared_data, tesseract):
    with (shared_data / "chinese_huatuo" / "llama_data.jsonl").open(encoding="utf-8") as fh:
        text = "\n\n".join(json.loads(fh.readline())["output"] for _ in range(4))  # ~320 characters
    scan, truth = _sample_pdf(tmp_path, text, "cjk", "zh")
    doc = load_pdf(scan)
    assert doc.language == "zh" and doc.metadata["ocr_pages"] == [1]
    assert character_error_rate(truth, all_text(doc)) <= 0.05


def test_missing_language_data_names_the_package(tesseract):
    with pytest.raises(OcrError, match="apt-get install tesseract-ocr-klingon"):
        tesseract.check("eng+klingon")


def test_tsv_rows_become_lines_with_sizes_in_points():
    header = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"
    rows = ["5\t1\t1\t1\t1\t1\t100\t100\t200\t50\t96\tHeading", "5\t1\t1\t1\t1\t2\t320\t100\t150\t50\t90\tbig",
            "5\t1\t2\t1\t1\t1\t100\t300\t120\t25\t95\tbody", "4\t1\t2\t1\t1\t0\t100\t300\t120\t25\t-1\t"]
    lines, confidence = tsv_lines("\n".join([header, *rows]), dpi=300)
    assert [ln.text for ln in lines] == ["Heading big", "body"]
    assert (lines[0].x0, lines[0].top) == (24.0, 24.0)  # 100 px at 300 dpi
    assert lines[0].size == pytest.approx(12.6) and lines[1].size == pytest.approx(6.3)  # 50 / 25 px with g/y descenders
    assert confidence == pytest.approx((96 + 90 + 95) / 3)


def test_levenshtein_and_cer():
    assert levenshtein("kitten", "sitting") == 3 and levenshtein("", "abc") == 3
    assert character_error_rate("the  infection\nrate", "the infection rate") == 0.0
    assert character_error_rate("高血压 是", "高血压是") == 0.0
    assert character_error_rate("abcd", "abxd") == 0.25
