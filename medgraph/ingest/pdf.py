"""PDF parsing, offline tier: the pypdfium2 text layer with layout, and OCR of pages that lack one.

Input: a PDF path and the ``parse:`` config. Output: a ``Document`` whose sections follow the
document's own heading tree, one section per (heading, page), so that every chunk carries its
``section_path`` and its page.

Two steps, which the corpus build runs as two Ray Data stages (``jobs/stages.py``):

1. ``parse_pdf`` reads the text layer of every page: each character's box, font size (from the
   text matrix) and weight, grouped into visual lines (``PageLines``). A page whose layer is
   missing (fewer than ``ocr.min_chars`` characters on a page that shows an image) or garbled
   (unmappable glyphs) is listed in ``ParsedPdf.ocr_pages`` instead; the document language is
   detected from the pages that do have text. A model-tier engine (Docling, MinerU), chosen per
   language in ``parse.engines``, returns blocks for the pages it handled instead of lines.
2. ``ocr_parsed`` renders the listed pages and reads them with the OCR engine chosen per
   language (``medgraph/ingest/ocr.py``), then ``assemble`` runs layout analysis
   (``layout.py``) and builds the section tree (``sections.py``).

``load_pdf`` does both in-process (the Ray-free path of ``medgraph.ingest.loaders``). A PDF that
cannot be opened, or that has no text left after OCR, raises ``PdfError`` with the reason.
"""

from __future__ import annotations

import ctypes
import logging
import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medgraph.config.models import ParseConfig
from medgraph.ingest.layout import Line, PageLines, body_font, body_size, document_blocks
from medgraph.ingest.parsed import ParsedPdf, PdfError, open_pdf
from medgraph.ingest.sections import blocks_to_sections
from medgraph.ingest.storage import file_doc_id
from medgraph.ingest.text import detect_language
from medgraph.schemas import Document

log = logging.getLogger(__name__)

_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi|extrabold", re.IGNORECASE)
_LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st", "\ufb06": "st"}
_SYMBOL_FONTS = re.compile(r"wingding|symbol|dingbat", re.IGNORECASE)


# --- the text layer of one page --------------------------------------------------------------


class _CharReader:
    """Per-character box, size and weight of one pdfium text page (font facts cached per object)."""

    def __init__(self, textpage: Any, page_height: float) -> None:
        import pypdfium2.raw as raw

        self.raw = raw
        self.tp = textpage.raw if hasattr(textpage, "raw") else textpage
        self.height = page_height
        self.rect = raw.FS_RECTF()
        self.matrix = raw.FS_MATRIX()
        self.name = ctypes.create_string_buffer(256)
        self.flags = ctypes.c_int()
        self.fonts: dict[int, tuple[float, bool, bool, str]] = {}

    def style(self, k: int) -> tuple[float, bool, bool, str]:
        """(size in points, bold, symbol font, font family) of character ``k``."""
        r = self.raw
        obj = r.FPDFText_GetTextObject(self.tp, k)
        key = ctypes.cast(obj, ctypes.c_void_p).value or -1 - k
        if key not in self.fonts:
            r.FPDFText_GetMatrix(self.tp, k, self.matrix)
            m = self.matrix
            size = r.FPDFText_GetFontSize(self.tp, k) * math.sqrt(abs(m.a * m.d - m.b * m.c))
            r.FPDFText_GetFontInfo(self.tp, k, self.name, 256, self.flags)
            name = self.name.value.decode("latin-1")
            bold = r.FPDFText_GetFontWeight(self.tp, k) >= 600 or bool(_BOLD_NAME.search(name))
            self.fonts[key] = (round(size, 2), bold, bool(_SYMBOL_FONTS.search(name)), font_family(name))
        return self.fonts[key]

    def box(self, k: int) -> tuple[float, float, float, float]:
        """(x0, top, x1, bottom) of character ``k``, origin top-left."""
        self.raw.FPDFText_GetLooseCharBox(self.tp, k, self.rect)
        rc = self.rect
        return rc.left, self.height - rc.top, rc.right, self.height - rc.bottom


def font_family(name: str) -> str:
    """'ABCDEF+HelveticaNeueLTStd-Bd' → 'HelveticaNeueLTStd'; 'Arial-ItalicMT' → 'Arial'."""
    name = name.split("+", 1)[-1]
    family = re.split(r"[-,]", name, maxsplit=1)[0]
    return re.sub(r"(PSMT|MT|PS)$", "", family)


