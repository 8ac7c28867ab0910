"""Fit the offline reranker (``FeatureReranker``) on PubMedQA and measure its calibration.

    python benchmarks/fit_reranker.py [--input ../shared/data/pubmedqa/ori_pqal.json]
        [--config configs/local.yaml] [--set a.b=c ...] [--train 500]

Input: PubMedQA ``ori_pqal.json`` (converted with ``medgraph.eval.convert``; the index is the
retrieval benchmark's cached one, built on first use). Questions ``[0, train)`` are the training
set, the rest are held out.
Output (JSON on stdout):
- ``weights``: logistic-regression weights over the retriever's features (``dense``, ``lexical``,
  ``entity``, ``ppr``, ``rrf``) and ``bias``, fitted (scikit-learn, no class weighting, so the
  output is a calibrated probability) on every fused candidate of the training questions, label
  = the candidate is a chunk of the question's own abstract;
- ``heldout``: log-loss, ROC AUC and expected calibration error (10 equal-width bins) of those
  probabilities on the held-out candidates, and document recall@1 of the fused vs reranked order;
- ``noise_floor``: relevance (p50/p90/p99) of the top candidate for off-corpus general-knowledge
  questions vs the relevance of the correct abstract (its best chunk; 0 when not retrieved) and of
  the top candidate for the held-out PubMedQA questions, and the ``answer.min_relevance``
  recommendation (refuse >= 90 % off-corpus, answer >= 90 % PubMedQA) or the trade-off.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.config import MedGraphConfig, load_config  # noqa: E402
from medgraph.eval.convert import convert_pubmedqa  # noqa: E402
from medgraph.eval.retrieval import EvalIndex, open_index, query_parts, read_queries  # noqa: E402
from medgraph.retrieve.rerank import FEATURES, FeatureReranker  # noqa: E402
from medgraph.retrieve.types import Candidate  # noqa: E402

log = logging.getLogger("fit_reranker")

OFF_CORPUS = [
    "What is the capital of Australia?",
    "Who won the FIFA World Cup in 2014?",
    "How do I reverse a list in Python?",
    "What is the tallest mountain in Europe?",
    "Who wrote the novel Pride and Prejudice?",
    "How many players are on a basketball team on the court?",
    "What is the difference between TCP and UDP?",
    "Which planet has the most moons?",
    "What year did the Berlin Wall fall?",
    "How do you make a sourdough starter?",
    "What is the offside rule in football?",
    "Who painted the ceiling of the Sistine Chapel?",
    "How does a JavaScript promise work?",
    "What is the currency of Japan?",
    "Which river flows through Budapest?",
    "How long is a marathon in kilometres?",
    "What is the best way to learn to play the guitar?",
    "Who invented the telephone?",
    "What does the SQL JOIN statement do?",
    "How many strings does a violin have?",
    "What is the capital city of Canada?",
    "Who holds the record for the most Olympic gold medals?",
    "How do I set up a git repository?",
    "What causes the seasons on Earth?",
    "Which country hosts the Tour de France?",
    "What is the speed of light in a vacuum?",
    "How do you change a flat tyre on a car?",
    "What programming language is the Linux kernel written in?",
    "When did the first man land on the Moon?",
    "What is the population of Tokyo?",
]
BINS = 10


@dataclass
class QueryCands:
    """One question's fused candidates: features, labels (own abstract) and fused scores."""

    features: np.ndarray  # (n, len(FEATURES))
    labels: np.ndarray  # (n,) 1 = chunk of the question's own abstract
    fused: np.ndarray  # (n,) RRF score
    docs: list[str]


def collect(index: EvalIndex, cfg: MedGraphConfig, questions: list[tuple[str, str]]) -> list[QueryCands]:
    """(question text, own doc_id or "") → fused candidates with their features."""
    parts = query_parts(index, cfg)
    analyzer, retriever = parts.analyzer, parts.retriever
    out = []
    for i, (text, own) in enumerate(questions, 1):
        cands: list[Candidate] = retriever.retrieve(analyzer.analyze(text, "en")).candidates
        docs = [index.chunk_doc.get(c.chunk_id, "") for c in cands]
        out.append(QueryCands(
            np.array([[c.features.get(f, 0.0) for f in FEATURES] for c in cands]).reshape(-1, len(FEATURES)),
            np.array([d == own for d in docs], dtype=int), np.array([c.score for c in cands]), docs))
        if i % 100 == 0:
            log.info("collected %d/%d questions", i, len(questions))
    return out


def fit(train: list[QueryCands]) -> dict[str, float]:
    from sklearn.linear_model import LogisticRegression

    x = np.vstack([q.features for q in train])
    y = np.concatenate([q.labels for q in train])
    model = LogisticRegression(class_weight=None, max_iter=2000).fit(x, y)
    weights = {"bias": round(float(model.intercept_[0]), 3)}
    weights.update({f: round(float(w), 3) for f, w in zip(FEATURES, model.coef_[0], strict=True)})
    return weights


def relevance(weights: dict[str, float], q: QueryCands) -> np.ndarray:
    reranker = FeatureReranker(weights)
    return np.array([reranker.relevance(dict(zip(FEATURES, row, strict=True))) for row in q.features])


