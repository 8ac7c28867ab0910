"""Layout analysis and the section tree on synthetic pages: each rule in isolation.

Lines are built by hand (boxes in points, origin top-left) so that every assertion names the one
rule it checks: furniture removal, hyphenation, paragraphs, captioned tables, reading order,
heading levels from size / weight / numbering, title case, and sections per (heading, page).
"""

from __future__ import annotations

from collections import Counter

from medgraph.ingest.chunking import section_paths
from medgraph.ingest.layout import (
    Block,
    Line,
    PageLines,
    document_blocks,
    join_lines,
    page_blocks,
    vocabulary,
)
from medgraph.ingest.sections import blocks_to_sections, display_title, numbering_depth

H = 800.0


def line(text: str, top: float, size: float = 10.0, x0: float = 50.0, bold: bool = False, font: str = "Serif",
         width: float | None = None) -> Line:
    return Line(text, x0, top, x0 + (width or 4.5 * len(text)), top + 1.2 * size, size, bold, font)


def body(top: float, n: int, text: str = "Body text of the WHO guideline continues here", x0: float = 50.0) -> list[Line]:
    return [line(f"{text} {i}", top + 14 * i, x0=x0) for i in range(n)]


def test_running_headers_footers_and_page_numbers_are_removed():
    pages = []
    for p in range(1, 4):
        lines = [line("WHO guideline on hand hygiene 2016", 10, size=8), *body(100, 5),
                 line(str(p), 780, size=8), line(f"Page {p} of 3", 770, size=8)]
        pages.append(PageLines(p, 600, H, lines))
    texts = [b.text for b in document_blocks(pages)]
    assert texts and all("WHO guideline on hand hygiene" not in t and "of 3" not in t for t in texts)
    assert all(t.startswith("Body text") for t in texts)


def test_a_repeated_line_in_the_body_is_kept():
    pages = [PageLines(p, 600, H, [line("Key recommendations", 300, bold=True), *body(320, 3)]) for p in (1, 2, 3)]
    assert sum("Key recommendations" in b.text for b in document_blocks(pages)) == 3


def test_hyphenation_joins_split_words_and_keeps_compounds():
    vocab = vocabulary([PageLines(1, 600, H, [line("infection and hospital based care, hospital based clinics", 10)])])
    assert join_lines(["the infec\x02", "tion rate"], vocab) == "the infection rate"
    assert join_lines(["non-hospital\x02", "based clinics"], vocab) == "non-hospital-based clinics"
    assert join_lines(["Healthcare-", "Associated Infection"], vocab) == "Healthcare-Associated Infection"
    assert join_lines(["pro-", "grammes"], Counter({"programmes": 3})) == "programmes"
    assert join_lines(["高血压是一种", "常见的慢性疾病"]) == "高血压是一种常见的慢性疾病"


def test_paragraphs_split_on_gaps_style_and_list_markers():
    lines = [*body(100, 3), *body(180, 2, "Second paragraph after a gap"),
             line("1. First recommendation of the list", 215), line("2. Second recommendation", 229),
             line("A differently set line", 243, font="Sans")]
    blocks = page_blocks(PageLines(1, 600, H, lines), 10.0, Counter())
    assert [b.n_lines for b in blocks] == [3, 2, 1, 1, 1]
    assert blocks[2].text == "1. First recommendation of the list"


def test_captioned_table_becomes_rows_of_cells():
    lines = [*body(100, 2),
             line("Table 2: Dose by age", 140, bold=True),
             line("Age group", 160, size=8, x0=50, bold=True), line("Daily dose", 160, size=8, x0=200, bold=True),
             line("Children", 172, size=8, x0=50), line("10 mg per kg body", 172, size=8, x0=200),
             line("weight, twice", 182, size=8, x0=200),
             line("Adults", 196, size=8, x0=50), line("500 mg", 196, size=8, x0=200),
             *body(230, 2, "Text after the table")]
    blocks = page_blocks(PageLines(1, 600, H, lines), 10.0, Counter())
    table = next(b for b in blocks if b.kind == "table")
    assert table.caption == "Table 2: Dose by age"
    assert table.text.split("\n\n") == ["Age group | Daily dose", "Children | 10 mg per kg body weight, twice",
                                        "Adults | 500 mg"]
    assert blocks[-1].text.startswith("Text after the table")


def test_a_title_written_last_but_placed_on_top_is_read_first():
    lines = [*body(200, 3), line("Acknowledgements", 60, size=19)]
    blocks = page_blocks(PageLines(1, 600, H, lines), 10.0, Counter())
    assert blocks[0].text == "Acknowledgements"


