"""The offline parser on the real CDC and WHO guides: section paths, pages, tables, furniture.

Every expected heading, page and sentence below was read off the PDFs themselves (the page
numbers are the PDF's page indices, 1-based). The chunker then has to carry those section paths
and pages into every chunk, which is what a citation shows.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from medgraph.config.models import ChunkingConfig
from medgraph.ingest.chunking import Chunker, section_paths
from medgraph.ingest.parsed import PdfError
from medgraph.ingest.pdf import load_pdf, text_layer
from medgraph.ingest.storage import file_doc_id
from medgraph.schemas import Document

CDC = "cdc_guide_infection_prevention_outpatient_2016.pdf"
WHO = "who_ipc_core_components_guidelines_2016.pdf"
FUNDAMENTALS = "Fundamental Elements Needed to Prevent Transmission of Infectious Agents in Outpatient Settings"


@pytest.fixture(scope="module")
def cdc(shared_data) -> Document:
    return load_pdf(shared_data / "pdfs" / CDC)


@pytest.fixture(scope="module")
def who(shared_data) -> Document:
    return load_pdf(shared_data / "pdfs" / WHO)


def located(doc: Document, sentence: str) -> tuple[list[str], int | None]:
    """The section path and page of the section whose text contains ``sentence``."""
    for section, path in zip(doc.sections, section_paths(doc.sections), strict=True):
        if sentence in " ".join(section.text.split()):
            return path, section.page
    raise AssertionError(f"{sentence!r} not found in any section")


@pytest.mark.parametrize(("sentence", "path", "page"), [
    ("The transition of healthcare delivery from acute care hospitals", ["Introduction"], 3),
    ("By highlighting existing CDC and HICPAC recommendations", ["Objectives"], 5),
    ("Infection prevention must be made a priority in any setting where healthcare is delivered",
     [FUNDAMENTALS, "Dedicate Resources to Infection Prevention (Administrative Resources)"], 6),
    ("1. Develop and maintain infection prevention and occupational health programs.",
     [FUNDAMENTALS, "Dedicate Resources to Infection Prevention (Administrative Resources)",
      "Key administrative recommendations for outpatient settings"], 7),
    ("Ongoing education and competency-based training of HCP", [FUNDAMENTALS, "Educate and Train Healthcare Personnel"], 7),
    ("Medical devices are labeled by the manufacturer as either reusable or single-use", [FUNDAMENTALS, "Medical Devices"], 12),
    ("Barie PS. Infection Control Practices in Ambulatory Surgical Centers", ["References"], 18),
    ("This checklist is a companion to the Guide to Infection Prevention",
     ["Appendix A: Infection Prevention Checklist for Outpatient Settings"], 19),
])
def test_cdc_headings_become_section_paths_with_pages(cdc, sentence, path, page):
    assert located(cdc, sentence) == (path, page)


@pytest.mark.parametrize(("sentence", "path", "page"), [
    ("The specific PICO questions were developed by the WHO secretariat", ["4 Methods", "4.5 Research question/PICO"], 22),
    ("The SIGHT review and its update were used to evaluate the evidence",
     ["4 Methods", "4.6 Evidence identification and retrieval", "4.6.1 Systematic review: facility level"], 22),
    ("Evaluation of the evidence from two studies shows that IPC programmes",
     ["8 Core components", "Core component 1: Infection prevention and control programmes",
      "1a. Health care facility level", "Rationale for the recommendation"], 30),
    ("The content of section 1a is strongly linked to section 1b",
     ["8 Core components", "Core component 1: Infection prevention and control programmes",
      "1a. Health care facility level", "Remarks"], 30),
    ("The Department of Service Delivery and Safety of the World Health Organization", ["Acknowledgements"], 4),
])
def test_who_numbered_headings_nest_by_number_and_type(who, sentence, path, page):
    assert located(who, sentence) == (path, page)


def test_tables_keep_their_caption_and_read_as_rows(who):
    path, page = located(who, "2 | Targets and methods of HAI surveillance, outbreak management and the role of feedback")
    assert path[-1] == "Table 4.1: SIGHT search stratified by dimension" and page == 22
    assert path[:-1] == ["4 Methods", "4.6 Evidence identification and retrieval", "4.6.1 Systematic review: facility level"]
    path, _ = located(who, "6 | Auditing | The process of auditing and its impact on HAIs")
    assert path[-1] == "Table 4.2: Dimensions and corresponding components used for the SIGHT review update"


def test_running_heads_footers_and_page_numbers_are_gone(cdc, who):
    assert not any("Version 2.3" in s.text for s in cdc.sections)  # the CDC's running footer
    running_head = "Programmes at the National and Acute Health Care Facility Level"
    assert not any(running_head in s.text for s in who.sections if s.page and s.page > 2)
    assert not any(s.text.strip().isdigit() for s in cdc.sections + who.sections)


def test_line_end_hyphens_are_mended_or_kept(cdc, who):
    cdc_text = " ".join(" ".join(s.text.split()) for s in cdc.sections)
    assert "non-hospital based clinics" in cdc_text and "hospital-based outpatient clinics" in cdc_text
    who_text = " ".join(" ".join(s.text.split()) for s in who.sections)
    assert "core components of effective IPC programmes aimed at reducing HAIs" in who_text  # "pro-" + "grammes"
    assert "\x02" not in cdc_text + who_text and "\ufffe" not in cdc_text + who_text


def test_documents_carry_title_language_and_page_count(cdc, who):
    assert cdc.title.startswith("Guide to Infection Prevention") and cdc.language == "en"
    assert who.title.startswith("Guidelines on Core Components of Infection Prevention")  # from the cover page
    assert cdc.metadata["pages"] == 44 and who.metadata["pages"] == 91
    assert cdc.metadata["ocr_pages"] == [] and cdc.metadata["parser"] == "text_layer"


def test_chunks_carry_section_path_and_page(cdc):
    chunks = Chunker(ChunkingConfig()).chunk(cdc)
    hit = next(c for c in chunks if "Develop and maintain infection prevention and occupational health" in c.text)
    assert hit.page == 7
    assert hit.section_path[-1] == "Key administrative recommendations for outpatient settings"
    assert all(c.page is not None and c.section_path for c in chunks)


def test_born_digital_pages_need_no_ocr(shared_data):
    from medgraph.config.models import ParseConfig

    parsed = text_layer(shared_data / "pdfs" / CDC, ParseConfig())
    assert parsed.ocr_pages == [] and len(parsed.pages) == 44


def test_corrupt_and_empty_pdfs_raise_with_the_reason(tmp_path):
    (tmp_path / "corrupt.pdf").write_bytes(b"%PDF-1.4\n this is not really a pdf")
    (tmp_path / "empty.pdf").write_bytes(b"")
    for name in ("corrupt.pdf", "empty.pdf"):
        with pytest.raises(PdfError, match="not a readable PDF"):
            load_pdf(tmp_path / name)


def test_a_pdf_with_no_text_at_all_says_so(tmp_path, shared_data):
    import pypdfium2 as pdfium

    blank = pdfium.PdfDocument.new()
    blank.new_page(595, 842)
    blank.save(str(tmp_path / "blank.pdf"))
    with pytest.raises(PdfError, match="no text"):
        load_pdf(tmp_path / "blank.pdf")
    shutil.copy(shared_data / "pdfs" / CDC, tmp_path / "copy.pdf")
    doc_id = load_pdf(Path(tmp_path / "copy.pdf")).doc_id
    assert doc_id == file_doc_id(tmp_path / "copy.pdf") and doc_id.startswith("file:copy.pdf@")
