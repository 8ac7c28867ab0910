"""Fitting the offline reranker's relevance and the refusal threshold on saved dev answer runs.

    python -m medgraph.eval calibrate --runs A.runs.json B.runs.json ... [--split dev]
        [--config configs/local.yaml] [--heldout T.runs.json ...] [--json]

Input: the ``--runs-out`` files of ``python -m medgraph.eval answers`` over the dev splits of
several question sets (each file one set; every question's top evidence passages with their
retrieval features, whether each is a gold passage, and whether the question is answerable).
Output (JSON): logistic weights for the feature reranker (``rerank.weights`` for passages in the
question's language, ``rerank.cross_lingual_weights`` for the others) and ``answer.min_relevance``,
with what the current config and the fitted one decide on every set and language (replayed on the
saved features; a question the run refused for another reason — the aspect check, no sentence
worth quoting — counts as refused whatever the floor), and a leave-one-set-out check (fitted and
thresholded without a set, replayed on it). ``--search`` adds a coordinate ascent on the replayed
decision itself, from the current weights (on all sets, and left one set out).

Why: the relevance is the refusal decision. With hand-set weights the two scorers (same-language,
cross-lingual) put different meanings on one threshold; fitted as the probability that a passage
is a gold passage, on questions that include unanswerable ones, both mean the same thing. Measured
on four dev sets (docs/benchmarks.md), neither the fit nor the search beat the hand-set weights on a
set left out of the choice, so the shipped config keeps them; the command stays to re-check that
when the reranker gains a feature.

The fit: one L2-regularised logistic regression per pair type over the features of
``medgraph.retrieve.rerank.FEATURES``, label = gold passage; every passage of an unanswerable
question is a negative. Each set weighs the same (a set's passages share weight 1), so a large
synthetic set does not outvote the hand-written ones. The threshold: the grid value that maximises
the mean of two rates, each averaged over the (set, language) groups that have such questions —
answerable questions with a gold passage at or above it, unanswerable questions with every passage
below it. The replay is exact for the refusal floor (the check ``replay_error`` recomputes the
saved relevance with the config's weights); the answer itself (which sentences are quoted) also
depends on the relevance, so re-run ``answers`` with the fitted settings before trusting a figure.
Only dev runs are fitted on; ``--heldout`` files are replayed, never fitted on.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medgraph.retrieve.rerank import FEATURES, FeatureReranker

GRID = tuple(round(t, 2) for t in np.arange(0.02, 0.91, 0.01))
PAIR_TYPES = ("same", "cross")


@dataclass(frozen=True)
class Question:
    """One question of a saved run: its set, language, answerability and top evidence passages."""

    set_name: str
    query_id: str
    language: str
    answerable: bool
    features: np.ndarray  # (n, len(FEATURES))
    cross: np.ndarray  # (n,) bool: passage in another language than the question
    gold: np.ndarray  # (n,) bool
    relevance: np.ndarray  # (n,) the saved relevance (the config the run had)
    # the run refused it for another reason than the relevance floor (the aspect check, no
    # sentence worth quoting): a new floor does not change that answer
    refused_otherwise: bool = False


def read_runs(path: Path, split: str = "dev", floor: float = 0.2, set_name: str | None = None) -> list[Question]:
    """The questions of ``split`` in one ``answers --runs-out`` file made with ``answer.min_relevance``
    = ``floor``."""
    runs = json.loads(path.read_text(encoding="utf-8"))
    if split not in runs:
        raise ValueError(f"{path}: no {split!r} split (it has {sorted(runs)})")
    name = set_name or path.name.split(".")[0]
    out = []
    for rec in runs[split]:
        ev = rec.get("evidence", [])
        out.append(Question(
            name, rec["query_id"], rec["language"], bool(rec["answerable"]),
            np.array([[float(e["features"].get(f, 0.0)) for f in FEATURES] for e in ev]).reshape(-1, len(FEATURES)),
            np.array([bool(e["features"].get("cross_lingual", 0.0)) for e in ev], dtype=bool),
            np.array([bool(e["gold"]) for e in ev], dtype=bool),
            np.array([float(e["relevance"]) for e in ev]),
            bool(rec.get("refused")) and (rec.get("model_used") == "aspect" or float(rec.get("top_relevance", 0.0)) >= floor)))
    return out


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -40.0, 40.0))), dtype=float)


@dataclass(frozen=True)
class Scorer:
    """Logistic weights per pair type (the ``FeatureReranker``'s two weight sets)."""

    same: Mapping[str, float]
    cross: Mapping[str, float]

    @classmethod
    def from_config(cls, weights: Mapping[str, float], cross_lingual_weights: Mapping[str, float]) -> Scorer:
        reranker = FeatureReranker(weights, cross_lingual_weights=cross_lingual_weights)
        return cls(dict(reranker.weights), dict(reranker.cross_weights))

    def relevance(self, q: Question) -> np.ndarray:
        out = np.zeros(len(q.gold))
        for flag, w in ((False, self.same), (True, self.cross)):
            mask = q.cross == flag
            if mask.any():
                coef = np.array([w.get(f, 0.0) for f in FEATURES])
                out[mask] = _sigmoid(w.get("bias", 0.0) + q.features[mask] @ coef)
        return out


def fit(questions: Sequence[Question], c: float = 1.0) -> Scorer:
    """One logistic regression per pair type; each set's passages share weight 1."""
    from sklearn.linear_model import LogisticRegression

    sets = sorted({q.set_name for q in questions})
    weights: dict[str, dict[str, float]] = {}
    for pair in PAIR_TYPES:
        xs, ys, ws = [], [], []
        for name in sets:
            wanted = pair == "cross"
            rows = [(q.features[q.cross == wanted], q.gold[q.cross == wanted]) for q in questions if q.set_name == name]
            x = np.vstack([r[0] for r in rows]) if rows else np.zeros((0, len(FEATURES)))
            if not len(x):
                continue
            xs.append(x)
            ys.append(np.concatenate([r[1] for r in rows]))
            ws.append(np.full(len(x), 1.0 / len(x)))
        if not xs or len(set(np.concatenate(ys).tolist())) < 2:
            raise ValueError(f"no {pair}-language passages of both kinds (gold and not) to fit on")
        x, y, w = np.vstack(xs), np.concatenate(ys), np.concatenate(ws)
        model = LogisticRegression(C=c, max_iter=5000).fit(x, y, sample_weight=w * len(x) / len(xs))
        weights[pair] = {"bias": round(float(model.intercept_[0]), 3),
                         **{f: round(float(v), 3) for f, v in zip(FEATURES, model.coef_[0], strict=True)}}
    return Scorer(weights["same"], weights["cross"])


def decisions(scorer: Scorer, questions: Sequence[Question], threshold: float) -> dict[str, list[bool]]:
    """Per question kind, what the refusal floor decides: ``usable`` (answerable: a gold passage
    at or above the threshold), ``first`` (answerable: the most relevant passage is gold and
    usable), ``refused`` (unanswerable: no passage at or above it). A question the run refused for
    another reason stays refused."""
    out: dict[str, list[bool]] = {"usable": [], "first": [], "refused": []}
    for q in questions:
        rel = scorer.relevance(q)
        if q.answerable:
            usable = not q.refused_otherwise and bool((rel[q.gold] >= threshold).any())
            out["usable"].append(usable)
            out["first"].append(usable and bool(q.gold[int(np.argmax(rel))]) and float(rel.max()) >= threshold)
        else:
            out["refused"].append(q.refused_otherwise or not bool((rel >= threshold).any()))
    return out


def _groups(questions: Sequence[Question]) -> dict[tuple[str, str], list[Question]]:
    groups: dict[tuple[str, str], list[Question]] = {}
    for q in questions:
        groups.setdefault((q.set_name, q.language), []).append(q)
    return groups


def _rate(values: list[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _group_decisions(scorer: Scorer, questions: Sequence[Question],
                     threshold: float) -> dict[tuple[str, str], dict[str, list[bool]]]:
    """``decisions`` per (set, language) group, in sorted order."""
    return {key: decisions(scorer, qs, threshold) for key, qs in sorted(_groups(questions).items())}


def _mean_of_rates(groups: Iterable[dict[str, list[bool]]]) -> float:
    """Mean of (answerable with a usable gold passage) and (unanswerable refused), each the mean
    over the groups that have such questions."""
    kept, refused = [], []
    for d in groups:
        if d["usable"]:
            kept.append(sum(d["usable"]) / len(d["usable"]))
        if d["refused"]:
            refused.append(sum(d["refused"]) / len(d["refused"]))
    parts = [float(np.mean(v)) for v in (kept, refused) if v]
    return float(np.mean(parts)) if parts else 0.0


def objective(scorer: Scorer, questions: Sequence[Question], threshold: float) -> float:
    """Mean of (answerable with a usable gold passage) and (unanswerable refused), each the mean
    over the (set, language) groups that have such questions."""
    return _mean_of_rates(_group_decisions(scorer, questions, threshold).values())


def choose_threshold(scorer: Scorer, questions: Sequence[Question], grid: Sequence[float] = GRID) -> float:
    """The grid value with the best ``objective``; among ties, the middle one."""
    scores = [objective(scorer, questions, t) for t in grid]
    best = max(scores)
    tied = [t for t, s in zip(grid, scores, strict=True) if s >= best - 1e-12]
    return float(tied[len(tied) // 2])


def report(scorer: Scorer, questions: Sequence[Question], threshold: float) -> dict[str, Any]:
    """Per set and language: answerable usable / first, unanswerable refused, and the objective."""
    groups = _group_decisions(scorer, questions, threshold)
    rows = {f"{name}/{lang}": {"answerable": len(d["usable"]), "usable": _rate(d["usable"]), "first": _rate(d["first"]),
                               "unanswerable": len(d["refused"]), "refused": _rate(d["refused"])}
            for (name, lang), d in groups.items()}
    return {"min_relevance": threshold, "objective": round(_mean_of_rates(groups.values()), 4), "groups": rows}


def replay_error(scorer: Scorer, questions: Sequence[Question]) -> float:
    """The largest gap between the saved relevance and ``scorer``'s (≈ 0 when ``scorer`` is the
    config the runs were made with: the saved features are then all the relevance reads)."""
    gaps = [float(np.abs(scorer.relevance(q) - q.relevance).max()) for q in questions if len(q.relevance)]
    return round(max(gaps, default=0.0), 4)


ASCENT_GRID: dict[str, tuple[float, ...]] = {
    "bias": (-14, -13, -12, -11, -10, -9, -8, -7, -6, -5, -4), "dense": (0, 2.5, 5, 7.5, 10, 12.5, 15, 20),
    "lexical": (0, 2.5, 5, 8, 12, 16, 20), "entity": (0, 0.75, 1.5, 3, 4.5, 6, 8), "ppr": (0, 0.5, 1, 2),
    "rrf": (0, 0.5, 1, 2, 3, 4),
}
ASCENT_THRESHOLDS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)


def ascend(questions: Sequence[Question], start: Scorer, threshold: float, rounds: int = 3) -> tuple[Scorer, float]:
    """Coordinate ascent on the replayed ``objective`` itself: each weight of each pair type over
    ``ASCENT_GRID`` with the others fixed, then the threshold; a change is kept only when the
    objective rises; until a round changes nothing."""
    weights = {"same": dict(start.same), "cross": dict(start.cross)}
    best = objective(start, questions, threshold)
    for _ in range(rounds):
        changed = False
        for pair in ("cross", "same"):
            for name, grid in ASCENT_GRID.items():
                for value in grid:
                    trial = {**weights, pair: {**weights[pair], name: value}}
                    score = objective(Scorer(trial["same"], trial["cross"]), questions, threshold)
                    if score > best + 1e-9:
                        best, weights, changed = score, trial, True
        for t in ASCENT_THRESHOLDS:
            score = objective(Scorer(weights["same"], weights["cross"]), questions, t)
            if score > best + 1e-9:
                best, threshold, changed = score, t, True
        if not changed:
            break
    return Scorer(weights["same"], weights["cross"]), threshold


def leave_one_set_out(questions: Sequence[Question], c: float, current: Scorer | None = None,
                      current_threshold: float = 0.2) -> dict[str, Any]:
    """Each set replayed with weights and threshold chosen on the other sets: by the logistic
    fit, and (given the current scorer to start from) by ``ascend``; beside the current config."""
    out: dict[str, Any] = {}
    for name in sorted({q.set_name for q in questions}):
        train = [q for q in questions if q.set_name != name]
        held = [q for q in questions if q.set_name == name]
        row: dict[str, Any] = {}
        try:
            scorer = fit(train, c)
            row["fitted"] = report(scorer, held, choose_threshold(scorer, train))
        except ValueError as exc:
            row["fitted"] = {"skipped": str(exc)}
        if current is not None:
            row["current"] = report(current, held, current_threshold)
            ascended, t = ascend(train, current, current_threshold)
            row["ascent"] = {**report(ascended, held, t), "weights": dict(ascended.same),
                             "cross_lingual_weights": dict(ascended.cross)}
        out[name] = row
    return out


def calibrate(questions: Sequence[Question], current: Scorer, current_threshold: float,
              c: float = 1.0, heldout: Sequence[Question] = (), search: bool = False) -> dict[str, Any]:
    scorer = fit(questions, c)
    threshold = choose_threshold(scorer, questions)
    result: dict[str, Any] = {
        "questions": len(questions), "sets": sorted({q.set_name for q in questions}),
        "replay_error": replay_error(current, questions),
        "fitted": {"weights": dict(scorer.same), "cross_lingual_weights": dict(scorer.cross),
                   "min_relevance": threshold},
        "overrides": [f"rerank.weights={json.dumps(dict(scorer.same))}",
                      f"rerank.cross_lingual_weights={json.dumps(dict(scorer.cross))}",
                      f"answer.min_relevance={threshold}"],
        "dev": {"current": report(current, questions, current_threshold), "fitted": report(scorer, questions, threshold)},
        "leave_one_set_out": leave_one_set_out(questions, c, current if search else None, current_threshold),
    }
    if search:
        ascended, t = ascend(questions, current, current_threshold)
        result["ascent"] = {"weights": dict(ascended.same), "cross_lingual_weights": dict(ascended.cross),
                            "min_relevance": t, "dev": report(ascended, questions, t)}
    if heldout:
        result["heldout"] = {"current": report(current, heldout, current_threshold),
                             "fitted": report(scorer, heldout, threshold)}
    return result


def main(argv: list[str] | None = None) -> int:
    from medgraph.config import load_config

    ap = argparse.ArgumentParser(prog="python -m medgraph.eval calibrate", description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=Path, nargs="+", required=True, help="answers --runs-out files of dev splits")
    ap.add_argument("--split", default="dev", help="the split of those files to fit on (default dev)")
    ap.add_argument("--heldout", type=Path, nargs="*", default=[], help="runs files replayed only (their 'test' or 'dev' split)")
    ap.add_argument("--config", default="configs/local.yaml", help="the config the runs were made with")
    ap.add_argument("--set", dest="overrides", action="append", default=[])
    ap.add_argument("--c", type=float, default=1.0, help="inverse L2 strength of the logistic fit")
    ap.add_argument("--search", action="store_true",
                    help="also a coordinate ascent on the replayed decision from the current weights (slower)")
    ap.add_argument("--json", action="store_true", help="(the output is always JSON)")
    args = ap.parse_args(argv)
    if args.split == "test":
        raise SystemExit("calibrate fits on dev runs only; pass test runs with --heldout")
    cfg = load_config(args.config, args.overrides)
    if cfg.rerank.kind != "features":
        raise SystemExit(f"rerank.kind is {cfg.rerank.kind!r}: only the feature reranker is calibrated here")
    current = Scorer.from_config(cfg.rerank.weights, cfg.rerank.cross_lingual_weights)
    floor = cfg.answer.min_relevance
    questions = [q for p in args.runs for q in read_runs(p, args.split, floor)]
    heldout = []
    for p in args.heldout:
        runs = json.loads(p.read_text(encoding="utf-8"))
        heldout += read_runs(p, "test" if "test" in runs else "dev", floor)
    result = calibrate(questions, current, cfg.answer.min_relevance, args.c, heldout, args.search)
    print(json.dumps(result, indent=1, ensure_ascii=False))
    return 0
