"""Evidence gaps of a question: what literature to fetch before answering.

Input: the question's ``QueryAnalysis`` (its linked MeSH entities), the reranked candidates and the
graph store. Output: ``Gap`` records, each naming the entities to search literature for.

Two triggers:
- ``unconnected``: two entities of the question have no connecting evidence in the graph: no chunk
  mentions both and no bridge entity shares a chunk with each (``GraphStore.connecting_evidence``:
  a path of at most two co-occurrence hops). An entity absent from the graph is unconnected too.
- ``weak``: a question with a single entity whose best reranked evidence (``Candidate.relevance``)
  is below the noise floor.

``search_terms`` turns a gap into search terms for the literature sources: each entity's English
MeSH name and synonyms, from the vocabulary or the graph store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Protocol

from medgraph.lang import PIVOT
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.schemas import Entity
from medgraph.stores.graph import Connection

GAP_KINDS = ("unconnected", "weak")


@dataclass(frozen=True)
class Gap:
    kind: str  # "unconnected" | "weak"
    mesh_ids: tuple[str, ...]
    names: tuple[str, ...]  # display names of the entities, in the order of mesh_ids
    reason: str

    def __post_init__(self) -> None:
        if self.kind not in GAP_KINDS:
            raise ValueError(f"unknown gap kind {self.kind!r}; expected one of {GAP_KINDS}")


def question_entities(analysis: QueryAnalysis) -> dict[str, str]:
    """MeSH ID → the first surface form that mentions it, in question order."""
    out: dict[str, str] = {}
    for m in analysis.mentions:
        if m.mesh_id and m.mesh_id not in out:
            out[m.mesh_id] = m.surface
    return out


class GapGraph(Protocol):
    """What the gap search reads of the graph (a ``GraphReader``, or the retriever's ``served_graph``)."""

    def get_entity(self, mesh_id: str) -> Entity | None: ...

    def connecting_evidence(self, a: str, b: str, limit: int = 10) -> Connection: ...


def find_gaps(
    analysis: QueryAnalysis, ranked: Sequence[Candidate], graph: GapGraph, noise_floor: float, max_pairs: int = 6
) -> list[Gap]:
    """The question's evidence gaps (see the module docstring); ``max_pairs`` bounds the graph queries."""
    if not 0.0 <= noise_floor <= 1.0:
        raise ValueError(f"noise_floor is a calibrated relevance in [0, 1], got {noise_floor}")
    entities = question_entities(analysis)
    names = {mesh_id: _display_name(graph.get_entity(mesh_id), surface) for mesh_id, surface in entities.items()}
    if len(entities) == 1:
        (mesh_id,) = entities
        best = max((c.relevance for c in ranked), default=0.0)
        if best < noise_floor:
            why = f"best evidence relevance {best:.2f} is below the noise floor {noise_floor:.2f}"
            return [Gap("weak", (mesh_id,), (names[mesh_id],), why)]
        return []
    gaps = []
    for a, b in list(combinations(entities, 2))[:max_pairs]:
        connection = graph.connecting_evidence(a, b, limit=1)
        if not connection.connected:
            why = f"no chunk mentions both {names[a]} and {names[b]}, and no entity links them within two hops"
            gaps.append(Gap("unconnected", (a, b), (names[a], names[b]), why))
    return gaps


def _display_name(entity: Entity | None, surface: str) -> str:
    return entity.name if entity is not None and entity.name else surface


def search_terms(gap: Gap, lookup: Callable[[str], Entity | None], per_entity: int = 4) -> list[str]:
    """The gap's entities' English (pivot) MeSH names and synonyms (``per_entity`` each), for the sources.

    ``lookup``: an entity by MeSH ID, from a vocabulary (``Vocabulary.get``: it knows entities the
    corpus never mentions) or a graph store (``GraphReader.get_entity``). An unknown entity
    contributes the name the gap gives it.
    """
    terms: list[str] = []
    for mesh_id, name in zip(gap.mesh_ids, gap.names, strict=True):
        entity = lookup(mesh_id)
        names = [entity.name, *entity.names.get(PIVOT, [])] if entity is not None else []
        own = list(dict.fromkeys(n for n in [*names, name] if n and n.strip()))
        terms.extend(own[:per_entity])
    return list(dict.fromkeys(terms))