@dataclass
class _LineBuilder:
    """Words of the line being read: text, union box, and per-word style (weighted by length)."""

    parts: list[str] = field(default_factory=list)
    box: tuple[float, float, float, float] | None = None
    last_x1: float = 0.0
    styles: list[tuple[float, bool, str, int]] = field(default_factory=list)

    def add(self, text: str, box: tuple[float, float, float, float], size: float, bold: bool, font: str) -> None:
        self.parts.append(text)
        b = self.box
        self.box = box if b is None else (min(b[0], box[0]), min(b[1], box[1]), max(b[2], box[2]), max(b[3], box[3]))
        self.last_x1 = box[2]
        self.styles.append((size, bold, font, len(text)))

    def breaks(self, box: tuple[float, float, float, float], size: float) -> bool:
        """A word below the current line, or far right of it, starts a new line (or table cell)."""
        if self.box is None:
            return False
        top, bottom = self.box[1], self.box[3]
        overlap = min(bottom, box[3]) - max(top, box[1])
        if overlap < 0.3 * min(bottom - top, box[3] - box[1], size or 1):
            return True
        return box[0] - self.last_x1 > 3.0 * max(size, 1.0)

    def line(self) -> Line | None:
        text = " ".join("".join(self.parts).split())
        if not text or self.box is None:
            return None
        total = sum(n for *_, n in self.styles) or 1
        sizes = sorted((sz for sz, _, _, n in self.styles for _ in range(min(n, 50))))
        bold = sum(n for _, b, _, n in self.styles if b) >= 0.8 * total
        fonts: dict[str, int] = {}
        for _, _, f, n in self.styles:
            fonts[f] = fonts.get(f, 0) + n
        x0, top, x1, bottom = self.box
        return Line(unicodedata.normalize("NFC", text), round(x0, 1), round(top, 1), round(x1, 1), round(bottom, 1),
                    sizes[len(sizes) // 2], bold, max(fonts, key=lambda f: fonts[f]))


_TOKEN = re.compile(r"\r\n|[\r\n]|[ \t\u00a0\u2000-\u200b]+|[\x02\u00ad\ufffe]|[^\s\x02\u00ad\ufffe]+")
_BAD_CHAR = re.compile(r"[\x00-\x1f\x7f-\x9f\ue000-\uf8ff\ufffd]")


def _page_text(tp: Any) -> str:
    """The page's characters, one per pdfium char index."""
    import pypdfium2.raw as raw

    n = raw.FPDFText_CountChars(tp)
    buf = ctypes.create_string_buffer(2 * (n + 1))
    raw.FPDFText_GetText(tp, 0, n, ctypes.cast(buf, ctypes.POINTER(ctypes.c_ushort)))
    text = buf.raw[: 2 * n].decode("utf-16-le", errors="replace")
    if len(text) != n:  # characters outside the BMP: read them one by one
        text = "".join(chr(raw.FPDFText_GetUnicode(tp, k)) for k in range(n))
    return text


def _clean_word(word: str, start: int, reader: _CharReader) -> tuple[str, int]:
    """Drop unmappable glyphs (count them), map symbol-font glyphs to a bullet, undo ligatures."""
    bad = 0
    if _BAD_CHAR.search(word):
        chars = []
        for i, ch in enumerate(word):
            if not _BAD_CHAR.match(ch):
                chars.append(ch)
            elif reader.style(start + i)[2]:
                chars.append("•")
            else:
                bad += 1
        word = "".join(chars)
    return "".join(_LIGATURES.get(c, c) for c in word), bad


def page_lines(page: Any, page_no: int) -> tuple[PageLines, int, int]:
    """Visual lines of one pdfium page; also (usable characters, unmappable characters).

    Geometry and style are read per word (first and last character), which is 4-5x fewer calls
    into pdfium than per character; pdfium's own line breaks and generated spaces delimit words.
    """
    width, height = page.get_size()
    textpage = page.get_textpage()
    reader = _CharReader(textpage, height)
    text = _page_text(reader.tp)
    lines: list[Line] = []
    cur = _LineBuilder()
    good = bad = 0

    def flush() -> None:
        nonlocal cur
        line = cur.line()
        if line is not None:
            lines.append(line)
        cur = _LineBuilder()

    for m in _TOKEN.finditer(text):
        token = m.group(0)
        if token[0] in "\r\n":
            flush()
        elif token[0] in " \t\u00a0" or "\u2000" <= token[0] <= "\u200b":
            if cur.parts and cur.parts[-1] != " ":
                cur.parts.append(" ")
        elif token in "\x02\u00ad\ufffe":
            cur.parts.append("\x02")
        else:
            word, n_bad = _clean_word(token, m.start(), reader)
            bad += n_bad
            if not word:
                continue
            first, last = reader.box(m.start()), reader.box(m.end() - 1)
            box = (first[0], min(first[1], last[1]), max(first[2], last[2]), max(first[3], last[3]))
            size, bold, _, font = reader.style(m.start())
            if cur.breaks(box, size):
                flush()
            good += sum(c.isalnum() for c in word)
            cur.add(word, box, size, bold, font)
    flush()
    textpage.close()
    return PageLines(page_no, round(width, 1), round(height, 1), lines, "text"), good, bad


def _has_image(page: Any, min_share: float = 0.05) -> bool:
    """Whether an image covers a noticeable part of the page (a scan, a photo of text)."""
    import pypdfium2.raw as raw

    width, height = page.get_size()
    for obj in page.get_objects(max_depth=2):
        if obj.type == raw.FPDF_PAGEOBJ_IMAGE:
            left, bottom, right, top = obj.get_bounds()
            if (right - left) * (top - bottom) >= min_share * width * height:
                return True
    return False


def needs_ocr(page: Any, good: int, bad: int, cfg: ParseConfig) -> bool:
    """No usable text layer: (almost) no characters on a page that shows an image, or garbled glyphs."""
    if good + bad and bad / (good + bad) > cfg.ocr.max_garbled:
        return True
    return good < cfg.ocr.min_chars and _has_image(page)


# --- whole documents -------------------------------------------------------------------------


def _meta_title(pdf: Any) -> str:
    title = str(pdf.get_metadata_dict().get("Title", "") or "").strip()
    junk = title.lower().startswith(("microsoft word", "untitled")) or title.lower().endswith((".doc", ".docx", ".pdf"))
    return "" if junk else title


def text_layer(path: Path, cfg: ParseConfig) -> ParsedPdf:
    """The offline tier's first step: lines of every page with a usable layer, the rest for OCR."""
    pdf = open_pdf(path)
    try:
        n = len(pdf)
        if n == 0:
            raise PdfError("PDF has no pages")
        pages: list[PageLines] = []
        ocr: list[int] = []
        for i in range(n):
            page = pdf[i]
            try:
                lines, good, bad = page_lines(page, i + 1)
                if needs_ocr(page, good, bad, cfg):
                    ocr.append(i + 1)
                else:
                    pages.append(lines)
            finally:
                page.close()
        title = _meta_title(pdf)
    finally:
        pdf.close()
    sample = " ".join(ln.text for p in pages[:8] for ln in p.lines)[:4000]
    language = detect_language(sample) if len(sample) >= 200 else ""
    return ParsedPdf(str(path), n, title, language, pages, [], ocr)


def parse_pdf(path: Path, cfg: ParseConfig | None = None) -> ParsedPdf:
    """Step 1 with the engine configured for the document's language (see the module docstring)."""
    cfg = cfg or ParseConfig()
    parsed = text_layer(path, cfg)
    engine = cfg.engine_for(parsed.language or "default")
    if engine == "text_layer":
        return parsed
    from medgraph.ingest.model_tier import parse_with_model

    result: ParsedPdf = parse_with_model(engine, path, parsed, cfg)
    return result


def ocr_parsed(parsed: ParsedPdf, cfg: ParseConfig | None = None) -> ParsedPdf:
    """Step 2: OCR the pages listed in ``parsed.ocr_pages``; their lines join the others."""
    cfg = cfg or ParseConfig()
    if not parsed.ocr_pages:
        return parsed
    from medgraph.ingest.ocr import ocr_pdf_pages

    ocr_lines, language = ocr_pdf_pages(Path(parsed.path), parsed.ocr_pages, parsed.language, cfg.ocr)
    pages = sorted(parsed.pages + ocr_lines, key=lambda p: p.page)
    return ParsedPdf(parsed.path, parsed.n_pages, parsed.title, parsed.language or language, pages,
                     parsed.blocks, [], parsed.engine)


def assemble(parsed: ParsedPdf) -> Document:
    """Layout analysis and the section tree over all pages → the ``Document``."""
    if parsed.ocr_pages:
        raise PdfError(f"pages {parsed.ocr_pages} still need OCR")
    path = Path(parsed.path)
    blocks = sorted(parsed.blocks + document_blocks(parsed.pages), key=lambda b: b.page)
    sections, title_page = blocks_to_sections(blocks, body_size(parsed.pages), body_font(parsed.pages))
    if not sections:
        raise PdfError("PDF has no text (no text layer, and OCR found none)")
    sample = " ".join(s.text for s in sections[:8])[:4000]
    ocr_pages = sorted({p.page for p in parsed.pages if p.source != "text"})
    return Document(
        doc_id=file_doc_id(path), title=parsed.title or title_page or path.stem, sections=sections,
        language=parsed.language or detect_language(sample), source_id=path.name, source_path=str(path),
        metadata={"pages": parsed.n_pages, "parser": parsed.engine, "ocr_pages": ocr_pages},
    )


def load_pdf(path: Path, cfg: ParseConfig | None = None) -> Document:
    """Parse, OCR what needs it, and assemble, in this process."""
    cfg = cfg or ParseConfig()
    return assemble(ocr_parsed(parse_pdf(path, cfg), cfg))
