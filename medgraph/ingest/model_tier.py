"""Model-tier parsing and OCR behind the offline tier's interfaces: Docling, MinerU, PaddleOCR.

Input: a PDF path and the ``ParsedPdf`` of its text-layer pass (``pdf.text_layer``), or a rendered
page for OCR. Output: the same records the offline tier produces — ``Block`` records (headings
with levels, paragraphs, tables with captions) for the pages the model handled, the pages still
to OCR, or ``Line`` records of an OCR'd page — so layout, sections, chunking and the Ray stages
do not care which tier ran. The engine is chosen per document language in ``parse.engines`` /
``parse.ocr.engines``.

- ``docling`` (EN/DE): Docling's layout and TableFormer models over the PDF, OCR off (pages with
  no text layer go to the configured OCR engine like everywhere else). ``parse.model_dir`` is
  Docling's ``artifacts_path`` (weights prefetched with ``docling-tools models download``).
- ``mineru`` (ZH): the ``mineru`` CLI, pipeline backend, text method, local models
  (``MINERU_MODEL_SOURCE=local``); its ``*_content_list.json`` (blocks in reading order with
  ``text_level`` and ``page_idx``, tables as HTML with captions) becomes blocks.
- ``paddleocr``: PaddleOCR 3 (PP-OCRv5) text detection + recognition on a rendered page; the
  Tesseract language codes map to Paddle's through the language packs' ``text.paddle``
  (``eng``→``en``, ``deu``→``de``, ``chi_sim``→``ch``, several Latin-script codes→``latin``). ``ocr.model_dir`` holds ``det/`` and ``rec/``.

None of these packages or weights is installed by default (``pip install 'medgraph[docling]'`` and
so on, weights from a local directory: nothing is downloaded at run time). Missing packages raise
``ModelTierUnavailable`` with the install command. The converters from each tool's output to our
blocks are plain functions, tested on the tools' documented output formats.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np

from medgraph import lang
from medgraph.config.models import OcrConfig, ParseConfig
from medgraph.ingest.layout import Block, Line
from medgraph.ingest.sections import numbering_depth


def paddle_language(tesseract_codes: str) -> str:
    """PaddleOCR's recognition model for Tesseract language codes: the pack whose ``text.tesseract``
    these are (or whose first code leads them), ``latin`` for several Latin-script packs joined."""
    by_codes = {p.text.tesseract: p.text.paddle for p in lang.packs()}
    if tesseract_codes in by_codes:
        return by_codes[tesseract_codes]
    parts = tesseract_codes.split("+")
    if len(parts) > 1 and all(code in by_codes for code in parts):
        return "latin"
    by_first = {p.text.tesseract.split("+")[0]: p.text.paddle for p in lang.packs()}
    return by_first.get(parts[0], lang.pivot().text.paddle)


class ModelTierUnavailable(RuntimeError):
    """A model-tier engine was configured but its package (or its weights) is not installed."""


def parse_with_model(engine: str, path: Path, parsed: Any, cfg: ParseConfig) -> Any:
    """Replace the text-layer lines of ``parsed`` by the model's blocks; keep pages it left empty for OCR."""
    from medgraph.ingest.parsed import ParsedPdf

    if engine == "docling":
        blocks = docling_parse(path, cfg)
    elif engine == "mineru":
        blocks = mineru_parse(path, parsed.language or lang.PIVOT, cfg)
    else:
        raise ValueError(f"unknown parse engine {engine!r}")
    covered = {b.page for b in blocks}
    return ParsedPdf(parsed.path, parsed.n_pages, parsed.title, parsed.language, [], blocks,
                     [p for p in parsed.ocr_pages if p not in covered], engine)


# --- Docling ---------------------------------------------------------------------------------


def docling_parse(path: Path, cfg: ParseConfig) -> list[Block]:
    try:
        from docling.datamodel.base_models import InputFormat
        from docling.datamodel.pipeline_options import PdfPipelineOptions
        from docling.document_converter import DocumentConverter, PdfFormatOption
    except ImportError as exc:
        raise ModelTierUnavailable("docling is not installed: pip install 'medgraph[docling]'") from exc
    options = PdfPipelineOptions(do_ocr=False, do_table_structure=True)
    if cfg.model_dir:
        options.artifacts_path = cfg.model_dir
    try:
        from docling.datamodel.accelerator_options import AcceleratorOptions
    except ImportError:  # docling < 2.40 kept it with the pipeline options
        from docling.datamodel.pipeline_options import AcceleratorOptions
    options.accelerator_options = AcceleratorOptions(device=cfg.device)
    converter = DocumentConverter(format_options={InputFormat.PDF: PdfFormatOption(pipeline_options=options)})
    return docling_blocks(converter.convert(str(path)).document)


def docling_blocks(doc: Any) -> list[Block]:
    """A DoclingDocument's body items (furniture excluded) → blocks in reading order."""
    blocks: list[Block] = []
    page = 1
    for item, _depth in doc.iterate_items():
        prov = getattr(item, "prov", None)
        page = prov[0].page_no if prov else page
        label = str(getattr(item, "label", "")).rsplit(".", 1)[-1].lower()
        text = getattr(item, "text", "") or ""
        if label == "table":
            rows = markdown_rows(item.export_to_markdown(doc=doc))
            blocks.append(Block("table", "\n\n".join(rows), page, caption=item.caption_text(doc)))
        elif label in ("section_header", "title") and text.strip():
            level = numbering_depth(text) or int(getattr(item, "level", 1) or 1)
            blocks.append(Block("heading", text.strip(), page, level=level, source="docling"))
        elif label not in ("caption", "page_header", "page_footer", "picture") and text.strip():
            blocks.append(Block("text", text.strip(), page, source="docling"))
    return blocks