def expected_calibration_error(p: np.ndarray, y: np.ndarray, bins: int = BINS) -> float:
    """Σ_bins (n_bin / n) · |mean predicted − observed rate|, equal-width bins over [0, 1]."""
    which = np.minimum((p * bins).astype(int), bins - 1)
    ece = 0.0
    for b in range(bins):
        mask = which == b
        if mask.any():
            ece += mask.mean() * abs(p[mask].mean() - y[mask].mean())
    return float(ece)


def top_doc(q: QueryCands, scores: np.ndarray) -> str:
    if not len(q.docs):
        return ""
    order = np.lexsort((-q.fused, -scores))  # by score, then fused score
    return q.docs[int(order[0])]


def heldout_report(weights: dict[str, float], held: list[QueryCands]) -> dict[str, Any]:
    from sklearn.metrics import log_loss, roc_auc_score

    probs = [relevance(weights, q) for q in held]
    p, y = np.concatenate(probs), np.concatenate([q.labels for q in held])
    own = [q.docs[int(np.argmax(q.labels))] if q.labels.any() else None for q in held]
    fused_r1 = np.mean([o is not None and top_doc(q, q.fused) == o for q, o in zip(held, own, strict=True)])
    rerank_r1 = np.mean([o is not None and top_doc(q, pr) == o for q, pr, o in zip(held, probs, own, strict=True)])
    return {
        "n_questions": len(held), "n_candidates": int(len(y)), "positive_rate": round(float(y.mean()), 4),
        "log_loss": round(float(log_loss(y, p, labels=[0, 1])), 4), "auc": round(float(roc_auc_score(y, p)), 4),
        "ece_10_bins": round(expected_calibration_error(p, y), 4),
        "fused_recall@1": round(float(fused_r1), 4), "reranked_recall@1": round(float(rerank_r1), 4),
    }


def percentiles(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values, dtype=float)
    return {f"p{q}": round(float(np.percentile(arr, q)), 4) for q in (10, 50, 90, 99)}


def recommend(off: list[float], correct: list[float], top: list[float]) -> dict[str, Any]:
    """The threshold range that refuses >= 90 % off-corpus and keeps >= 90 % correct abstracts."""
    off_a, cor_a, top_a = (np.asarray(v, dtype=float) for v in (off, correct, top))
    grid = np.round(np.arange(0.01, 1.0, 0.01), 2)
    table = [{"min_relevance": float(t), "refuse_off_corpus": round(float((off_a < t).mean()), 3),
              "answer_correct_abstract": round(float((cor_a >= t).mean()), 3),
              "answer_any_evidence": round(float((top_a >= t).mean()), 3)} for t in grid]
    ok = [r for r in table if r["refuse_off_corpus"] >= 0.9 and r["answer_correct_abstract"] >= 0.9]
    coarse = [r for r in table if round(r["min_relevance"] * 100) % 10 == 0]
    if ok:
        mid = ok[len(ok) // 2]
        return {"feasible": True, "range": [ok[0]["min_relevance"], ok[-1]["min_relevance"]],
                "recommended": mid, "trade_off": coarse}
    best = max(table, key=lambda r: min(r["refuse_off_corpus"], r["answer_correct_abstract"]))
    return {"feasible": False, "recommended": best, "trade_off": coarse}


def noise_floor(index: EvalIndex, cfg: MedGraphConfig, weights: dict[str, float],
                held: list[QueryCands]) -> dict[str, Any]:
    off = collect(index, cfg, [(q, "") for q in OFF_CORPUS])
    off_top = [float(relevance(weights, q).max()) if len(q.docs) else 0.0 for q in off]
    correct, top = [], []
    for q in held:
        rel = relevance(weights, q)
        correct.append(float(rel[q.labels == 1].max()) if q.labels.any() else 0.0)
        top.append(float(rel.max()) if len(rel) else 0.0)
    return {
        "off_corpus_top": percentiles(off_top), "pubmedqa_correct_abstract": percentiles(correct),
        "pubmedqa_top": percentiles(top), "n_off_corpus": len(off_top),
        "answer_min_relevance": recommend(off_top, correct, top),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--input", default=str(REPO.parent / "shared" / "data" / "pubmedqa" / "ori_pqal.json"))
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--train", type=int, default=500)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("MEDGRAPH_HOME", str(REPO / ".medgraph"))
    cfg = load_config(args.config, args.overrides)
    work = Path(os.environ["MEDGRAPH_HOME"]) / "eval-cache"
    corpus, queries_path = work / "pubmedqa.corpus.jsonl", work / "pubmedqa.queries.jsonl"
    convert_pubmedqa(Path(args.input), corpus, queries_path)
    queries = read_queries(queries_path)
    index = open_index(corpus, cfg)
    try:
        cands = collect(index, cfg, [(q.text, next(iter(q.relevant))) for q in queries])
        train, held = cands[: args.train], cands[args.train:]
        weights = fit(train)
        result = {
            "embedding": index.manifest["embedding"], "train_questions": len(train),
            "train_candidates": int(sum(len(q.docs) for q in train)), "weights": weights,
            "heldout": heldout_report(weights, held), "noise_floor": noise_floor(index, cfg, weights, held),
        }
    finally:
        index.close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
