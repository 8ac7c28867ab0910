"""PubTator reader (BC5CDR, NCBI-disease and hand-written fixtures).

Input: PubTator text::

    PMID|t|title
    PMID|a|abstract            (may be empty)
    PMID<TAB>start<TAB>end<TAB>mention<TAB>type<TAB>ID[|ID...][<TAB>part|part]
    PMID<TAB>CID<TAB>chemical<TAB>disease   (relations: ignored)

Output: ``PubtatorDoc`` records whose ``text`` is ``title + " " + abstract`` (the offsets' frame;
just the title when the abstract line is empty) and whose annotations carry the gold ID list
(``|`` / ``+`` separated; ``MESH:`` prefixes stripped, ``-1`` dropped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ID_SPLIT = re.compile(r"[|+,]")


@dataclass
class Annotation:
    start: int
    end: int
    surface: str
    type: str
    ids: list[str]
    parts: list[str] = field(default_factory=list)


@dataclass
class PubtatorDoc:
    pmid: str
    title: str
    abstract: str
    annotations: list[Annotation] = field(default_factory=list)

    @property
    def text(self) -> str:
        return f"{self.title} {self.abstract}" if self.abstract else self.title


def parse_ids(raw: str) -> list[str]:
    """``"MESH:D001943|D010051"`` → ``["D001943", "D010051"]``; ``-1`` and blanks are dropped."""
    out = []
    for part in _ID_SPLIT.split(raw.strip()):
        part = part.strip()
        if part.upper().startswith("MESH:"):
            part = part[5:]
        if part and part != "-1":
            out.append(part)
    return out


_TITLE = re.compile(r"^([^\t|]+)\|t\|(.*)$")
_ABSTRACT = re.compile(r"^([^\t|]+)\|a\|(.*)$")


def _annotation(line: str) -> Annotation | None:
    cols = line.split("\t")
    if len(cols) < 6 or not (cols[1].isdigit() and cols[2].isdigit()):
        return None
    parts = cols[6].split("|") if len(cols) > 6 and cols[6] else []
    return Annotation(int(cols[1]), int(cols[2]), cols[3], cols[4], parse_ids(cols[5]), parts)


def parse_pubtator(text: str) -> list[PubtatorDoc]:
    """All documents of a PubTator file; a ``|t|`` line starts a new document."""
    docs: list[PubtatorDoc] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if m := _TITLE.match(line):
            docs.append(PubtatorDoc(pmid=m.group(1).strip(), title=m.group(2), abstract=""))
        elif (m := _ABSTRACT.match(line)) and docs:
            docs[-1].abstract = m.group(2)
        elif docs and (ann := _annotation(line)) is not None:
            docs[-1].annotations.append(ann)
    return docs
