"""Reciprocal rank fusion (RRF) of ranked candidate lists, deduplicated by chunk.

Input: ``{path name: [Candidate, ...] best first}`` and per-path weights. Output: one list,
best first, where each candidate's ``score`` is ``sum_p w_p / (k + rank_p)`` and its
``path_scores`` / ``path_ranks`` / ``entity_path`` merge what every path said about it.

``language_weights`` gives the weights for one question: the base weights multiplied by the
factors configured for the question's language (``retrieval.language_weights``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from medgraph.retrieve.types import Candidate


def path_weight(weights: Mapping[str, float], path: str, default: float = 1.0) -> float:
    """A path's weight; ``translate:de`` falls back to the weight of ``translate``."""
    return weights.get(path, weights.get(path.split(":")[0], default))


def language_weights(
    weights: Mapping[str, float], factors: Mapping[Any, Mapping[str, float]], language: str
) -> dict[str, float]:
    """``weights`` with each path multiplied by ``factors[language][path]`` (1 when not given).

    Lexical paths searched with the question as written (``sparse``, ``feedback``) only match
    chunks in the question's language; over a corpus in another language they add noise, so a
    factor below 1 for that question language lets the cross-lingual paths decide.
    """
    own = factors.get(language) or {}
    out = dict(weights)
    for path, factor in own.items():
        out[path] = path_weight(weights, path) * factor
        for sub in (p for p in weights if p.startswith(f"{path}:")):  # "translate" scales "translate:de" too
            out[sub] = weights[sub] * factor
    return out


def rrf(
    lists: Mapping[str, list[Candidate]], k: int = 60, weights: Mapping[str, float] | None = None
) -> list[Candidate]:
    fused: dict[str, Candidate] = {}
    for path, ranked in lists.items():
        weight = 1.0 if weights is None else path_weight(weights, path)
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
            out.language = out.language or cand.language
    return sorted(fused.values(), key=lambda c: (-c.score, c.chunk_id))
