"""Section tree from layout blocks: headings by font size, weight and numbering → ``Section`` records.

Input: ``Block`` records in reading order (``medgraph/ingest/layout.py``, or a model-tier parser
that labels headings itself). Output: ``Section`` records (title, text, level, page) and the
document title found on the first page.

A block is a heading when it is short, does not end like a sentence, and its type stands out
from the body text: larger, or bold at about body size. Heading styles are ranked (larger first,
then bold first; sizes within 13% are one style) and the rank is the heading's level, so that a
21 pt title, a 14 pt section head and a 10 pt bold box title nest in that order. Decimal
numbering ("4.6.1 ...") breaks ties: a deeper number never ranks above a shallower one of the
same style. A style that occurs only on the first page and is larger than every later heading
is the document's title, not a section. ALL-CAPS headings are shown in title case (acronyms that
the body text writes in capitals stay capitals). Every table becomes a sub-section titled by its
caption, so that the caption travels with each of its chunks.

``Section.level`` is the depth in the tree (1 = top-level section) and one section is emitted
per (heading, page), so the chunker's ``section_path`` is title → section → sub-section and every
chunk keeps its page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from medgraph.ingest.layout import Block
from medgraph.schemas import Section

_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2})*)\.?\s+\S")
_PAGE_REF = re.compile(r"(?:^|\s|\.)\d{1,3}$")
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{1,}\b")
_SMALL_WORDS = {"a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "per",
                "the", "to", "with", "vs", "via", "und", "der", "die", "das", "für", "mit", "von", "zur", "zum"}


def is_heading_candidate(block: Block, body: float, body_font: str = "") -> bool:
    """Short, not a sentence, and set apart from the body: larger, bold, or another typeface."""
    text = block.text.strip()
    if block.kind != "text" or not text or block.n_lines > 3 or len(text) > 150 or len(text.split()) > 20:
        return False
    if text[-1] in ".;,!" or not text[0].isalnum() or sum(c.isalpha() for c in text) < 2:
        return False
    if " " not in text and text.isupper() and len(text) <= 5:
        return False  # a bare acronym: a definition list's term, not a heading
    if block.source != "text":  # OCR: sizes are estimated from word boxes (±10%), so ask for more
        return block.size >= 1.25 * body
    if block.size >= body + max(1.0, 0.1 * body):
        return True
    if block.bold and block.size >= 0.75 * body:
        return True
    other_face = bool(body_font and block.font and block.font != body_font)
    plain = text[-1] != ":" and "http" not in text and "www." not in text
    return other_face and plain and abs(block.size - body) <= 0.5 and block.n_lines <= 2 and len(text.split()) <= 12


def numbering_depth(text: str) -> int:
    """Depth of a decimal section number ("4" → 1, "4.6.1" → 3), 0 when unnumbered."""
    m = _NUMBERED.match(text.strip())
    return m.group(1).count(".") + 1 if m else 0


def _style_clusters(sizes: list[float]) -> dict[float, int]:
    """Map each size to a cluster index, largest first; sizes within 20% of a cluster's top join it."""
    clusters: dict[float, int] = {}
    top = None
    index = -1
    for size in sorted(set(sizes), reverse=True):
        if top is None or size < 0.8 * top:
            index += 1
            top = size
        clusters[size] = index
    return clusters


def _side_by_side(block: Block, page: list[Block]) -> bool:
    """Two more blocks of the same style on the same baseline: the cells of a table's header row."""
    mates = 0
    for other in page:
        if other is block or abs(other.size - block.size) > 0.5 or (other.bold, other.font) != (block.bold, block.font):
            continue
        overlap = min(other.bottom, block.bottom) - max(other.top, block.top)
        apart = other.x0 >= block.x1 or block.x0 >= other.x1
        mates += apart and overlap > 0.5 * min(other.bottom - other.top, block.bottom - block.top)
    return mates >= 2


def _is_contents(page: list[Block]) -> bool:
    """A table of contents: many entries that end in (or are) a page number."""
    return sum(1 for b in page if _PAGE_REF.search(b.text)) >= 5


def _is_page_title(block: Block, page: list[Block]) -> bool:
    return block.size >= max(b.size for b in page) - 0.5


