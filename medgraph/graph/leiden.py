"""Seeded hierarchical Leiden on the co-occurrence graph, and the community hierarchy it gives.

Input: weighted entity–entity edges (``CooccurrenceGraph.edges``) and ``CommunitiesConfig``.
Output: ``Assignment`` rows (entity, level, label, parent label) and, from them, ``Community``
records. Level 0 is the coarsest partition (plain Leiden, modularity); a community larger than
``max_cluster_size`` is split again at the next level, down to ``max_levels`` levels.

Backends: ``leiden_local`` runs graspologic-native in process (the embedded store); the Neo4j store
runs ``gds.leiden`` on the server with intermediate communities (``Neo4jGraphStore.leiden``)
and returns the same ``Assignment`` rows. Both are seeded, so a rerun on the same graph gives the
same partition. ``adjusted_rand_index`` compares two partitions.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from medgraph.graph.communities import Assignment, Community, community_id


@dataclass(frozen=True)
class LeidenParams:
    resolution: float = 1.0
    max_cluster_size: int = 50  # a community with more members is split at the next level
    max_levels: int = 3
    seed: int = 42
    randomness: float = 0.001
    iterations: int = 2

    def __post_init__(self) -> None:
        if self.resolution <= 0:
            raise ValueError(f"resolution must be > 0, got {self.resolution}")
        if self.max_cluster_size < 2 or self.max_levels < 1:
            raise ValueError("need max_cluster_size >= 2 and max_levels >= 1")


def leiden_local(edges: list[tuple[str, str, int]], params: LeidenParams) -> list[Assignment]:
    """Hierarchical Leiden with graspologic-native (seeded); ``[]`` for a graph without edges."""
    import graspologic_native as gn

    if not edges:
        return []
    clusters = gn.hierarchical_leiden(
        [(a, b, float(w)) for a, b, w in edges], resolution=params.resolution,
        randomness=params.randomness, iterations=params.iterations, use_modularity=True,
        max_cluster_size=params.max_cluster_size, seed=params.seed,
    )
    return [
        Assignment(c.node, c.level, str(c.cluster), None if c.parent_cluster is None else str(c.parent_cluster))
        for c in clusters if c.level < params.max_levels
    ]


def assignments_from_levels(levels_by_node: dict[str, list[int]]) -> list[Assignment]:
    """Rows from per-node labels listed coarsest first (GDS gives them finest first: reverse them)."""
    out: list[Assignment] = []
    for node, labels in levels_by_node.items():
        for level, label in enumerate(labels):
            parent = None if level == 0 else f"{level - 1}:{labels[level - 1]}"
            out.append(Assignment(node, level, f"{level}:{label}", parent))
    return out


def to_communities(assignments: list[Assignment], params: LeidenParams) -> list[Community]:
    """Group assignments into ``Community`` records with stable IDs and parent links.

    A community is split at the next level only when it has more than ``max_cluster_size``
    members; a child with the same members as its parent is dropped (the parent stands).
    """
    members: dict[tuple[int, str], set[str]] = defaultdict(set)
    parent_label: dict[tuple[int, str], str | None] = {}
    for a in assignments:
        members[(a.level, a.community)].add(a.mesh_id)
        parent_label.setdefault((a.level, a.community), a.parent)
    ids: dict[tuple[int, str], str] = {}
    out: list[Community] = []
    for level, label in sorted(members, key=lambda k: k[0]):
        mesh_ids = sorted(members[(level, label)])
        parent = parent_label[(level, label)]
        parent_key = (level - 1, parent) if parent is not None else None
        if level > 0:
            if parent_key not in ids:
                continue  # its parent was not kept (too small to split, or beyond max_levels)
            parent_members = members[parent_key]
            if len(parent_members) <= params.max_cluster_size or set(mesh_ids) == parent_members:
                continue
        ids[(level, label)] = community_id(level, mesh_ids)
        out.append(Community(ids[(level, label)], level, mesh_ids, ids.get(parent_key) if parent_key else None))
    return sorted(out, key=lambda c: (c.level, -c.size, c.community_id))


def partition(communities: list[Community], level: int = 0) -> dict[str, str]:
    """Entity → community ID at ``level`` (entities of finer levels keep their deepest community above)."""
    out: dict[str, str] = {}
    for c in sorted(communities, key=lambda c: c.level):
        if c.level <= level:
            for m in c.members:
                out[m] = c.community_id
    return out


def adjusted_rand_index(a: dict[str, str], b: dict[str, str]) -> float:
    """Adjusted Rand index of two partitions over the nodes they share (1.0: identical)."""
    nodes = sorted(set(a) & set(b))
    if len(nodes) < 2:
        return 1.0
    la = {v: i for i, v in enumerate(sorted({a[n] for n in nodes}))}
    lb = {v: i for i, v in enumerate(sorted({b[n] for n in nodes}))}
    table = np.zeros((len(la), len(lb)), dtype=np.float64)
    for n in nodes:
        table[la[a[n]], lb[b[n]]] += 1

    def pairs(x: np.ndarray) -> float:
        return float((x * (x - 1) / 2).sum())

    index, rows, cols = pairs(table), pairs(table.sum(1)), pairs(table.sum(0))
    expected = rows * cols / pairs(np.array([len(nodes)], dtype=np.float64))
    maximum = (rows + cols) / 2
    return 1.0 if maximum == expected else (index - expected) / (maximum - expected)
