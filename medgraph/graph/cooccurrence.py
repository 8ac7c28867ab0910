"""The entity co-occurrence graph, derived from the entity–chunk (MENTIONED_IN) graph.

Input: ``(mesh_id, chunk_id, mention count)`` rows of the bipartite graph (any graph store's
``entity_chunk_pairs``). Output: ``CooccurrenceGraph`` — undirected entity–entity edges weighted by
the number of chunks both entities are mentioned in (``B · Bᵀ`` of the binary incidence ``B``),
and the incidence itself (which chunks mention which entities) for choosing evidence. Nothing
is stored as a typed relation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass
class CooccurrenceGraph:
    entities: list[str]  # row order of ``incidence``
    chunks: list[str]  # column order of ``incidence``
    incidence: sp.csr_matrix  # entity × chunk, mention counts
    edges: list[tuple[str, str, int]]  # (a, b, shared chunks), a < b, weight >= min_weight

    @property
    def nodes(self) -> list[str]:
        """Entities with at least one edge (those Leiden sees)."""
        return sorted({a for a, _, _ in self.edges} | {b for _, b, _ in self.edges})

    def signature(self) -> str:
        """Hash of the edge list: equal signatures mean the same graph."""
        h = hashlib.blake2b(digest_size=8)
        for a, b, w in self.edges:
            h.update(f"{a}\x1f{b}\x1f{w}\x1e".encode())
        return h.hexdigest()

    def chunks_of(self, mesh_ids: Iterable[str]) -> dict[str, dict[str, int]]:
        """chunk_id → {member mesh_id: mention count} for the chunks mentioning any of ``mesh_ids``."""
        index = {e: i for i, e in enumerate(self.entities)}
        out: dict[str, dict[str, int]] = {}
        for mesh_id in mesh_ids:
            row = index.get(mesh_id)
            if row is None:
                continue
            start, stop = self.incidence.indptr[row], self.incidence.indptr[row + 1]
            for col, count in zip(self.incidence.indices[start:stop], self.incidence.data[start:stop], strict=True):
                out.setdefault(self.chunks[col], {})[mesh_id] = int(count)
        return out


def build_cooccurrence(pairs: Iterable[tuple[str, str, int]], min_weight: int = 1) -> CooccurrenceGraph:
    """Co-occurrence edges with at least ``min_weight`` shared chunks; see the module docstring."""
    if min_weight < 1:
        raise ValueError(f"min_weight must be >= 1, got {min_weight}")
    rows = list(pairs)
    entities = sorted({r[0] for r in rows})
    chunks = sorted({r[1] for r in rows})
    e_index = {e: i for i, e in enumerate(entities)}
    c_index = {c: i for i, c in enumerate(chunks)}
    incidence = sp.csr_matrix(
        (np.array([r[2] for r in rows], dtype=np.float32),
         (np.array([e_index[r[0]] for r in rows], dtype=np.int64),
          np.array([c_index[r[1]] for r in rows], dtype=np.int64))),
        shape=(len(entities), len(chunks)),
    )
    incidence.sum_duplicates()
    binary = (incidence > 0).astype(np.float32)
    shared = sp.triu(binary @ binary.T, k=1).tocoo()
    keep = shared.data >= min_weight
    edges = sorted(
        (entities[i], entities[j], int(round(w)))
        for i, j, w in zip(shared.row[keep], shared.col[keep], shared.data[keep], strict=True)
    )
    return CooccurrenceGraph(entities, chunks, incidence.tocsr(), edges)


def modularity(edges: list[tuple[str, str, int]], partition: dict[str, str], resolution: float = 1.0) -> float:
    """Newman modularity of ``partition`` (node → label) on the weighted undirected ``edges``."""
    total = float(sum(w for _, _, w in edges))
    if total == 0:
        return 0.0
    inside: dict[str, float] = {}
    degree: dict[str, float] = {}
    for a, b, w in edges:
        ca, cb = partition[a], partition[b]
        degree[ca] = degree.get(ca, 0.0) + w
        degree[cb] = degree.get(cb, 0.0) + w
        if ca == cb:
            inside[ca] = inside.get(ca, 0.0) + w
    return sum(inside.get(c, 0.0) / total - resolution * (d / (2 * total)) ** 2 for c, d in degree.items())


Neighbours = dict[str, list[tuple[str, int]]]


def expand(mesh_id: str, hops: int, limit: int,
           neighbours_of: Callable[[list[str]], Neighbours]) -> list[tuple[str, str, int]]:
    """The hop-by-hop walk behind every store's ``neighbourhood``: hop 1 links ``mesh_id`` to its
    neighbours, each further hop the first ``limit`` entities reached for the first time to theirs.
    ``neighbours_of(frontier)`` answers one hop for the whole frontier (one Cypher read on Neo4j):
    ``{source: [(target, shared chunks), ...]}``, strongest first, at most ``limit`` per source."""
    edges: list[tuple[str, str, int]] = []
    frontier, seen = [mesh_id], {mesh_id}
    for _ in range(max(1, hops)):
        by_source = neighbours_of(frontier) if frontier else {}
        nxt: list[str] = []
        for source in frontier:
            for target, shared in by_source.get(source, []):
                edges.append((source, target, shared))
                if target not in seen:
                    seen.add(target)
                    nxt.append(target)
        frontier = nxt[:limit]
    return edges


class Connections:
    """Pairwise co-occurrence questions answered from the incidence in memory, for serving.

    Input: the entity × chunk incidence (any weights; only non-zero matters) with its entity and
    chunk ID lists, both sorted (so that index order is ID order). Output, per call:
    ``shared_chunks(a)`` (for every entity, the chunks it shares with ``a``), ``neighbours`` (the
    entities sharing most chunks with one), ``both`` (chunks mentioning two entities) and
    ``bridges`` (entities sharing a chunk with each of two). Each call touches only the rows of
    the entities asked about and the columns of their chunks (sparse row products), never the
    whole matrix, so its cost follows the entities' degree rather than the corpus size.
    """

    def __init__(self, incidence: sp.spmatrix, entities: list[str], chunks: list[str]) -> None:
        if incidence.shape != (len(entities), len(chunks)):
            raise ValueError(f"incidence shape {incidence.shape} does not match the ID lists")
        binary = sp.csr_matrix(incidence, dtype=np.float32)
        binary.sum_duplicates()
        binary.eliminate_zeros()
        binary.data[:] = 1.0
        binary.sort_indices()
        self.entities, self.chunks = entities, chunks
        self._index = {e: i for i, e in enumerate(entities)}
        self._rows = binary  # entity → chunks
        self._cols = binary.T.tocsr()  # chunk → entities

    def _row(self, mesh_id: str) -> int | None:
        return self._index.get(mesh_id)

    def _chunks_of(self, row: int) -> np.ndarray:
        indices: np.ndarray = self._rows.indices[self._rows.indptr[row]:self._rows.indptr[row + 1]]
        return indices

    def chunk_counts(self) -> dict[str, int]:
        """How many chunks mention each entity."""
        return {e: int(n) for e, n in zip(self.entities, np.diff(self._rows.indptr), strict=True)}

    def shared_chunks(self, mesh_id: str) -> sp.csr_matrix | None:
        """1 × entities: how many chunks each entity shares with ``mesh_id`` (itself included);
        None for an entity the graph does not hold."""
        row = self._row(mesh_id)
        if row is None:
            return None
        return self._rows[row] @ self._cols

    def neighbours(self, mesh_id: str, limit: int) -> list[tuple[str, int]]:
        """The ``limit`` entities sharing most chunks with ``mesh_id``: (ID, shared chunks), most
        first, ties by ID."""
        shared = self.shared_chunks(mesh_id)
        if shared is None:
            return []
        own = self._index[mesh_id]
        keep = shared.indices != own
        idx, counts = shared.indices[keep], shared.data[keep]
        order = np.lexsort((idx, -counts))[:limit]  # by count descending, then by ID (index order)
        return [(self.entities[idx[i]], int(counts[i])) for i in order]

    def neighbourhood(self, mesh_id: str, hops: int = 1, limit: int = 25) -> list[tuple[str, str, int]]:
        """Co-occurrence edges around an entity, ``(source, target, shared chunks)``: hop 1 links it to
        its ``limit`` strongest neighbours, each further hop adds theirs (``GraphReader.neighbourhood``)."""
        return expand(mesh_id, hops, limit, lambda frontier: {s: self.neighbours(s, limit) for s in frontier})

    def both(self, a: str, b: str, limit: int) -> list[str]:
        """The first ``limit`` chunk IDs (by ID) that mention both entities."""
        ra, rb = self._row(a), self._row(b)
        if ra is None or rb is None:
            return []
        common = np.intersect1d(self._chunks_of(ra), self._chunks_of(rb), assume_unique=True)
        return [self.chunks[i] for i in common[:limit]]

    def bridges(self, a: str, b: str, limit: int) -> list[str]:
        """The first ``limit`` entity IDs (by ID), other than ``a`` and ``b``, that share a chunk
        with each."""
        sa, sb = self.shared_chunks(a), self.shared_chunks(b)
        if sa is None or sb is None:
            return []
        common = np.intersect1d(sa.indices, sb.indices, assume_unique=True)
        common = common[(common != self._index[a]) & (common != self._index[b])]
        return [self.entities[i] for i in common[:limit]]
