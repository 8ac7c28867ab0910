"""Reciprocal rank fusion (RRF) of ranked candidate lists, deduplicated by chunk.

Input: ``{path name: [Candidate, ...] best first}`` and per-path weights. Output: one list,
best first, where each candidate's ``score`` is ``sum_p w_p / (k + rank_p)`` and its
``path_scores`` / ``path_ranks`` / ``entity_path`` merge what every path said about it.
"""

from __future__ import annotations

from collections.abc import Mapping

from medgraph.retrieve.types import Candidate


def rrf(
    lists: Mapping[str, list[Candidate]], k: int = 60, weights: Mapping[str, float] | None = None
) -> list[Candidate]:
    fused: dict[str, Candidate] = {}
    for path, ranked in lists.items():
        # "translate:de" falls back to the weight of "translate"
        weight = 1.0 if weights is None else weights.get(path, weights.get(path.split(":")[0], 1.0))
        seen: set[str] = set()
        for cand in ranked:
            if cand.chunk_id in seen:  # a path that lists a chunk twice counts it once, at its best rank
                continue
            seen.add(cand.chunk_id)
            rank = len(seen)
            out = fused.setdefault(cand.chunk_id, Candidate(cand.chunk_id))
            out.score += weight / (k + rank)
            out.path_ranks[path] = rank
            out.path_scores[path] = cand.score
            out.entity_path = out.entity_path or list(cand.entity_path)
            out.chunk = out.chunk or cand.chunk
    return sorted(fused.values(), key=lambda c: (-c.score, c.chunk_id))
