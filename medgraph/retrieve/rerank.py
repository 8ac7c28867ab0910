"""Rerank fused candidates and give each a calibrated relevance in [0, 1].

Input: the question and fused ``Candidate`` records (chunks loaded; ``features`` filled by the
retriever). Output: the same candidates, ``relevance`` set, best first.

Offline tier (``FeatureReranker``): a logistic model over features that need no extra model —
``dense`` (question–chunk cosine of the stored vectors), ``lexical`` (share of the question's
content terms found in the parent section text), ``entity`` (share of the question's MeSH
entities mentioned in the chunk), ``ppr`` (PPR score / best PPR score among the candidates) and
``rrf`` (fused score / best fused score). ``relevance = sigmoid(bias + Σ w·f)``; the weights
can be overridden in ``rerank.weights``, and for passages in another language than the question
(feature ``cross_lingual`` = 1, set by the retriever) in ``rerank.cross_lingual_weights`` (``benchmarks/fit_reranker.py`` fits them on PubMedQA). Model tier (``PassageReranker``): a cross-encoder scoring
(question, parent text) pairs, whose sigmoid output is the relevance.

Ranking and refusal are separate jobs: ``rerank.order`` (``relevance`` | ``fused``) says whether
the list is re-sorted by relevance or keeps the fused order with the relevance attached for the
refusal decision (``answer.min_relevance``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from medgraph.config.models import RerankConfig
from medgraph.retrieve.types import Candidate

if TYPE_CHECKING:
    from medgraph.retrieve.rerank_base import Reranker

FEATURES = ("dense", "lexical", "entity", "ppr", "rrf")
# Hand-set so that evidence must match the question lexically or by entity (off-corpus
# questions score near 0). benchmarks/fit_reranker.py fits a logistic model on PubMedQA
# (held-out AUC 0.949, ECE 0.007) but its rrf-dominated weights score off-corpus questions
# high (p50 0.81), so it is not the default yet; see the README benchmarks.
DEFAULT_WEIGHTS: dict[str, float] = {
    "bias": -7.0, "dense": 5.0, "lexical": 5.0, "entity": 1.5, "ppr": 0.5, "rrf": 1.0,
}


class CandidateReranker(Protocol):
    name: str

    def rerank(self, question: str, candidates: list[Candidate]) -> list[Candidate]: ...


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(x, 40.0), -40.0)))


def _order(candidates: list[Candidate], order: str) -> list[Candidate]:
    """Best first: by relevance (ties by fused score), or in the fused order (``order="fused"``)."""
    if order == "fused":
        return sorted(candidates, key=lambda c: (-c.score, c.chunk_id))
    return sorted(candidates, key=lambda c: (-c.relevance, -c.score, c.chunk_id))


class FeatureReranker:
    name = "features"

    def __init__(self, weights: Mapping[str, float] | None = None, order: str = "relevance",
                 cross_lingual_weights: Mapping[str, float] | None = None) -> None:
        unknown = (set(weights or {}) | set(cross_lingual_weights or {})) - {"bias", *FEATURES}
        if unknown:
            raise ValueError(f"unknown reranker weights {sorted(unknown)}; known: bias, {', '.join(FEATURES)}")
        if order not in ("relevance", "fused"):
            raise ValueError(f"rerank order must be 'relevance' or 'fused', not {order!r}")
        self.weights = {**DEFAULT_WEIGHTS, **(weights or {})}
        self.cross_weights = {**self.weights, **(cross_lingual_weights or {})}
        self.order = order

    def relevance(self, features: Mapping[str, float]) -> float:
        w = self.cross_weights if features.get("cross_lingual") else self.weights
        z = w["bias"] + sum(w[f] * features.get(f, 0.0) for f in FEATURES)
        return _sigmoid(z)

    def rerank(self, question: str, candidates: list[Candidate]) -> list[Candidate]:
        for cand in candidates:
            cand.relevance = self.relevance(cand.features)
        return _order(candidates, self.order)


class PassageReranker:
    """Model tier: a cross-encoder over (question, parent section text)."""

    def __init__(self, model: Reranker, order: str = "relevance") -> None:
        self.model = model
        self.name = model.name
        self.order = order

    def rerank(self, question: str, candidates: list[Candidate]) -> list[Candidate]:
        passages = [(c.chunk.parent_text or c.chunk.text) if c.chunk else "" for c in candidates]
        for cand, score in zip(candidates, self.model.score(question, passages), strict=True):
            cand.relevance = float(score)
        return _order(candidates, self.order)


def make_reranker(cfg: RerankConfig) -> CandidateReranker:
    if cfg.kind == "features":
        return FeatureReranker(cfg.weights, cfg.order, cfg.cross_lingual_weights)
    if not cfg.model_path:
        raise ValueError("rerank.kind=cross_encoder needs rerank.model_path (a local model directory)")
    from medgraph.retrieve.cross_encoder import CrossEncoderReranker

    return PassageReranker(CrossEncoderReranker(cfg.model_path, device=cfg.device, batch_size=cfg.batch_size), cfg.order)
