"""The entity co-occurrence graph, derived from the entity–chunk (MENTIONED_IN) graph.

Input: ``(mesh_id, chunk_id, mention count)`` rows of the bipartite graph (any graph store's
``entity_chunk_pairs``). Output: ``CooccurrenceGraph`` — undirected entity–entity edges weighted by
the number of chunks both entities are mentioned in (``B · Bᵀ`` of the binary incidence ``B``),
and the incidence itself (which chunks mention which entities) for choosing evidence. Nothing
is stored as a typed relation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
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
