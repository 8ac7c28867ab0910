"""Layout analysis shared by every parsing tier: positioned lines → blocks in reading order.

Input: one ``PageLines`` per page — text lines with their box (PDF points, origin top-left), font
size and weight — from the PDF text layer (``medgraph/ingest/pdf.py``) or from OCR
(``medgraph/ingest/ocr.py``). Output: ``Block`` records (paragraphs and tables) per page, with

- running headers, footers and page numbers removed (lines in the top or bottom margin band that
  are page numbers, or that recur on several pages with their digits masked);
- lines grouped into paragraphs by style, spacing, indentation and list markers;
- tables that follow a caption ("Table 4.1: ...") rebuilt as rows of ``cell | cell`` text;
- words hyphenated across a line break joined ("infec-" + "tion"), while real compounds keep
  their hyphen ("hospital-" + "based"), decided from the words the document uses elsewhere;
- a block that sits alone above everything else on its page (a page title written last into
  the content stream) moved to the front.

Heading detection and the section tree are in ``medgraph/ingest/sections.py``.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

MARGIN_BAND = 0.08  # share of the page height at the top and bottom where running heads live
_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(r"^(?:page|seite|第)?\s*(?:\d{1,4}|[ivxlc]{1,6})(?:\s*(?:of|/|von)\s*\d{1,4})?\s*页?$",
                          re.IGNORECASE)
_LIST_MARKER = re.compile(r"^(?:[•·▪◦‣›»❑■□●○✓\-–—*]|\(?\d{1,2}[.)]|\(?[a-z][.)]|\(?[ivx]{1,4}[.)])\s")
_CAPTION = re.compile(r"^(?:Table|Tab\.|Tabelle|表)\s*[0-9IVX]+[A-Za-z]?(?:[.:]\d+)*\s*[.:]?(?:\s|$)")
_HYPHENS = "-\x02\u00ad\ufffe"
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


@dataclass(frozen=True)
class Line:
    """One visual line: text, box in points (origin top-left), font size in points, bold or not."""

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    bold: bool = False
    font: str = ""  # font family ("" when unknown, e.g. OCR)


@dataclass
class PageLines:
    """The lines of one page (1-based ``page``) and where they came from (``text`` or an OCR engine)."""

    page: int
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)
    source: str = "text"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PageLines:
        lines = [Line(**ln) for ln in data.get("lines", [])]
        return cls(int(data["page"]), float(data["width"]), float(data["height"]), lines, str(data.get("source", "text")))


@dataclass
class Block:
    """A paragraph (``text``), a ``heading`` or a ``table`` (rows in ``text``, its ``caption``)."""

    kind: str
    text: str
    page: int
    size: float = 0.0
    bold: bool = False
    level: int = 0  # headings: 1 is the top level; 0 = decide from style (sections.py)
    n_lines: int = 1
    top: float = 0.0
    bottom: float = 0.0
    caption: str = ""
    source: str = "text"
    font: str = ""
    x0: float = 0.0
    x1: float = 0.0


# --- document-wide statistics ----------------------------------------------------------------


def _key(text: str) -> str:
    return " ".join(_DIGITS.sub("#", text.lower()).split())


def remove_furniture(pages: list[PageLines]) -> list[PageLines]:
    """Drop page numbers and running headers/footers found in the margin bands."""
    body = body_size(pages)
    seen: Counter[str] = Counter()
    for page in pages:
        seen.update({_key(ln.text) for ln in page.lines if _in_band(ln, page)})
    out = []
    for page in pages:
        kept = [ln for ln in page.lines if not (_in_band(ln, page) and _is_furniture(ln, page, seen, body))]
        out.append(PageLines(page.page, page.width, page.height, kept, page.source))
    return out


def _in_band(line: Line, page: PageLines) -> bool:
    band = MARGIN_BAND * page.height
    return line.bottom <= band or line.top >= page.height - band


def _is_furniture(line: Line, page: PageLines, seen: Counter[str], body: float) -> bool:
    text = line.text.strip()
    if _PAGE_NUMBER.match(text):
        return True
    if line.bottom <= 0.5 * MARGIN_BAND * page.height and line.size < 0.8 * body and len(text.split()) <= 8:
        return True  # a small running head at the very top of the page (chapter name)
    return seen[_key(text)] >= 2 and line.size <= 1.15 * body


def body_size(pages: list[PageLines]) -> float:
    """The font size that carries most characters: the body text."""
    weight: Counter[float] = Counter()
    for page in pages:
        for ln in page.lines:
            weight[round(ln.size * 2) / 2] += len(ln.text)
    return weight.most_common(1)[0][0] if weight else 10.0


def body_font(pages: list[PageLines]) -> str:
    """The font family that carries most characters ("" when the lines have none, e.g. OCR)."""
    weight: Counter[str] = Counter()
    for page in pages:
        for ln in page.lines:
            weight[ln.font] += len(ln.text)
    return weight.most_common(1)[0][0] if weight else ""


def vocabulary(pages: list[PageLines]) -> Counter[str]:
    """Lower-cased words (and hyphenated compounds) of the document, to decide line-end hyphens."""
    words: Counter[str] = Counter()
    for page in pages:
        for ln in page.lines:
            text = ln.text.rstrip(_HYPHENS + " ")
            for match in _WORD.finditer(text):
                word = match.group(0).lower()
                words[word] += 1
                if "-" in word:
                    words.update(word.split("-"))
    return words


# --- joining lines ---------------------------------------------------------------------------


def join_lines(lines: list[str], vocab: Counter[str] | None = None) -> str:
    """Join wrapped lines; a word hyphenated at a line end is mended unless it is a compound."""
    vocab = vocab if vocab is not None else Counter()
    text = ""
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if not text:
            text = line
        elif text[-1] in _HYPHENS and line[0].isalpha():
            text = text[:-1] + ("-" if _keep_hyphen(text[:-1], line, vocab) else "") + line
        elif text[-1] in _HYPHENS[1:]:
            text = text[:-1] + line
        elif _CJK.match(text[-1]) and _CJK.match(line[0]):
            text += line
        else:
            text = f"{text} {line}"
    return text.replace("\x02", "-").replace("\ufffe", "-").replace("\u00ad", "")


def _keep_hyphen(before: str, after: str, vocab: Counter[str]) -> bool:
    left_match = re.search(r"[^\W\d_]+$", before)
    right_match = re.match(r"[^\W\d_]+", after)
    if not left_match or not right_match or after[0].isupper():
        return True  # "COVID-" + "19", "Healthcare-" + "Associated": a real hyphen
    left, right = left_match.group(0).lower(), right_match.group(0).lower()
    joined, hyphenated = vocab[left + right], vocab[f"{left}-{right}"]
    if joined != hyphenated:
        return hyphenated > joined
    return len(left) >= 3 and vocab[left] > 0 and vocab[right] > 0  # two words of their own: a compound


# --- blocks of one page ----------------------------------------------------------------------


def page_blocks(page: PageLines, body: float, vocab: Counter[str]) -> list[Block]:
    """Paragraphs and tables of one page, in reading order."""
    blocks: list[Block] = []
    lines = page.lines
    i = 0
    while i < len(lines):
        if _CAPTION.match(lines[i].text.strip()):
            table, i = _table(lines, i, body, page, vocab)
            if table is not None:
                blocks.append(table)
                continue
        j = _paragraph_end(lines, i)
        blocks.append(_paragraph(lines[i:j], page, vocab))
        i = j
    return _read_top_first(blocks)


def _same_paragraph(prev: Line, cur: Line, gap_limit: float) -> bool:
    size = max(prev.size, cur.size, 1.0)
    if abs(prev.size - cur.size) > 0.1 * size or prev.bold != cur.bold or prev.font != cur.font:
        return False
    gap = cur.top - prev.bottom
    if gap < -0.5 * size or gap > gap_limit:  # moved up (next column) or a paragraph gap
        return False
    if cur.x0 < prev.x0 - 2.5 * size or cur.x0 > prev.x1:  # a different column
        return False
    return not _LIST_MARKER.match(cur.text.strip())


def _gap_limit(lines: list[Line], start: int) -> float:
    """Line gaps above this are paragraph breaks: the usual gap of the page plus half a line."""
    size = lines[start].size
    gaps = [b.top - a.bottom for a, b in zip(lines, lines[1:], strict=False)
            if abs(a.size - b.size) < 0.15 * size and 0 <= b.top - a.bottom < 2 * size]
    usual = statistics.median(gaps) if gaps else 0.3 * size
    return usual + 0.5 * size


def _paragraph_end(lines: list[Line], start: int) -> int:
    limit = _gap_limit(lines, start)
    j = start + 1
    while j < len(lines) and _same_paragraph(lines[j - 1], lines[j], limit) and not _CAPTION.match(lines[j].text.strip()):
        j += 1
    return j


def _paragraph(lines: list[Line], page: PageLines, vocab: Counter[str]) -> Block:
    fonts = Counter(ln.font for ln in lines)
    return Block(
        "text", join_lines([ln.text for ln in lines], vocab), page.page,
        size=statistics.median(ln.size for ln in lines), bold=sum(ln.bold for ln in lines) * 2 > len(lines),
        n_lines=len(lines), top=min(ln.top for ln in lines), bottom=max(ln.bottom for ln in lines),
        source=page.source, font=fonts.most_common(1)[0][0], x0=min(ln.x0 for ln in lines),
        x1=max(ln.x1 for ln in lines),
    )


def _table(lines: list[Line], start: int, body: float, page: PageLines, vocab: Counter[str]) -> tuple[Block | None, int]:
    """A caption and the smaller-type lines under it → one table block; None when no rows follow."""
    cap_end = _paragraph_end(lines, start)
    while cap_end < len(lines) and _caption_continues(lines[cap_end - 1], lines[cap_end], body):
        cap_end += 1
    end = cap_end
    while end < len(lines) and lines[end].bold and lines[end].size < body + 0.75 and end - cap_end < 12:
        end += 1  # the header row: bold, about body size
    while end < len(lines) and lines[end].size < body - 0.25:
        end += 1  # the body: set smaller than the running text
    if end == cap_end:
        return None, start
    caption = join_lines([ln.text for ln in lines[start:cap_end]], vocab)
    rows = _rows(lines[cap_end:end], vocab)
    block = Block("table", "\n\n".join(rows), page.page, size=lines[cap_end].size, n_lines=end - cap_end,
                  top=lines[start].top, bottom=max(ln.bottom for ln in lines[start:end]), caption=caption,
                  source=page.source)
    return block, end


def _caption_continues(prev: Line, cur: Line, body: float) -> bool:
    return abs(cur.size - prev.size) < 0.15 * prev.size and not cur.bold and 0 <= cur.top - prev.bottom < 0.6 * prev.size \
        and abs(cur.x0 - prev.x0) < 2 * prev.size and cur.size >= body - 0.25


def _rows(lines: list[Line], vocab: Counter[str]) -> list[str]:
    """Cells (lines stacked at one x) grouped into rows by vertical overlap; cells joined by ' | '."""
    cells: list[list[Line]] = []
    for ln in lines:
        last = cells[-1][-1] if cells else None
        below = last is not None and last.bold == ln.bold and -0.5 * ln.size <= ln.top - last.bottom < 1.0 * ln.size
        if last is not None and below and abs(ln.x0 - last.x0) < 0.6 * ln.size:
            cells[-1].append(ln)
        elif last is not None and below and cells[-1][0].x0 < ln.x0 - 0.6 * ln.size and ln.x0 < last.x1:
            cells[-1].append(ln)  # a wrapped cell line indented under its first line
        else:
            cells.append([ln])
    boxes = sorted(((min(c.top for c in cell), max(c.bottom for c in cell), min(c.x0 for c in cell),
                     join_lines([c.text for c in cell], vocab)) for cell in cells), key=lambda b: (b[0], b[2]))
    rows: list[list[tuple[float, float, float, str]]] = []
    for box in boxes:
        if rows and box[0] < max(b[1] for b in rows[-1]) - 0.3 * lines[0].size:
            rows[-1].append(box)
        else:
            rows.append([box])
    return [" | ".join(b[3] for b in sorted(row, key=lambda b: b[2])) for row in rows]


def _read_top_first(blocks: list[Block]) -> list[Block]:
    """Move a block that sits alone above all others on the page to the front."""
    if len(blocks) < 2:
        return blocks
    top = min(range(len(blocks)), key=lambda k: blocks[k].top)
    others = [b for k, b in enumerate(blocks) if k != top]
    if top > 0 and blocks[top].bottom <= min(b.top for b in others):
        return [blocks[top], *others]
    return blocks


def document_blocks(pages: list[PageLines]) -> list[Block]:
    """All blocks of a document, page by page, after furniture removal."""
    pages = remove_furniture(pages)
    body = body_size(pages)
    vocab = vocabulary(pages)
    return [b for page in pages for b in page_blocks(page, body, vocab) if b.text.strip() or b.caption]
