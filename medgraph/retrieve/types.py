"""Records of the query path: query analysis, retrieval candidates, reranked evidence.

Inputs: a question. ``QueryAnalysis`` carries its language and the MeSH entities it mentions
(the PPR seeds) and its translations into the other corpus languages; each retrieval path returns ranked ``Candidate`` lists; fusion merges them by
reciprocal rank; the reranker sets ``relevance`` (calibrated, 0..1) on each candidate.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from medgraph.embed.base import GlossGroups
from medgraph.schemas import Chunk, Mention


@dataclass(frozen=True)
class QueryAnalysis:
    text: str
    language: str
    mentions: tuple[Mention, ...] = ()
    # the question in other corpus languages (ontology term substitution): ((language, text), ...)
    translations: tuple[tuple[str, str], ...] = ()
    # extra PPR seeds that are not in the question (a user's long-term interests): ((MeSH ID, weight), ...)
    seed_bias: tuple[tuple[str, float], ...] = ()
    # names of the question's linked entities per corpus language: ((MeSH ID, language, name), ...)
    entity_names: tuple[tuple[str, str, str], ...] = ()
    # the translations word by word, as searched: ((language, gloss groups), ...) (``translate``)
    glosses: tuple[tuple[str, GlossGroups], ...] = ()
    # the question's dense query vector once the retriever has embedded it (``RetrievalResult.analysis``
    # carries it): the answer step reuses it rather than embed the question again. Not compared,
    # not in ``to_dict``: the same question with or without it is the same analysis.
    query_dense: tuple[float, ...] = field(default=(), compare=False, repr=False)
    # MeSH IDs linked in the question's English translation (a German or Chinese question): what
    # its words name in English where its own words link nothing (Fournier坏疽 -> "Fournier Gangrene")
    bridged: tuple[str, ...] = ()

    def glosses_in(self, language: str) -> GlossGroups:
        """The gloss groups of the translation into ``language`` (() when there is none)."""
        return next((groups for lang, groups in self.glosses if lang == language), ())

    @property
    def seeds(self) -> dict[str, float]:
        """MeSH ID → seed weight: the best linking score among its mentions, or its ``seed_bias``."""
        out: dict[str, float] = {}
        for m in self.mentions:
            if m.mesh_id:
                out[m.mesh_id] = max(out.get(m.mesh_id, 0.0), m.score or 1.0)
        for mesh_id, weight in self.seed_bias:
            out[mesh_id] = max(out.get(mesh_id, 0.0), weight)
        return out

    def names_of(self, mesh_id: str, language: str | None = None) -> list[str]:
        """The entity's names (in ``language`` when given), then the question's own words for it."""
        names = [n for m, lang, n in self.entity_names if m == mesh_id and (language is None or lang == language)]
        surfaces = [m.surface for m in self.mentions if m.mesh_id == mesh_id]
        return list(dict.fromkeys([*names, *surfaces]))

    @property
    def linked(self) -> tuple[tuple[str, str], ...]:
        """(MeSH ID, surface) of each linked mention, in order."""
        return tuple((m.mesh_id, m.surface) for m in self.mentions if m.mesh_id)

    @property
    def entity_ids(self) -> list[str]:
        """The question's own linked MeSH IDs, in order of mention (no ``seed_bias``)."""
        return list(dict.fromkeys(m.mesh_id for m in self.mentions if m.mesh_id))

    @property
    def named_ids(self) -> list[str]:
        """Every MeSH ID the question names, in its own words or its English translation's
        (``entity_ids`` then ``bridged``): what a sub-answer of the question cannot be."""
        return list(dict.fromkeys([*self.entity_ids, *self.bridged]))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (``from_dict`` rebuilds the same analysis)."""
        return {
            "text": self.text, "language": self.language,
            "mentions": [asdict(m) for m in self.mentions],
            "translations": [list(t) for t in self.translations],
            "seed_bias": [list(s) for s in self.seed_bias],
            "entity_names": [list(n) for n in self.entity_names],
            "glosses": [[lang, [[list(alt) for alt in group] for group in groups]] for lang, groups in self.glosses],
            "bridged": list(self.bridged),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QueryAnalysis:
        return cls(
            str(data["text"]), str(data["language"]),
            tuple(Mention(**m) for m in data.get("mentions", ())),
            tuple((str(a), str(b)) for a, b in data.get("translations", ())),
            tuple((str(a), float(b)) for a, b in data.get("seed_bias", ())),
            tuple((str(a), str(b), str(c)) for a, b, c in data.get("entity_names", ())),
            tuple((str(lang), tuple(tuple((str(t), float(w)) for t, w in group) for group in groups))
                  for lang, groups in data.get("glosses", ())),
            bridged=tuple(str(m) for m in data.get("bridged", ())),
        )


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
    language: str = ""  # the chunk's language, where the path that found it knows it (vector search payloads)
