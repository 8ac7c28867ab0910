"""Model tier (Docling, MinerU, PaddleOCR) behind the offline tier's interfaces.

The models themselves need weights this workplace cannot download, so their runs skip with the
reason unless the package and weights are present (``MEDGRAPH_DOCLING_MODELS``,
``MEDGRAPH_PADDLEOCR_MODELS``; MinerU reads its own ``mineru.json``). What is tested here for
real: the converters from each tool's documented output (a Docling ``DoclingDocument`` built with
docling-core, MinerU's ``content_list.json`` format, PaddleOCR 3's result fields) into our blocks
and sections, the engine chosen per language, and the error when a configured engine is missing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil

import numpy as np
import pytest

from medgraph.config.models import OcrConfig, ParseConfig
from medgraph.ingest.chunking import section_paths
from medgraph.ingest.model_tier import (
    ModelTierUnavailable,
    html_rows,
    markdown_rows,
    mineru_blocks,
    paddle_lines,
)
from medgraph.ingest.ocr import OcrError, make_engine
from medgraph.ingest.pdf import assemble, load_pdf, parse_pdf
from medgraph.ingest.sections import build_sections
from tests.helpers import require_module

CDC = "cdc_guide_infection_prevention_outpatient_2016.pdf"
HAS = {name: importlib.util.find_spec(name) is not None for name in ("docling", "docling_core", "paddleocr")}


def test_engines_are_chosen_per_language():
    cfg = ParseConfig(engines={"en": "docling", "zh": "mineru", "default": "text_layer"})
    assert [cfg.engine_for(lang) for lang in ("en", "zh", "de", "")] == ["docling", "mineru", "text_layer", "text_layer"]
    with pytest.raises(ValueError, match="default"):
        ParseConfig(engines={"en": "docling"})


# skip-ok: shows the error when the optional package is absent
@pytest.mark.skipif(HAS["docling"], reason="docling is installed: the missing-package path cannot be shown")
def test_a_configured_docling_without_the_package_says_how_to_install(shared_data):
    cfg = ParseConfig(engines={"en": "docling", "default": "text_layer"})
    with pytest.raises(ModelTierUnavailable, match=r"pip install 'medgraph\[docling\]'"):
        parse_pdf(shared_data / "pdfs" / CDC, cfg)


# skip-ok: shows the error when the optional package is absent
@pytest.mark.skipif(shutil.which("mineru") is not None, reason="mineru is installed")
def test_a_configured_mineru_without_the_tool_says_how_to_install(shared_data):
    cfg = ParseConfig(engines={"en": "mineru", "default": "text_layer"})
    with pytest.raises(ModelTierUnavailable, match=r"medgraph\[mineru\]"):
        parse_pdf(shared_data / "pdfs" / CDC, cfg)


# skip-ok: shows the error when the optional package is absent
@pytest.mark.skipif(HAS["paddleocr"], reason="paddleocr is installed")
def test_a_configured_paddleocr_without_the_package_says_how_to_install():
    with pytest.raises(OcrError, match=r"medgraph\[paddleocr\]"):
        make_engine("paddleocr", OcrConfig())


def test_docling_document_becomes_sections_with_levels_tables_and_pages():
    require_module("docling_core", reason="docling-core is not installed (pip install 'medgraph[parse]')")
    from docling_core.types.doc import (
        BoundingBox,
        ContentLayer,
        DocItemLabel,
        DoclingDocument,
        ProvenanceItem,
        Size,
        TableCell,
        TableData,
    )

    from medgraph.ingest.model_tier import docling_blocks

    def prov(page: int) -> ProvenanceItem:
        return ProvenanceItem(page_no=page, bbox=BoundingBox(l=0, t=10, r=100, b=0), charspan=(0, 1))

    doc = DoclingDocument(name="who")
    for page in (1, 2):
        doc.add_page(page_no=page, size=Size(width=595, height=842))
    doc.add_text(label=DocItemLabel.PAGE_HEADER, text="Running head", prov=prov(1), content_layer=ContentLayer.FURNITURE)
    doc.add_heading("4 Methods", level=1, prov=prov(1))
    doc.add_heading("4.6 Evidence identification and retrieval", level=1, prov=prov(1))  # Docling's level is flat
    doc.add_text(label=DocItemLabel.TEXT, text="According to the guidelines development plan.", prov=prov(1))
    caption = doc.add_text(label=DocItemLabel.CAPTION, text="Table 4.1: SIGHT search", prov=prov(2))
    cells = [TableCell(text=text, start_row_offset_idx=r, end_row_offset_idx=r + 1, start_col_offset_idx=c,
                       end_col_offset_idx=c + 1, column_header=r == 0)
             for r, row in enumerate([["Dimension", "Thematic area"], ["1", "Organizational arrangements"]])
             for c, text in enumerate(row)]
    doc.add_table(data=TableData(num_rows=2, num_cols=2, table_cells=cells), caption=caption, prov=prov(2))

    sections = build_sections(docling_blocks(doc))
    assert section_paths(sections) == [["4 Methods"],  # a heading with only sub-headings keeps its place
                                       ["4 Methods", "4.6 Evidence identification and retrieval"],
                                       ["4 Methods", "4.6 Evidence identification and retrieval", "Table 4.1: SIGHT search"]]
    assert [s.page for s in sections] == [1, 1, 2]
    assert "1 | Organizational arrangements" in sections[2].text
    assert not any("Running head" in s.text for s in sections)


def test_mineru_content_list_becomes_sections():
    items = [  # the documented content_list.json shape: reading order, text_level, page_idx from 0
        {"type": "text", "text": "高血压防治指南", "text_level": 1, "page_idx": 0},
        {"type": "text", "text": "1 诊断 ", "text_level": 2, "page_idx": 0},
        {"type": "text", "text": "诊室血压≥140/90 mmHg 可诊断为高血压。", "page_idx": 0},
        {"type": "table", "img_path": "images/t.jpg", "table_caption": ["表 1 血压分类"], "table_footnote": ["单位: mmHg"],
         "table_body": "<html><body><table><tr><td>分类</td><td>收缩压</td></tr>"
                       "<tr><td>正常</td><td>&lt;120</td></tr></table></body></html>", "page_idx": 1},
        {"type": "image", "img_path": "images/f.jpg", "img_caption": ["图 1 流程"], "img_footnote": [], "page_idx": 1},
    ]
    sections = build_sections(mineru_blocks(items))
    assert section_paths(sections) == [["高血压防治指南"], ["高血压防治指南", "1 诊断"],
                                       ["高血压防治指南", "1 诊断", "表 1 血压分类"], ["高血压防治指南", "1 诊断"]]
    assert [s.page for s in sections] == [1, 1, 2, 2]
    assert sections[2].text.split("\n\n") == ["表 1 血压分类", "分类 | 收缩压", "正常 | <120", "单位: mmHg"]
    assert sections[3].text == "图 1 流程"


def test_table_text_helpers():
    assert markdown_rows("| a | b |\n|---|:--:|\n| 1 | 2 |") == ["a | b", "1 | 2"]
    assert html_rows("<table><tr><th>x</th><td> y  z </td></tr></table>") == ["x | y z"]


def test_paddleocr_results_become_lines_in_points():
    results = [{"rec_texts": ["Hand hygiene", "", "Wash hands"], "rec_scores": [0.99, 0.1, 0.97],
                "rec_boxes": np.array([[300, 120, 900, 180], [0, 0, 1, 1], [300, 240, 800, 280]])}]
    lines, confidence = paddle_lines(results, dpi=300)
    assert [ln.text for ln in lines] == ["Hand hygiene", "Wash hands"]
    assert lines[0].x0 == 72.0 and lines[0].size > lines[1].size
    assert confidence == pytest.approx(98.0)


# skip-ok: model tier: needs the optional package and its local models (not downloadable here)
@pytest.mark.skipif(not (HAS["docling"] and os.environ.get("MEDGRAPH_DOCLING_MODELS")),
                    reason="Docling and its models (MEDGRAPH_DOCLING_MODELS=artifacts path) are not present")
def test_docling_parses_the_cdc_guide(shared_data):
    cfg = ParseConfig(engines={"default": "docling"}, model_dir=os.environ["MEDGRAPH_DOCLING_MODELS"])
    doc = load_pdf(shared_data / "pdfs" / CDC, cfg)
    assert doc.metadata["parser"] == "docling"
    assert any(s.title.lower().startswith("introduction") and s.page == 3 for s in doc.sections)


# skip-ok: model tier: needs the optional package and its local models (not downloadable here)
@pytest.mark.skipif(shutil.which("mineru") is None, reason="MinerU (and its local models) is not installed")
def test_mineru_parses_a_pdf(shared_data):
    parsed = parse_pdf(shared_data / "pdfs" / CDC, ParseConfig(engines={"default": "mineru"}))
    assert parsed.engine == "mineru" and parsed.blocks
    assert assemble(parsed).sections


# skip-ok: model tier: needs the optional package and its local models (not downloadable here)
@pytest.mark.skipif(not (HAS["paddleocr"] and os.environ.get("MEDGRAPH_PADDLEOCR_MODELS")),
                    reason="PaddleOCR and its models (MEDGRAPH_PADDLEOCR_MODELS=dir with det/ and rec/) are not present")
def test_paddleocr_reads_a_scanned_page(tmp_path, shared_data):
    from medgraph.ingest.pdf_tools import rasterise_pdf

    scan = rasterise_pdf(shared_data / "pdfs" / CDC, tmp_path / "scan.pdf", [3], dpi=300)
    ocr = OcrConfig(engines={"default": "paddleocr"}, model_dir=os.environ["MEDGRAPH_PADDLEOCR_MODELS"])
    doc = load_pdf(scan, ParseConfig(ocr=ocr))
    assert doc.metadata["ocr_pages"] == [1] and "healthcare delivery" in " ".join(s.text for s in doc.sections)
