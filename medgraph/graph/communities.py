"""Records of the community layer: detected communities, their summaries and citations.

Input: entity → community assignments from Leiden (``Assignment``). Output: ``Community`` records
(level 0 is the coarsest partition; level ``n + 1`` splits a level-``n`` community, ``parent_id``
points up), written to the graph store as ``(:Community)`` nodes with ``MEMBER_OF`` edges, and
their summaries (text with ``[n]`` markers, each resolving to a ``Citation``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from medgraph.schemas import content_hash


@dataclass(frozen=True)
class Assignment:
    """One entity's community at one level (``community`` is the algorithm's own label)."""

    mesh_id: str
    level: int
    community: str
    parent: str | None = None


@dataclass(frozen=True)
class Citation:
    """A sentence of a chunk that a summary cites as ``[number]``."""

    number: int
    chunk_id: str
    doc_id: str
    sentence: str
    title: str = ""
    source_id: str = ""
    section_path: tuple[str, ...] = ()
    page: int | None = None


@dataclass
class Community:
    community_id: str
    level: int
    members: list[str]  # MeSH IDs, sorted
    parent_id: str | None = None
    title: str = ""
    summary: str = ""
    citations: list[Citation] = field(default_factory=list)
    top_entities: list[dict[str, str]] = field(default_factory=list)  # mesh_id, name, category
    summariser: str = ""  # "extractive" or the model tier's name; "" before summarising
    key: str = ""  # content key: members + evidence + summariser; unchanged key = summary reused
    stored_size: int = 0  # the size a store reported when it did not load the members

    @property
    def size(self) -> int:
        return len(self.members) or self.stored_size

    @property
    def chunk_ids(self) -> list[str]:
        """The cited chunks, in citation order, without repeats."""
        return list(dict.fromkeys(c.chunk_id for c in self.citations))

    def citations_json(self) -> str:
        return json.dumps([asdict(c) for c in self.citations], ensure_ascii=False)

    def public(self, members: bool = False) -> dict[str, Any]:
        """The JSON body of the API (``/graph/communities``)."""
        out: dict[str, Any] = {
            "community_id": self.community_id, "level": self.level, "parent_id": self.parent_id,
            "size": self.size, "title": self.title, "summary": self.summary,
            "top_entities": self.top_entities, "summariser": self.summariser,
            "citations": [asdict(c) | {"section_path": list(c.section_path)} for c in self.citations],
        }
        if members:
            out["members"] = list(self.members)
        return out


def citations_from_json(text: str | None) -> list[Citation]:
    rows = json.loads(text or "[]")
    return [Citation(**{**r, "section_path": tuple(r.get("section_path") or ())}) for r in rows]


def community_id(level: int, members: list[str]) -> str:
    """Stable ID of a community: its level and a hash of its sorted members."""
    return f"L{level}-{content_hash('community', *sorted(members))}"
