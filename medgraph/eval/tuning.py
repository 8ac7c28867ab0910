"""Choosing fusion settings on dev queries: RRF weights per path and ``rrf_k`` by coordinate ascent.

Input: ``QueryRun`` records of the dev queries (each query's own ranked chunk list per retrieval
path, as the retriever produced them with the base settings), the base weights, ``rrf_k`` and
per-language factors, and the metric to maximise (``ndcg@10``, ``recall@1`` ...). Output:
``TuningResult``: the chosen weights and ``rrf_k``, the dev score before and after, and the trace
of every accepted step.

The paths are searched once; each candidate setting only re-fuses the stored lists (``rrf``), so
a search over hundreds of settings takes seconds. The search: for each path in turn, try each
weight of ``WEIGHT_GRID`` with the others fixed and keep the best (ties keep the current value,
so a setting moves only when dev improves); then each ``rrf_k`` of ``RRF_K_GRID`` and each
``ppr_min_entities`` (the ppr path only for questions with that many linked entities); repeat until a
round changes nothing (at most ``rounds``). Only dev queries are ever passed in: the test split is
scored once, afterwards, with the chosen settings (``python -m medgraph.eval retrieval --tune``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medgraph.eval.metrics import score_ranking
from medgraph.retrieve.fusion import language_weights, rrf
from medgraph.retrieve.types import Candidate

WEIGHT_GRID = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0)
RRF_K_GRID = (5, 10, 20, 40, 60)
PPR_MIN_ENTITIES_GRID = (1, 2, 3)


@dataclass(frozen=True)
class QueryRun:
    """One query's per-path ranked chunk IDs, its language and its relevance grades."""

    query_id: str
    language: str
    per_path: dict[str, list[str]]
    relevant: frozenset[str]
    grades: dict[str, float]
    n_entities: int = 0  # MeSH entities linked in the question (the PPR seeds)


@dataclass
class TuningResult:
    metric: str
    weights: dict[str, float]
    rrf_k: int
    ppr_min_entities: int
    dev_before: float
    dev_after: float
    evaluations: int
    trace: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "weights": self.weights, "rrf_k": self.rrf_k,
                "ppr_min_entities": self.ppr_min_entities,
                "dev_before": round(self.dev_before, 4), "dev_after": round(self.dev_after, 4),
                "evaluations": self.evaluations, "trace": self.trace}


def fused_docs(run: QueryRun, weights: Mapping[str, float], rrf_k: int,
               factors: Mapping[Any, Mapping[str, float]], chunk_doc: Mapping[str, str],
               limit: int, ppr_min_entities: int = 1) -> list[str]:
    """The documents of one query's fused list under ``weights`` / ``rrf_k``, best first (the
    ``ppr`` list left out when the question links fewer than ``ppr_min_entities`` entities)."""
    lists = {p: [Candidate(cid) for cid in ids] for p, ids in run.per_path.items()
             if p != "ppr" or run.n_entities >= ppr_min_entities}
    fused = rrf(lists, rrf_k, language_weights(weights, factors, run.language))[:limit]
    seen: dict[str, None] = {}
    for cand in fused:
        doc = chunk_doc.get(cand.chunk_id)
        if doc is not None:
            seen.setdefault(doc)
    return list(seen)


def mean_metric(runs: Sequence[QueryRun], weights: Mapping[str, float], rrf_k: int,
                factors: Mapping[Any, Mapping[str, float]], chunk_doc: Mapping[str, str],
                metric: str, limit: int, ppr_min_entities: int = 1) -> float:
    scores = [score_ranking(fused_docs(r, weights, rrf_k, factors, chunk_doc, limit, ppr_min_entities),
                            set(r.relevant), r.grades)[metric] for r in runs]
    return float(np.mean(scores)) if scores else 0.0


@dataclass(frozen=True)
class TuningSet:
    """The dev runs of one corpus and the metric that counts on it."""

    name: str
    runs: Sequence[QueryRun]
    chunk_doc: Mapping[str, str]
    metric: str