def _doc(blocks_per_page: dict[int, list[Line]]) -> list[Block]:
    return document_blocks([PageLines(p, 600, H, ls) for p, ls in blocks_per_page.items()])


def test_heading_levels_from_size_weight_and_numbering():
    pages = {
        1: [line("1 METHODS AND SCOPE OF WHO GUIDANCE", 60, size=18, bold=True), *body(100, 4),
            line("1.1 Evidence retrieval", 200, size=13, bold=True), *body(230, 4),
            line("Search strategy", 300, bold=True), *body(320, 4)],
        2: [line("1.2 Quality of evidence", 60, size=13, bold=True), *body(90, 4),
            line("1.2.1 Grading", 170, size=13, bold=True), *body(200, 3),
            line("2 Recommendations", 300, size=18, bold=True), *body(330, 3)],
    }
    sections, _ = blocks_to_sections(_doc(pages), 10.0, "Serif")
    paths = {" > ".join(p) for p in section_paths(sections)}
    assert "1 Methods and Scope of WHO Guidance" in paths  # ALL CAPS → title case, the acronym kept
    assert "1 Methods and Scope of WHO Guidance > 1.1 Evidence retrieval > Search strategy" in paths
    assert "1 Methods and Scope of WHO Guidance > 1.2 Quality of evidence > 1.2.1 Grading" in paths
    assert "2 Recommendations" in paths
    assert {s.page for s in sections if s.title == "1.2.1 Grading"} == {2}


def test_sentences_lists_and_long_bold_paragraphs_are_not_headings():
    pages = {1: [line("Overview", 60, size=16, bold=True), *body(90, 3),
                 line("Wash hands before and after patient contact.", 150, bold=True),
                 line("• Use alcohol-based handrub", 170, size=12),
                 *[line("A long emphasised lead paragraph that runs over many lines", 200 + 14 * i, bold=True)
                   for i in range(5)]]}
    sections, _ = blocks_to_sections(_doc(pages), 10.0, "Serif")
    assert [s.title for s in sections] == ["Overview"]


def test_a_section_continued_on_the_next_page_keeps_its_path_and_gets_the_page():
    pages = {1: [line("Hand Hygiene", 60, size=16, bold=True), *body(100, 3)], 2: body(60, 3, "Continued text")}
    sections, _ = blocks_to_sections(_doc(pages), 10.0, "Serif")
    assert [(s.title, s.page) for s in sections] == [("Hand Hygiene", 1), ("Hand Hygiene", 2)]
    assert section_paths(sections) == [["Hand Hygiene"], ["Hand Hygiene"]]


def test_a_table_is_a_sub_section_titled_by_its_caption():
    pages = {1: [line("Dosing", 40, size=16, bold=True), *body(80, 2),
                 line("Table 1: Dose by age", 120, bold=True),
                 line("Children", 140, size=8), line("10 mg", 140, size=8, x0=200),
                 *body(170, 2, "After the table")]}
    sections, _ = blocks_to_sections(_doc(pages), 10.0, "Serif")
    assert section_paths(sections) == [["Dosing"], ["Dosing", "Table 1: Dose by age"], ["Dosing"]]
    assert "Children | 10 mg" in sections[1].text


def test_a_heading_with_only_sub_headings_stays_in_the_path():
    pages = {1: [line("PART ONE", 40, size=20, bold=True), line("Background", 80, size=14, bold=True), *body(110, 3)]}
    sections, _ = blocks_to_sections(_doc(pages), 10.0, "Serif")
    assert section_paths(sections)[-1] == ["Part One", "Background"]


def test_cover_page_type_is_the_title_not_a_section():
    pages = {1: [line("Guide to Infection Prevention", 100, size=30, bold=True), line("Version 2", 700, size=9)],
             2: [line("Introduction", 60, size=18, bold=True), *body(100, 4)]}
    sections, title = blocks_to_sections(_doc(pages), 10.0, "Serif")
    assert title == "Guide to Infection Prevention"
    assert section_paths(sections)[-1] == ["Introduction"]


def test_numbering_and_title_case_helpers():
    assert [numbering_depth(t) for t in ("4 Methods", "4.6.1 Review", "Methods", "2019 was")] == [1, 3, 0, 0]
    assert display_title("KEY FACTS FOR HIV CARE:", {"HIV"}) == "Key Facts for HIV Care"
    assert display_title("APPENDIX A: CHECKLIST", set()) == "Appendix A: Checklist"
    assert display_title("Mixed Case Heading", set()) == "Mixed Case Heading"
