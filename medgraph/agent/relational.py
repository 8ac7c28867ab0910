"""The agent's relational channel: co-occurrence paths between the question's entities.

Input: the question's MeSH IDs and a graph store. Output: ``Candidate`` chunks (loaded) that
connect them — for each pair (a, b), the chunks that mention both (path a–b), or, when there are
none, the chunks of the strongest bridge entity c (paths a–c and c–b, c sharing chunks with
each). Each candidate's ``entity_path`` is the path it stands on; its score ranks direct evidence
before bridged evidence and stronger bridges first. The graph is relation-free: a path says that
the literature mentions the entities together, not how they are related.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from medgraph.retrieve.types import Candidate


def _weights(graph: Any, mesh_id: str, limit: int) -> dict[str, int]:
    return {t: w for s, t, w in graph.neighbourhood(mesh_id, hops=1, limit=limit) if s == mesh_id}


def best_bridges(graph: Any, a: str, b: str, bridges: list[str], k: int = 2, scan: int = 200) -> list[str]:
    """The ``k`` bridges with the most shared chunks on their weaker side (min of a–c, c–b)."""
    wa, wb = _weights(graph, a, scan), _weights(graph, b, scan)
    ranked = sorted(bridges, key=lambda c: (-min(wa.get(c, 0), wb.get(c, 0)), c))
    return ranked[:k]


def relational_evidence(graph: Any, mesh_ids: list[str], max_pairs: int = 6, limit: int = 10) -> list[Candidate]:
    """Chunks on co-occurrence paths between the entities, best first, at most ``limit``."""
    found: dict[str, Candidate] = {}

    def add(chunk_ids: list[str], path: list[str], score: float) -> None:
        for cid in chunk_ids:
            cand = found.get(cid)
            if cand is None or cand.score < score:
                found[cid] = Candidate(cid, score=score, path_scores={"relational": score}, entity_path=path)

    for a, b in list(combinations(dict.fromkeys(mesh_ids), 2))[:max_pairs]:
        conn = graph.connecting_evidence(a, b, limit)
        if conn.chunk_ids:
            add(conn.chunk_ids, [a, b], 1.0)
            continue
        for rank, c in enumerate(best_bridges(graph, a, b, conn.bridges), start=1):
            score = 0.5 / rank
            add(graph.connecting_evidence(a, c, limit).chunk_ids[:2], [a, c, b], score)
            add(graph.connecting_evidence(c, b, limit).chunk_ids[:2], [a, c, b], score)
    ranked = sorted(found.values(), key=lambda c: (-c.score, c.chunk_id))[:limit]
    chunks = {c.chunk_id: c for c in graph.get_chunks([c.chunk_id for c in ranked])}
    out = []
    for cand in ranked:
        cand.chunk = chunks.get(cand.chunk_id)
        if cand.chunk is not None:
            out.append(cand)
    return out