def _is_cover(blocks: list[Block], page: int, body: float) -> bool:
    """A first page with (almost) no body text, unlike the pages after it, is a cover."""
    chars: dict[int, int] = {}
    for b in blocks:
        if abs(b.size - body) <= 0.5:
            chars[b.page] = chars.get(b.page, 0) + len(b.text)
    others = sorted(n for p, n in chars.items() if p != page)
    typical = others[len(others) // 2] if others else 0
    return chars.get(page, 0) < min(300, 0.2 * typical)


def classify_headings(blocks: list[Block], body: float, body_font: str = "") -> str:
    """Mark heading blocks (``kind='heading'``, ``level`` = style rank); returns the title-page text."""
    by_page: dict[int, list[Block]] = {}
    for b in blocks:
        by_page.setdefault(b.page, []).append(b)
    toc = {page for page, items in by_page.items() if _is_contents(items)}
    cands = [b for b in blocks if is_heading_candidate(b, body, body_font)
             and not _side_by_side(b, by_page[b.page]) and (b.page not in toc or _is_page_title(b, by_page[b.page]))]
    if not cands:
        return ""
    first = min(by_page)
    title_blocks = _title_blocks(cands, blocks, first, body)
    title = " ".join(b.text for b in title_blocks)
    title_key = " ".join(title.lower().split())
    cands = [b for b in cands if b not in title_blocks and " ".join(b.text.lower().split()) != title_key]
    if not cands:
        return title
    cluster = _style_clusters([round(b.size, 1) for b in cands])

    def style(b: Block) -> tuple[int, int, int]:
        return cluster[round(b.size, 1)], 0 if b.bold else 1, 0 if b.font == body_font else 1

    ranks = {s: i + 1 for i, s in enumerate(sorted({style(b) for b in cands}))}
    for b in cands:
        b.kind, b.level = "heading", ranks[style(b)]
    _order_by_numbering(cands)
    return title


def _title_blocks(cands: list[Block], blocks: list[Block], first: int, body: float) -> list[Block]:
    """The first page's title: on a cover every candidate there; else the largest type, if unique to it."""
    on_first = [b for b in cands if b.page == first]
    if not on_first:
        return []
    if _is_cover(blocks, first, body):
        largest = max(b.size for b in on_first)
        return [b for b in on_first if b.size >= 0.8 * largest] + [b for b in on_first if b.size < 0.8 * largest]
    later = max((b.size for b in cands if b.page != first), default=0.0)
    return [b for b in on_first if b.size > 1.2 * later] if later else []


def _order_by_numbering(cands: list[Block]) -> None:
    """Within one style, a heading numbered "4.6.1" sits below the "4.6" that precedes it."""
    last: dict[int, tuple[int, int]] = {}  # style level -> (numbering depth, level given)
    for b in cands:
        if b.kind != "heading":
            continue
        depth = numbering_depth(b.text)
        prev = last.get(b.level)
        if depth and prev and prev[0] and depth > prev[0]:
            b.level = prev[1] + (depth - prev[0])
        last[b.level] = (depth, b.level)


def acronyms(blocks: list[Block]) -> set[str]:
    """Words the body text writes in capitals (WHO, HICPAC): kept as they are in headings."""
    found: set[str] = set()
    for b in blocks:
        if b.kind == "text" and not b.text.isupper():
            found.update(_ACRONYM.findall(b.text))
    return found


def display_title(text: str, keep: set[str]) -> str:
    """An ALL-CAPS heading in title case, acronyms kept; other headings unchanged."""
    text = " ".join(text.split()).rstrip(":").strip()
    letters = [c for c in text if c.isalpha()]
    if not letters or not all(c.isupper() for c in letters) or len(letters) < 4:
        return text
    words = []
    for i, word in enumerate(text.split()):
        core = word.strip("()[],;:")
        if core in keep and len(core) > 1:
            words.append(word)
        elif len(core) == 1:
            words.append(word)
        elif i > 0 and core.lower() in _SMALL_WORDS:
            words.append(word.lower())
        else:
            words.append(word[:1] + word[1:].lower())
    return " ".join(words)


@dataclass
class _Open:
    title: str
    depth: int
    page: int
    paragraphs: list[str]
    emitted: bool = False


def build_sections(blocks: list[Block]) -> list[Section]:
    """Headings open (sub-)sections; paragraphs fill them; tables become captioned sub-sections."""
    keep = acronyms(blocks)
    stack: list[tuple[int, str]] = []  # (heading level, display title)
    sections: list[Section] = []
    current = _Open("", 1, blocks[0].page if blocks else 1, [])

    def flush() -> None:
        if current.paragraphs:
            sections.append(Section(current.title, "\n\n".join(current.paragraphs), current.depth, current.page))
            current.paragraphs = []
            current.emitted = True

    for b in blocks:
        if b.kind == "heading":
            if current.title and not current.paragraphs and not current.emitted and stack and stack[-1][0] < b.level:
                current.paragraphs.append(current.title)  # a heading with only sub-headings: keep it in the tree
            flush()
            while stack and stack[-1][0] >= b.level:
                stack.pop()
            stack.append((b.level, display_title(b.text, keep)))
            current = _Open(stack[-1][1], len(stack), b.page, [])
        elif b.kind == "table":
            flush()
            caption = display_title(b.caption, keep) or "Table"
            sections.append(Section(caption, "\n\n".join(p for p in (b.caption, b.text) if p), len(stack) + 1, b.page))
            current = _Open(current.title, current.depth, b.page, [], emitted=True)
        else:
            if b.page != current.page:
                flush()
                current.page = b.page
            current.paragraphs.append(b.text)
    flush()
    return [s for s in sections if s.text.strip()]


def blocks_to_sections(blocks: list[Block], body: float, body_font: str = "") -> tuple[list[Section], str]:
    """Classify headings (unless a model tier did) and build the sections; also the title-page text."""
    title = classify_headings(blocks, body, body_font)
    return build_sections(blocks), title
