"""Records of the query path: query analysis, retrieval candidates, reranked evidence.

Inputs: a question. ``QueryAnalysis`` carries its language and the MeSH entities it mentions
(the PPR seeds) and its translations into the other corpus languages; each retrieval path returns ranked ``Candidate`` lists; fusion merges them by
reciprocal rank; the reranker sets ``relevance`` (calibrated, 0..1) on each candidate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from medgraph.schemas import Chunk, Mention


@dataclass(frozen=True)
class QueryAnalysis:
    text: str
    language: str
    mentions: tuple[Mention, ...] = ()
    # the question in other corpus languages (ontology term substitution): ((language, text), ...)
    translations: tuple[tuple[str, str], ...] = ()

    @property
    def seeds(self) -> dict[str, float]:
        """MeSH ID → seed weight (the best linking score among its mentions)."""
        out: dict[str, float] = {}
        for m in self.mentions:
            if m.mesh_id:
                out[m.mesh_id] = max(out.get(m.mesh_id, 0.0), m.score or 1.0)
        return out


@dataclass
class Candidate:
    """A chunk proposed by one or more retrieval paths."""

    chunk_id: str
    score: float = 0.0  # fused score (RRF) or the path's own score
    path_scores: dict[str, float] = field(default_factory=dict)  # path name → its score
    path_ranks: dict[str, int] = field(default_factory=dict)  # path name → 1-based rank
    entity_path: list[str] = field(default_factory=list)  # seed entities that reached the chunk (PPR)
    chunk: Chunk | None = None
    relevance: float = 0.0  # calibrated reranker score in [0, 1]
    features: dict[str, float] = field(default_factory=dict)
