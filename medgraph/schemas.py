"""Typed records that flow between stages.

Inputs: raw files are turned into ``Document`` by ``medgraph.ingest``; ``Chunk`` comes out of
``medgraph.ingest.chunking``; ``Mention`` out of NER (``medgraph.extract``) and linking
(``medgraph.link``); ``Entity`` out of the vocabulary (``medgraph.ontology``).
Outputs: the records written by ``medgraph.stores``.

Records are plain dataclasses (cheap to build by the million). ``to_row`` / ``from_row`` turn
them into flat dicts of scalars and JSON strings, the shape Ray Data batches carry.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

# the coarse entity categories of the graph (MeSH trees -> category: medgraph.ontology.categories)
DISEASE = "Disease"
SYMPTOM = "Symptom"
DRUG = "Drug"
GENE = "Gene"
PROCEDURE = "Procedure"
ANATOMY = "Anatomy"
PHYSIOLOGY = "Physiology"
LIVING_BEING = "LivingBeing"
OTHER = "Other"

ALL_CATEGORIES = (DISEASE, SYMPTOM, DRUG, GENE, PROCEDURE, ANATOMY, PHYSIOLOGY, LIVING_BEING, OTHER)


def content_hash(*parts: str) -> str:
    """Stable 16-hex-digit hash of the given strings: the idempotency key of every record."""
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\x1f")
    return h.hexdigest()


@dataclass(frozen=True)
class Section:
    """One titled block of a document; ``level`` 1 is a top-level section."""

    title: str
    text: str
    level: int = 1
    page: int | None = None


@dataclass
class Document:
    doc_id: str
    title: str
    language: str
    sections: list[Section]
    source_id: str = ""
    source_path: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        body = [self.title, self.language] + [f"{s.level}|{s.title}|{s.text}" for s in self.sections]
        return content_hash(*body)

    def to_row(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "language": self.language,
            "sections_json": json.dumps([asdict(s) for s in self.sections], ensure_ascii=False),
            "source_id": self.source_id,
            "source_path": self.source_path,
            "metadata_json": json.dumps(self.metadata, ensure_ascii=False),
            "content_hash": self.content_hash,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Document:
        return cls(
            doc_id=str(row["doc_id"]),
            title=str(row["title"]),
            language=str(row["language"]),
            sections=[Section(**s) for s in json.loads(row["sections_json"])],
            source_id=str(row.get("source_id", "")),
            source_path=str(row.get("source_path", "")),
            metadata=json.loads(row.get("metadata_json") or "{}"),
        )


def indexed_text(title: str, text: str) -> str:
    """What a chunk is embedded with: its document's title on a line of its own, then its text.

    A chunk's sentences often leave the topic to the title ("The drug reduced ..."); embedding
    the title with every chunk of the document lets both retrieval paths match it (on the SciFact train
    claims the lexical path's nDCG@10 rose from 0.686 to 0.706; docs/retrieval.md). The stored
    chunk text, its NER and its citations are unchanged. A title the text already starts with
    is not repeated.
    """
    title = title.strip()
    if not title or text.lstrip().startswith(title):
        return text
    return f"{title}\n{text}"


@dataclass
class Chunk:
    """A child chunk (≤ ~300 tokens) with its parent section text kept for recall."""

    chunk_id: str
    doc_id: str
    index: int
    text: str
    section_path: list[str]
    parent_id: str
    parent_text: str
    token_count: int
    language: str
    title: str = ""
    page: int | None = None
    doc_hash: str = ""
    doc_chunk_count: int = 0
    source_id: str = ""  # of the document (e.g. "PMID:123"); filled when read back from a store

    @property
    def indexed_text(self) -> str:
        """The text the chunk is embedded with (dense and sparse): see ``indexed_text``."""
        return indexed_text(self.title, self.text)

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["section_path"] = json.dumps(self.section_path, ensure_ascii=False)
        row["page"] = -1 if self.page is None else self.page
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Chunk:
        page = int(row.get("page", -1))
        return cls(
            chunk_id=str(row["chunk_id"]),
            doc_id=str(row["doc_id"]),
            index=int(row["index"]),
            text=str(row["text"]),
            section_path=list(json.loads(row["section_path"])),
            parent_id=str(row["parent_id"]),
            parent_text=str(row["parent_text"]),
            token_count=int(row["token_count"]),
            language=str(row["language"]),
            title=str(row.get("title", "")),
            page=None if page < 0 else page,
            doc_hash=str(row.get("doc_hash", "")),
            doc_chunk_count=int(row.get("doc_chunk_count", 0)),
            source_id=str(row.get("source_id", "")),
        )


@dataclass
class Mention:
    """A surface form found in a chunk, linked to a MeSH descriptor ID (or ``None``).

    ``start``/``end`` are character offsets into the chunk text; ``method`` says how the link
    was made (``exact``, ``normalised``, ``abbreviation``, ``tfidf``, ``dense`` ...) and
    ``score`` how sure it is (1.0 for exact).
    """

    start: int
    end: int
    surface: str
    mesh_id: str | None = None
    category: str = ""
    method: str = ""
    score: float = 0.0
    chunk_id: str = ""


@dataclass
class Entity:
    """A MeSH descriptor: the node every surface form in every language resolves to."""

    mesh_id: str
    name: str
    category: str
    tree_numbers: list[str] = field(default_factory=list)
    names: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Failure:
    """A document (or file) that could not be processed, and why."""

    source: str
    stage: str
    reason: str
    doc_id: str = ""


def mentions_to_json(mentions: list[Mention]) -> str:
    return json.dumps([asdict(m) for m in mentions], ensure_ascii=False)


def mentions_from_json(text: str) -> list[Mention]:
    return [Mention(**m) for m in json.loads(text or "[]")]
