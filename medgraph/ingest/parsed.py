"""A PDF between the parsing stages: opened, read by the text layer (or a layout model), and
waiting for OCR of the pages that need it.

``ParsedPdf`` is what ``Parse`` hands to ``OcrAndChunk`` (``to_dict`` / ``from_dict`` cross the Ray
boundary); ``open_pdf`` opens a file with pypdfium2, raising ``PdfError`` for one it cannot read;
``OcrError`` is OCR's failure, whichever engine ran.
Shared by the text-layer pass (``pdf.py``), OCR (``ocr.py``) and the model tier (``model_tier.py``),
which therefore do not import each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medgraph.ingest.layout import Block, PageLines


class OcrError(RuntimeError):
    """OCR could not run (engine or language data missing) or a page failed (timeout, crash)."""


class PdfError(ValueError):
    """The PDF cannot be read, or no text could be recovered from it."""


@dataclass
class ParsedPdf:
    """A PDF after the text-layer pass: lines (or model-tier blocks) per page, pages still to OCR."""

    path: str
    n_pages: int
    title: str
    language: str
    pages: list[PageLines] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)  # model tier: already laid out
    ocr_pages: list[int] = field(default_factory=list)
    engine: str = "text_layer"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "n_pages": self.n_pages, "title": self.title, "language": self.language,
            "pages": [p.to_dict() for p in self.pages], "blocks": [b.__dict__ for b in self.blocks],
            "ocr_pages": self.ocr_pages, "engine": self.engine,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ParsedPdf:
        return cls(d["path"], int(d["n_pages"]), d["title"], d["language"],
                   [PageLines.from_dict(p) for p in d["pages"]], [Block(**b) for b in d["blocks"]],
                   [int(p) for p in d["ocr_pages"]], d.get("engine", "text_layer"))


def open_pdf(path: Path) -> Any:
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        raise PdfError(f"not a readable PDF: {exc}") from exc
