"""PDF text-layer loader (offline tier).

Input: a born-digital PDF path. Output: a ``Document`` whose sections follow the headings found
in the text layer, one section per (heading, page) so that every chunk knows its page.

Layout-free heuristics: running headers/footers (lines repeated on many pages) and bare page
numbers are dropped; short ALL-CAPS lines are headings; hyphenated line breaks are joined.
Font-aware section trees and OCR of scanned pages live in the parsing stage of a later
release; a PDF with no text layer fails here with that reason.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from medgraph.ingest.loaders import file_doc_id
from medgraph.ingest.text import detect_language
from medgraph.schemas import Document, Section

_PAGE_NUMBER = re.compile(r"^(?:page\s*)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")


class PdfError(ValueError):
    """The PDF cannot be read or has no usable text layer."""


def read_pages(path: Path) -> tuple[list[str], str]:
    """The text of each page, and the title from the PDF's metadata ("" when absent)."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        raise PdfError(f"not a readable PDF: {exc}") from exc
    try:
        title = str(pdf.get_metadata_dict().get("Title", "")).strip()
        return [pdf[i].get_textpage().get_text_bounded() for i in range(len(pdf))], title
    finally:
        pdf.close()


def _is_heading(line: str) -> bool:
    """A short ALL-CAPS line with a real word, not ending like a sentence or a reference."""
    letters = [c for c in line if c.isalpha()]
    if len(letters) < 3 or len(line) > 80 or line[-1] in ".;,)":
        return False
    digits = sum(c.isdigit() for c in line)
    has_word = any(len(w) >= 4 and w.isalpha() for w in line.split())
    return has_word and digits < 0.2 * len(line) and all(c.isupper() for c in letters)


def _repeated_lines(pages: list[list[str]]) -> set[str]:
    """Lines (digits masked) that recur on at least 30% of pages: running headers and footers."""
    if len(pages) < 3:
        return set()
    per_page = Counter(key for page in pages for key in {_DIGITS.sub("#", ln) for ln in page})
    return {key for key, n in per_page.items() if n >= max(3, 0.3 * len(pages))}


def join_lines(lines: list[str]) -> str:
    """Join wrapped lines into running text, mending words hyphenated across a line break."""
    text = ""
    for line in lines:
        if text.endswith("-") and line[:1].islower():
            text = text[:-1] + line
        else:
            text = f"{text} {line}" if text else line
    return text


def pages_to_sections(pages: list[str]) -> list[Section]:
    lines_by_page = [[ln.strip() for ln in page.splitlines() if ln.strip()] for page in pages]
    repeated = _repeated_lines(lines_by_page)
    sections: list[Section] = []
    title, title_open = "", False  # title_open: the heading may continue on the next line
    for page_no, lines in enumerate(lines_by_page, 1):
        body: list[str] = []
        for line in lines:
            if _PAGE_NUMBER.match(line) or _DIGITS.sub("#", line) in repeated:
                continue
            if _is_heading(line):
                if body:
                    sections.append(Section(title, join_lines(body), 1, page_no))
                    body = []
                heading = line.rstrip(":").title() if len(line) > 4 else line
                title = f"{title} {heading}" if title_open else heading
                title_open = True
                continue
            title_open = False
            body.append(line)
        if body:
            sections.append(Section(title, join_lines(body), 1, page_no))
    return sections


def load_pdf(path: Path) -> Document:
    pages, meta_title = read_pages(path)
    if not pages:
        raise PdfError("PDF has no pages")
    sections = pages_to_sections(pages)
    if not sections:
        raise PdfError("PDF has no text layer (scanned pages need OCR)")
    title = meta_title or next((s.title for s in sections if s.title), path.stem)
    return Document(
        doc_id=file_doc_id(path), title=title, sections=sections,
        language=detect_language(" ".join(s.text for s in sections[:5])),
        source_id=path.name, source_path=str(path), metadata={"pages": len(pages)},
    )