def tune_fusion(sets: Sequence[TuningSet], weights: Mapping[str, float], rrf_k: int,
                factors: Mapping[Any, Mapping[str, float]], limit: int = 40, rounds: int = 3,
                ppr_min_entities: int = 1) -> TuningResult:
    """Coordinate ascent over per-path weights, ``rrf_k`` and ``ppr_min_entities``, maximising
    the mean over ``sets`` of each set's metric (dev queries only)."""
    paths = sorted({p.split(":")[0] for ts in sets for r in ts.runs for p in r.per_path})
    current = {p: float(weights.get(p, 1.0)) for p in paths}
    k, min_entities = rrf_k, ppr_min_entities
    evaluations = 0

    def score(w: Mapping[str, float], kk: int, me: int | None = None) -> float:
        nonlocal evaluations
        evaluations += 1
        me = min_entities if me is None else me
        return float(np.mean([mean_metric(ts.runs, w, kk, factors, ts.chunk_doc, ts.metric, limit, me)
                              for ts in sets]))

    before = best = score(current, k)
    trace: list[dict[str, Any]] = []
    for round_no in range(1, rounds + 1):
        changed = False
        for path in paths:
            for value in WEIGHT_GRID:
                if value == current[path]:
                    continue
                trial = {**current, path: value}
                if sum(trial.values()) == 0:
                    continue
                s = score(trial, k)
                if s > best + 1e-9:
                    best, current, changed = s, trial, True
                    trace.append({"round": round_no, "set": f"weights.{path}", "value": value, "dev": round(s, 4)})
        for kk in RRF_K_GRID:
            if kk == k:
                continue
            s = score(current, kk)
            if s > best + 1e-9:
                best, k, changed = s, kk, True
                trace.append({"round": round_no, "set": "rrf_k", "value": kk, "dev": round(s, 4)})
        if "ppr" in current:
            for me in PPR_MIN_ENTITIES_GRID:
                if me == min_entities:
                    continue
                s = score(current, k, me)
                if s > best + 1e-9:
                    best, min_entities, changed = s, me, True
                    trace.append({"round": round_no, "set": "ppr_min_entities", "value": me, "dev": round(s, 4)})
        if not changed:
            break
    kept = {p: w for p, w in weights.items() if p not in current}  # weights of paths that did not run
    metric = "+".join(sorted({ts.metric for ts in sets}))
    return TuningResult(metric, {**kept, **current}, k, min_entities, before, best, evaluations, trace)


FACTOR_GRID = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0)


def tune_language(sets: Sequence[TuningSet], language: str, weights: Mapping[str, float], rrf_k: int,
                  factors: Mapping[Any, Mapping[str, float]], limit: int = 40, rounds: int = 3,
                  ppr_min_entities: int = 1) -> tuple[dict[str, float], float, float, list[dict[str, Any]]]:
    """Coordinate ascent over the factors of one question language (``retrieval.language_weights``):
    only that language's dev runs count, the base weights and ``rrf_k`` stay as they are. Returns
    the chosen factors (every path that ran, 1 where it did not move), the dev score before and
    after, and the accepted steps."""
    subsets = [TuningSet(ts.name, [r for r in ts.runs if r.language == language], ts.chunk_doc, ts.metric)
               for ts in sets]
    subsets = [ts for ts in subsets if ts.runs]
    if not subsets:
        raise ValueError(f"no dev runs in language {language!r}")
    paths = sorted({p.split(":")[0] for ts in subsets for r in ts.runs for p in r.per_path})
    own = {p: float((factors.get(language) or {}).get(p, 1.0)) for p in paths}

    def score(f: Mapping[str, float]) -> float:
        trial = {**factors, language: dict(f)}
        return float(np.mean([mean_metric(ts.runs, weights, rrf_k, trial, ts.chunk_doc, ts.metric, limit,
                                          ppr_min_entities) for ts in subsets]))

    before = best = score(own)
    trace: list[dict[str, Any]] = []
    for round_no in range(1, rounds + 1):
        changed = False
        for path in paths:
            for value in FACTOR_GRID:
                if value == own[path]:
                    continue
                trial = {**own, path: value}
                s = score(trial)
                if s > best + 1e-9:
                    best, own, changed = s, trial, True
                    trace.append({"round": round_no, "set": f"language_weights.{language}.{path}", "value": value,
                                  "dev": round(s, 4)})
        if not changed:
            break
    return own, before, best, trace


# --- saved runs: tune one setting over several corpora ------------------------------------------


