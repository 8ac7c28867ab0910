"""Ranking metrics of the retrieval evaluation: recall@k, all@5, MRR and nDCG@10 over document rankings.

Input: a ranked list of document IDs (``doc_ranking`` turns a chunk ranking into one, each
document at its best chunk), the relevant documents and their grades. Output: one dict of metrics
per query (``score_ranking``), and their means with the median latency (``summarise``);
``rank_weighted_precision`` (RAGAS's context precision) over the contexts of an answer.

recall@k is the share of a question's relevant documents in the top k (HippoRAG's definition for
questions with several gold passages); ``all@5`` is 1 when every one of them is in the top 5 (the
share of multi-hop questions fully supported; for one relevant document it equals recall@5).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

KS = (1, 2, 5, 10)
CONTEXT_K = 8  # the contexts an answer is scored on: the top of its evidence (retrieval.top_k)


def doc_ranking(chunk_ids: Iterable[str], chunk_doc: dict[str, str]) -> list[str]:
    """Documents in the order of their best chunk; unknown chunks are skipped."""
    seen: dict[str, None] = {}
    for cid in chunk_ids:
        doc = chunk_doc.get(cid)
        if doc is not None:
            seen.setdefault(doc)
    return list(seen)


def recall_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: set[str]) -> float:
    return next((1.0 / i for i, d in enumerate(ranked, 1) if d in relevant), 0.0)


def ndcg_at(ranked: Sequence[str], grades: dict[str, float], k: int) -> float:
    """nDCG@k with linear gains (``grade / log2(rank + 1)``), ideal = best grades first."""
    dcg = sum(grades.get(d, 0.0) / math.log2(i + 1) for i, d in enumerate(ranked[:k], 1))
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    return dcg / idcg if idcg else 0.0


def score_ranking(ranked: Sequence[str], relevant: set[str], grades: dict[str, float]) -> dict[str, float]:
    out = {f"recall@{k}": recall_at(ranked, relevant, k) for k in KS}
    out["all@5"] = float(bool(relevant) and relevant <= set(ranked[:5]))
    out["mrr"] = reciprocal_rank(ranked, relevant)
    out["ndcg@10"] = ndcg_at(ranked, grades, 10)
    return out


def summarise(scores: list[dict[str, float]], latencies_ms: list[float]) -> dict[str, float]:
    """Mean of each metric over queries, and the median latency."""
    keys = scores[0].keys() if scores else ()
    out = {k: round(float(np.mean([s[k] for s in scores])), 4) for k in keys}
    out["latency_p50_ms"] = round(float(np.median(latencies_ms)), 2) if latencies_ms else 0.0
    return out


def overlap_at(found: Sequence[str], exact: dict[str, float], k: int) -> float:
    """Share of the exact top-``k`` that ``found[:k]`` holds, ties included: a found item scoring at
    least the exact ``k``-th score counts (so equal-scored items may stand in for each other)."""
    best = sorted(exact, key=lambda c: (-exact[c], c))[:k]
    kth = exact[best[-1]] if best else 0.0
    return sum(1 for c in found[:k] if exact.get(c, 0.0) >= kth * (1 - 1e-6)) / max(1, len(best))


def rank_weighted_precision(relevant: Sequence[bool]) -> float:
    """RAGAS's context precision over a ranked list of relevance flags: the mean of precision@k over
    the ranks k that hold a relevant item; 0 when none does."""
    hits = [sum(relevant[: k + 1]) / (k + 1) for k, flag in enumerate(relevant) if flag]
    return sum(hits) / len(hits) if hits else 0.0