def markdown_rows(markdown: str) -> list[str]:
    """A Markdown table → rows of 'cell | cell' (the separator row dropped)."""
    rows = []
    for line in markdown.splitlines():
        line = line.strip()
        if not line.startswith("|") or re.fullmatch(r"\|[\s:|-]*\|?", line):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append(" | ".join(c for c in cells if c))
    return [r for r in rows if r]


# --- MinerU ----------------------------------------------------------------------------------


def mineru_parse(path: Path, language: str, cfg: ParseConfig) -> list[Block]:
    exe = shutil.which("mineru")
    if exe is None:
        raise ModelTierUnavailable("MinerU is not installed: pip install 'medgraph[mineru]' "
                                   "(its models from a local directory: MINERU_MODEL_SOURCE=local, mineru.json)")
    with tempfile.TemporaryDirectory(prefix="mineru-") as out:
        cmd = [exe, "-p", str(path), "-o", out, "-b", "pipeline", "-m", "txt",
               "-l", lang.get_or_pivot(language).text.mineru, "-d", cfg.device, "--source", "local"]
        env = {**os.environ, "MINERU_MODEL_SOURCE": "local"}
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=cfg.timeout_s, env=env)
        found = sorted(Path(out).rglob(f"{path.stem}_content_list.json"))
        if proc.returncode != 0 or not found:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"mineru failed (exit {proc.returncode}): {tail[0]}")
        return mineru_blocks(json.loads(found[0].read_text(encoding="utf-8")))


class _TableText(HTMLParser):
    """HTML table → rows of cell text."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            if not self.rows:
                self.rows.append([])
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_rows(html: str) -> list[str]:
    parser = _TableText()
    parser.feed(html)
    return [" | ".join(c for c in row if c) for row in parser.rows if any(row)]


def mineru_blocks(items: list[dict[str, Any]]) -> list[Block]:
    """MinerU ``content_list.json`` items → blocks (``text_level`` ≥ 1 is a heading of that level)."""
    blocks: list[Block] = []
    for item in items:
        page = int(item.get("page_idx", 0)) + 1
        kind = item.get("type")
        if kind == "text" and str(item.get("text", "")).strip():
            level = int(item.get("text_level") or 0)
            blocks.append(Block("heading" if level else "text", item["text"].strip(), page, level=level, source="mineru"))
        elif kind == "table":
            rows = html_rows(str(item.get("table_body", "")))
            notes = " ".join(item.get("table_footnote") or [])
            text = "\n\n".join(rows + ([notes] if notes else []))
            blocks.append(Block("table", text, page, caption=" ".join(item.get("table_caption") or []).strip(), source="mineru"))
        elif kind == "list":
            blocks.extend(Block("text", str(t).strip(), page, source="mineru") for t in item.get("list_items", []) if str(t).strip())
        elif kind in ("image", "chart"):
            caption = " ".join(item.get("img_caption") or item.get("image_caption") or [])
            if caption.strip():
                blocks.append(Block("text", caption.strip(), page, source="mineru"))
        elif kind == "equation" and str(item.get("text", "")).strip():
            blocks.append(Block("text", item["text"].strip(), page, source="mineru"))
    return blocks


# --- PaddleOCR -------------------------------------------------------------------------------


class PaddleOcr:
    """PaddleOCR 3 (PP-OCRv5) as an ``OcrEngine``: one pipeline per language, loaded once."""

    name = "paddleocr"

    def __init__(self, cfg: OcrConfig) -> None:
        try:
            import paddleocr
        except ImportError as exc:
            from medgraph.ingest.parsed import OcrError

            raise OcrError("PaddleOCR is not installed: pip install 'medgraph[paddleocr]'") from exc
        self._module = paddleocr
        self.cfg = cfg
        self._pipelines: dict[str, Any] = {}

    def _pipeline(self, model: str) -> Any:
        if model not in self._pipelines:
            kwargs: dict[str, Any] = {"lang": model, "device": self.cfg.device, "use_doc_orientation_classify": False,
                                      "use_doc_unwarping": False, "use_textline_orientation": False}
            if self.cfg.model_dir:
                kwargs["text_detection_model_dir"] = str(Path(self.cfg.model_dir) / "det")
                kwargs["text_recognition_model_dir"] = str(Path(self.cfg.model_dir) / "rec" / model)
            self._pipelines[model] = self._module.PaddleOCR(**kwargs)
        return self._pipelines[model]

    def read(self, image: np.ndarray, dpi: int, languages: str, timeout_s: float) -> tuple[list[Line], float]:
        rgb = np.repeat(image[:, :, None], 3, axis=2)
        results = self._pipeline(paddle_language(languages)).predict(rgb)
        return paddle_lines(results, dpi)


def paddle_lines(results: list[Any], dpi: int) -> tuple[list[Line], float]:
    """PaddleOCR 3 results (``rec_texts``, ``rec_scores``, ``rec_boxes`` in pixels) → lines, confidence 0-100."""
    scale = 72.0 / dpi
    lines: list[Line] = []
    scores: list[float] = []
    for res in results:
        for text, score, box in zip(res["rec_texts"], res["rec_scores"], res["rec_boxes"], strict=False):
            if not str(text).strip():
                continue
            x0, y0, x1, y1 = (float(v) for v in box)
            lines.append(Line(str(text).strip(), round(x0 * scale, 1), round(y0 * scale, 1), round(x1 * scale, 1),
                              round(y1 * scale, 1), round((y1 - y0) * scale / 1.15, 1)))
            scores.append(float(score))
    lines.sort(key=lambda ln: (round(ln.top / max(ln.size, 1.0)), ln.x0))
    return lines, 100.0 * (sum(scores) / len(scores)) if scores else 0.0