def save_runs(path: Path, runs: Sequence[QueryRun], chunk_doc: Mapping[str, str], meta: Mapping[str, Any]) -> None:
    """The dev runs of one benchmark (with the chunk → document map they need) as one JSON file."""
    used = {cid for r in runs for ids in r.per_path.values() for cid in ids}
    path.write_text(json.dumps({
        "meta": dict(meta), "chunk_doc": {c: chunk_doc[c] for c in sorted(used) if c in chunk_doc},
        "runs": [{"query_id": r.query_id, "language": r.language, "per_path": r.per_path,
                  "relevant": sorted(r.relevant), "grades": r.grades, "n_entities": r.n_entities} for r in runs],
    }))


def load_runs(path: Path, metric: str) -> TuningSet:
    data = json.loads(path.read_text())
    runs = [QueryRun(str(r["query_id"]), str(r["language"]), {p: list(v) for p, v in r["per_path"].items()},
                     frozenset(r["relevant"]), {d: float(g) for d, g in r["grades"].items()},
                     int(r.get("n_entities", 0))) for r in data["runs"]]
    return TuningSet(path.name, runs, data["chunk_doc"], metric)


def main(argv: list[str] | None = None) -> int:
    """``python -m medgraph.eval tune --runs A.json:ndcg@10 B.json:recall@1 [--config ...]``: one
    fusion setting for several corpora, chosen on their saved dev runs (``retrieval --runs-out``)."""
    import argparse

    from medgraph.config import load_config

    ap = argparse.ArgumentParser(prog="python -m medgraph.eval tune", description=main.__doc__)
    ap.add_argument("--runs", nargs="+", required=True, metavar="FILE:METRIC")
    ap.add_argument("--config", default="configs/local.yaml")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="A.B=C")
    ap.add_argument("--languages", nargs="+", default=[], metavar="LANG",
                    help="then choose the factors of these question languages (retrieval.language_weights), "
                         "each on its own dev runs, over the chosen weights; with --fixed-weights only these")
    ap.add_argument("--fixed-weights", action="store_true",
                    help="keep the configured weights and rrf_k; choose only the --languages factors")
    args = ap.parse_args(argv)
    cfg = load_config(args.config, args.overrides)
    sets = []
    for spec in args.runs:
        file, _, metric = spec.rpartition(":")
        if not file or metric not in ("ndcg@10", "mrr", "all@5", "recall@1", "recall@2", "recall@5", "recall@10"):
            ap.error(f"--runs takes FILE:METRIC (metric ndcg@10, mrr, all@5 or recall@1/2/5/10), got {spec!r}")
        sets.append(load_runs(Path(file), metric))
    r = cfg.retrieval
    if args.fixed_weights:
        if not args.languages:
            ap.error("--fixed-weights needs --languages")
        result = TuningResult("+".join(sorted({ts.metric for ts in sets})), dict(r.weights), r.rrf_k,
                              r.ppr_min_entities, 0.0, 0.0, 0)
    else:
        result = tune_fusion(sets, r.weights, r.rrf_k, r.language_weights, r.candidates,
                             ppr_min_entities=r.ppr_min_entities)
    factors: dict[Any, dict[str, float]] = {k: dict(v) for k, v in r.language_weights.items()}
    languages: dict[str, Any] = {}
    for language in args.languages:
        own, before, after, trace = tune_language(sets, language, result.weights, result.rrf_k, factors,
                                                  r.candidates, ppr_min_entities=result.ppr_min_entities)
        factors[language] = own
        languages[language] = {"factors": own, "dev_before": round(before, 4), "dev_after": round(after, 4),
                               "trace": trace}
    per_set = {ts.name: {"metric": ts.metric, "n_queries": len(ts.runs),
                         "before": round(mean_metric(ts.runs, r.weights, r.rrf_k, r.language_weights, ts.chunk_doc,
                                                     ts.metric, r.candidates, r.ppr_min_entities), 4),
                         "after": round(mean_metric(ts.runs, result.weights, result.rrf_k, factors,
                                                    ts.chunk_doc, ts.metric, r.candidates,
                                                    result.ppr_min_entities), 4)} for ts in sets}
    print(json.dumps({**result.as_dict(), "language_weights": factors, "languages": languages, "sets": per_set},
                     indent=2))
    return 0
