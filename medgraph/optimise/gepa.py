"""GEPA over a DSPy program, scored by a metric that returns a score and a diagnosis.

Input: a program, a metric (``(gold, pred, trace=None, pred_name=None, pred_trace=None) ->
dspy.Prediction(score=..., feedback=...)``), train and validation examples, the student LM (runs
the program) and the reflection LM (reads the diagnoses of low-scoring runs and rewrites the
program's instructions; any LM, e.g. another tier or an OpenAI-compatible endpoint through
``medgraph.llm.dspy_bridge.chat_lm``). Output: the compiled program (``compile_gepa``, DSPy's
``dspy.GEPA`` with its Pareto candidate selection; the budget is ``max_metric_calls``).

``evaluate`` scores any program on examples the same way (mean score, the replies that did not
parse counted as failures and scored 0, each example's diagnosis), so a compiled program and its
baseline are compared in one run. ``record`` is what is saved beside a compiled program: the
config hash, the models, the data (path, SHA-256, examples) and the scores.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dspy
from dspy.teleprompt.gepa.instruction_proposal import InstructionProposer

log = logging.getLogger(__name__)
Metric = Callable[..., dspy.Prediction]
FAILURE = "the reply could not be read as the program's output fields"


def feedback_metric(score: float, feedback: str, **extras: Any) -> dspy.Prediction:
    """A metric's result: GEPA reads ``feedback`` into its reflection prompt; ``extras`` (e.g. the
    parts of the score) land in ``evaluate``'s rows."""
    return dspy.Prediction(score=float(score), feedback=feedback, **extras)


@dataclass
class Scored:
    """A program's scores on examples: ``score`` is the mean, a failed reply scoring 0."""

    score: float
    n: int
    failures: int
    rows: list[dict[str, Any]] = field(default_factory=list)  # id, score, feedback, and the metric's extras


def adapter() -> dspy.Adapter:
    """The chat adapter the programs run with by default: one LM call, no JSON-adapter second call."""
    return dspy.ChatAdapter(use_json_adapter_fallback=False)


def validation_record(compiled: dspy.Module) -> dict[str, Any]:
    """GEPA's candidates and their validation scores (the seed program is candidate 0)."""
    results = getattr(compiled, "detailed_results", None)
    if results is None:
        return {}
    scores = [round(float(s), 4) for s in results.val_aggregate_scores]
    return {"candidates": len(scores), "seed_score": scores[0] if scores else None,
            "best_score": max(scores) if scores else None, "best_candidate": results.best_idx,
            "scores": scores}


def evaluate(program: dspy.Module, metric: Metric, examples: Sequence[dspy.Example], lm: dspy.BaseLM,
             with_adapter: dspy.Adapter | None = None) -> Scored:
    """``program`` on every example with ``lm`` (and ``with_adapter``, default ``adapter()``), scored by ``metric``."""
    rows: list[dict[str, Any]] = []
    failures = 0
    with dspy.context(lm=lm, adapter=with_adapter or adapter()):
        for ex in examples:
            try:
                pred = program(**ex.inputs())
            except Exception as exc:  # noqa: BLE001 - an unparsable reply scores 0, said in the row
                failures += 1
                rows.append({"id": ex.get("id"), "score": 0.0, "feedback": f"{FAILURE} ({type(exc).__name__})"})
                continue
            result = metric(ex, pred)
            extras = {k: v for k, v in result.items() if k not in ("score", "feedback")}
            rows.append({"id": ex.get("id"), "score": float(result.score), "feedback": str(result.feedback), **extras})
    score = sum(r["score"] for r in rows) / len(rows) if rows else 0.0
    return Scored(score, len(rows), failures, rows)


def compile_gepa(program: dspy.Module, metric: Metric, trainset: Sequence[dspy.Example],
                 valset: Sequence[dspy.Example], student: dspy.BaseLM, reflection: dspy.BaseLM,
                 max_metric_calls: int, seed: int = 0, log_dir: str | None = None,
                 with_adapter: dspy.Adapter | None = None) -> dspy.Module:
    """``program`` compiled by GEPA: ``student`` runs it, ``reflection`` proposes new instructions.

    ``max_metric_calls`` bounds the program runs (the first is a full pass over ``valset``, so it
    must exceed ``len(valset)``); one thread, no merge of candidates (a small budget is spent on
    reflection), a reply that does not parse is reported to the reflection model as such.
    """
    if not trainset or not valset:
        raise ValueError("GEPA needs train and validation examples")
    if max_metric_calls <= len(valset):
        raise ValueError(f"max_metric_calls {max_metric_calls} leaves nothing after the first pass over "
                         f"the {len(valset)} validation examples: give more than {len(valset)}")
    optimiser = dspy.GEPA(metric=metric, max_metric_calls=max_metric_calls, reflection_lm=reflection,
                          reflection_minibatch_size=min(3, len(trainset)), candidate_selection_strategy="pareto",
                          use_merge=False, num_threads=1, seed=seed, log_dir=log_dir,
                          add_format_failure_as_feedback=True, track_stats=True,
                          # the reflection model answers in the chat format too (GEPA's default asks for JSON,
                          # which small local models rarely write)
                          instruction_proposer=InstructionProposer(adapter=adapter()))
    start = time.perf_counter()
    # GEPA's progress bars go to stdout: keep stdout for the caller's output (a job's JSON)
    with dspy.context(lm=student, adapter=with_adapter or adapter()), contextlib.redirect_stdout(sys.stderr):
        compiled = optimiser.compile(program, trainset=list(trainset), valset=list(valset))
    log.info("GEPA compiled %s in %.1f s (%d metric calls at most)", type(program).__name__,
             time.perf_counter() - start, max_metric_calls)
    return compiled


def instructions(program: dspy.Module) -> dict[str, str]:
    """Each predictor's instructions (what GEPA rewrites), by predictor name."""
    return {name: p.signature.instructions for name, p in program.named_predictors()}


def file_record(path: str | Path, examples: int) -> dict[str, Any]:
    """A data file as the record names it: path, SHA-256 of its bytes, examples read from it."""
    path = Path(path)
    return {"path": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "examples": examples}


def config_hash(cfg: Any) -> str:
    """SHA-256 (16 hex digits) of the config as JSON with sorted keys."""
    text = json.dumps(cfg.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def engine_record(cfg: Any, engine: str) -> dict[str, Any]:
    """An engine of ``tiers.engines`` as the record names it: name, kind, model."""
    spec = cfg.tiers.engines[engine]
    model = getattr(spec, "model_path", None) or getattr(spec, "model", None) or spec.kind
    return {"engine": engine, "kind": spec.kind, "model": str(model)}
