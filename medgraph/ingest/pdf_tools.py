"""Synthetic PDFs for OCR tests and benchmarks: scanned copies and typeset text samples.

Input: a PDF (or a text and a TrueType font). Output: a new PDF written with pypdfium2.

- ``rasterise_pdf`` renders pages to grayscale images and writes an image-only PDF: the same
  page as a scanner would deliver it, with the original text layer kept aside as ground truth.
- ``text_pdf`` typesets plain text (any script the font covers: English, German, Chinese) into a
  born-digital PDF with a real text layer; rasterised, it becomes a scanned sample in that language.

No public scanned medical PDF with an open licence exists in the shared data (see its
PROVENANCE), so OCR quality is measured on these renderings of real text.
"""

from __future__ import annotations

import ctypes
from pathlib import Path


def rasterise_pdf(src: Path, dst: Path, pages: list[int] | None = None, dpi: int = 200) -> Path:
    """Write an image-only copy of ``pages`` (1-based; all by default) of ``src`` to ``dst``."""
    import pypdfium2 as pdfium

    source = pdfium.PdfDocument(str(src))
    out = pdfium.PdfDocument.new()
    try:
        for page_no in pages or list(range(1, len(source) + 1)):
            page = source[page_no - 1]
            width, height = page.get_size()
            bitmap = page.render(scale=dpi / 72.0, grayscale=True)
            page.close()
            new_page = out.new_page(width, height)
            image = pdfium.PdfImage.new(out)
            image.set_bitmap(bitmap)
            image.set_matrix(pdfium.PdfMatrix().scale(width, height))
            new_page.insert_obj(image)
            new_page.gen_content()
            new_page.close()
        out.save(str(dst))
    finally:
        out.close()
        source.close()
    return dst


def _wide(text: str) -> ctypes.Array[ctypes.c_ushort]:
    data = text.encode("utf-16-le") + b"\x00\x00"
    return (ctypes.c_ushort * (len(data) // 2)).from_buffer_copy(data)


def text_pdf(text: str, font_path: Path, dst: Path, size: float = 12.0, cjk: bool = False,
             page_size: tuple[float, float] = (595.0, 842.0), margin: float = 60.0) -> Path:
    """Typeset ``text`` (paragraphs separated by blank lines) in one font, wrapping at the margins.

    Words wrap at spaces; with ``cjk`` every character is a wrap point. Pages are added as needed.
    """
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    doc = pdfium.PdfDocument.new()
    data = font_path.read_bytes()
    buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    font = raw.FPDFText_LoadFont(doc.raw, buf, len(data), raw.FPDF_FONT_TRUETYPE, 1)
    if not font:
        raise ValueError(f"pdfium cannot load the font {font_path}")
    width, height = page_size
    leading = size * 1.5
    page = None
    y = 0.0

    def new_page() -> None:
        nonlocal page, y
        if page is not None:
            page.gen_content()
        page = doc.new_page(width, height)
        y = height - margin - size

    def place(line: str) -> None:
        nonlocal y
        if page is None or y < margin:
            new_page()
        assert page is not None
        obj = raw.FPDFPageObj_CreateTextObj(doc.raw, font, ctypes.c_float(size))
        raw.FPDFText_SetText(obj, _wide(line))
        raw.FPDFPageObj_Transform(obj, 1, 0, 0, 1, margin, y)
        raw.FPDFPage_InsertObject(page.raw, obj)
        y -= leading

    def fits(line: str) -> bool:
        obj = raw.FPDFPageObj_CreateTextObj(doc.raw, font, ctypes.c_float(size))
        raw.FPDFText_SetText(obj, _wide(line))
        left, bottom, right, top = ctypes.c_float(), ctypes.c_float(), ctypes.c_float(), ctypes.c_float()
        raw.FPDFPageObj_GetBounds(obj, left, bottom, right, top)
        raw.FPDFPageObj_Destroy(obj)
        return right.value - left.value <= width - 2 * margin

    for paragraph in [p for p in text.split("\n\n") if p.strip()]:
        units = list(paragraph.replace("\n", "")) if cjk else paragraph.split()
        line = ""
        for unit in units:
            candidate = line + unit if cjk or not line else f"{line} {unit}"
            if line and not fits(candidate):
                place(line)
                line = unit.lstrip()
            else:
                line = candidate
        if line:
            place(line)
        y -= leading * 0.5
    if page is not None:
        page.gen_content()
    raw.FPDFFont_Close(font)
    doc.save(str(dst))
    doc.close()
    return dst
