"""Compile a DSPy program with GEPA, score it against what it replaces, save it with its record.

    python -m medgraph.eval optimise router --student ENGINE --reflection ENGINE [--budget 120] \
        [--train tests/fixtures/router/labelled_questions.jsonl] [--test tests/fixtures/router/heldout_questions.jsonl] \
        [--limit N] [--out programs/router.json] [--config configs/local.yaml] [--set a.b=c] [--json]
    python -m medgraph.eval optimise generator --corpus FILE [FILE ...] --dev DEV.jsonl --test TEST.jsonl \
        --student ENGINE --reflection ENGINE [--budget 120] [--limit N] [--out programs/generator.json] [--json]
    ray job submit --working-dir . -- python -m medgraph.eval optimise generator --config configs/cluster.yaml ...

``--student`` and ``--reflection`` name engines of ``tiers.engines`` (a llama.cpp GGUF, a vLLM tier,
an OpenAI-compatible endpoint): the student runs the program, the reflection model reads the
metric's diagnoses of low-scoring runs and rewrites the program's instructions (GEPA,
``medgraph.optimise.gepa``); ``--budget`` bounds the program runs GEPA makes.

- ``router``: the router program (intent, entities, constraints, standalone rewrite; its tier is
  scored from them as the service scores it). GEPA trains on the ``train`` split of ``--train`` and
  chooses among candidates on its ``eval`` split (dev); ``--test`` (the held-out questions) is
  scored once, after (dev too with ``--score-dev``). The baseline, and GEPA's start, is the configured program (``router.program``),
  else the current compile (``--demos`` demos of the train split, ``dspy.LabeledFewShot``; 0: the
  uncompiled program); GEPA rewrites its instructions and keeps its demos. Scores: the metric, intent accuracy and tier agreement, per language.
- ``generator``: the generator program (``medgraph.generate.program``). Its examples are the
  questions of ``--dev`` and ``--test`` (``medgraph.eval answers`` format, with gold documents)
  with the evidence the agent retrieves for them over ``--corpus`` (indexed and cached as
  ``medgraph.eval answers`` indexes it), numbered as the student's engine numbers it; a question
  whose gold passage is not among it is left out (counted). The dev examples are halved by ID
  into GEPA's train and validation sets. The hand-written prompt, the uncompiled program and the
  compiled program are then scored on test (and dev with ``--score-dev``) on the student, each reply
  read as the engine reads it: the metric, gold cited, citation precision, unanswerable refused, per
  language. The record's ``gepa`` holds GEPA's validation scores of every candidate (the start first).

It runs in one process (``ray job submit -- python -m medgraph.eval optimise ...`` on a cluster, where
the engines are the cluster's tiers). Output: the program at ``--out`` (DSPy's JSON state; the instructions GEPA wrote are in it) and its
record at ``<out>.meta.json`` (program, config hash, student and reflection engines and models,
budget, seed, the data: path, SHA-256 and examples of each file, the instructions, the scores,
seconds), both written whole or not at all; the record is printed (``--json``: as JSON). Serve
loads the program on start: ``router.program`` (with ``router.kind: dspy``) or
``tiers.engines.<name>.program``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dspy

from jobs.cli import finish, job_parser, start_logging
from medgraph.config import MedGraphConfig, load_config
from medgraph.config.llm import GenerativeEngineBase
from medgraph.llm.base import ChatParams

log = logging.getLogger("medgraph.optimise")
FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "router"
# the reflection model writes a new instruction (DSPy's chat format, as every program here)
REFLECTION_PARAMS = ChatParams(max_tokens=512, temperature=1.0, stop=("[[ ## completed ## ]]",))


def _split(ex_id: str) -> str:
    """Half of the dev examples train GEPA, half choose among its candidates: by the ID's hash."""
    return "train" if hashlib.sha256(ex_id.encode("utf-8")).digest()[0] % 2 == 0 else "val"


def _scored_splits(args: Any) -> tuple[str, ...]:
    """The test split always; dev too with ``--score-dev`` (GEPA's own validation scores of the
    start and the chosen program are in the record's ``gepa`` either way)."""
    return ("dev", "test") if args.score_dev else ("test",)


def _engines(cfg: MedGraphConfig, *names: str) -> list[GenerativeEngineBase]:
    """The configured engines ``names``, each a language model (GEPA runs and reflects with them)."""
    out: list[GenerativeEngineBase] = []
    for name in names:
        if name not in cfg.tiers.engines:
            raise ValueError(f"no engine {name!r} in tiers.engines; configured: {', '.join(sorted(cfg.tiers.engines))}")
        spec = cfg.tiers.engines[name]
        if not isinstance(spec, GenerativeEngineBase):
            raise ValueError(f"engine {name!r} is the extractive composer: GEPA needs a language model")
        out.append(spec)
    return out


def _lm(engines: Any, name: str, params: ChatParams) -> dspy.LM:
    """A DSPy LM on engine ``name``, ``params`` filling what DSPy's request leaves unset (the stop
    marker the service uses, so the student answers as it does in service)."""
    from medgraph.llm.dspy_bridge import chat_lm

    return chat_lm(engines.chat_for(name, params.max_tokens), name=name, params=params)


def _write_atomically(compiled: dspy.Module, out: Path, record: dict[str, Any]) -> None:
    from medgraph.llm.programs import meta_path, save_program

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        staged = save_program(compiled, Path(tmp) / out.name, record)
        os.replace(meta_path(staged), meta_path(out))
        os.replace(staged, out)


def _record(cfg: MedGraphConfig, program: str, args: Any, data: dict[str, Any], compiled: dspy.Module,
            scores: dict[str, Any], seconds: float) -> dict[str, Any]:
    from medgraph.optimise.gepa import config_hash, engine_record, instructions, validation_record

    return {
        "program": program, "status": "succeeded", "out": str(args.out), "config_hash": config_hash(cfg),
        "student": engine_record(cfg, args.student), "reflection": engine_record(cfg, args.reflection),
        "budget": args.budget, "seed": args.seed, "data": data, "instructions": instructions(compiled),
        "gepa": validation_record(compiled),
        "scores": scores, "seconds": round(seconds, 1), "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


# --- router ---------------------------------------------------------------------------------------

def _router_summary(scored: Any, rows_by_id: dict[str, dict[str, Any]]) -> dict[str, Any]:
    def block(rows: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(rows)
        return {"n": n, "score": round(sum(r["score"] for r in rows) / n, 4) if n else None,
                "intent_accuracy": round(sum(bool(r.get("intent_ok")) for r in rows) / n, 4) if n else None,
                "tier_agreement": round(sum(bool(r.get("tier_ok")) for r in rows) / n, 4) if n else None}
    rows = [{**r, "lang": rows_by_id[r["id"]]["lang"]} for r in scored.rows]
    return {"overall": {**block(rows), "failures": scored.failures},
            "by_language": {code: block([r for r in rows if r["lang"] == code])
                            for code in sorted({r["lang"] for r in rows})}}


def optimise_router(cfg: MedGraphConfig, args: Any) -> dict[str, Any]:
    from medgraph.assemble import LocalEngines
    from medgraph.optimise.gepa import compile_gepa, evaluate, file_record
    from medgraph.optimise.router import RouterMetric, router_examples
    from medgraph.route.dspy_router import PARAMS as ROUTER_PARAMS
    from medgraph.route.dspy_router import RouterProgram, compile_program, load_program
    from medgraph.route.evaluate import load_labelled

    _engines(cfg, args.student, args.reflection)
    labelled = load_labelled(args.train)
    held_out = [r for r in load_labelled(args.test) if r.get("split") != "train"]
    sets = {"train": [r for r in labelled if r.get("split") == "train"],
            "dev": [r for r in labelled if r.get("split") == "eval"], "test": held_out}
    if args.limit:
        sets = {k: v[:args.limit] for k, v in sets.items()}
    if not sets["train"] or not sets["dev"] or not sets["test"]:
        raise ValueError(f"router: need train and eval rows in {args.train} and eval rows in {args.test}")
    examples = {k: router_examples(v) for k, v in sets.items()}
    by_id = {r["id"]: r for rows in sets.values() for r in rows}
    metric = RouterMetric(cfg.router.small_max, cfg.router.medium_max)
    engines = LocalEngines(cfg)
    student = _lm(engines, args.student, ROUTER_PARAMS)
    reflection = _lm(engines, args.reflection, REFLECTION_PARAMS)
    if cfg.router.program:  # the configured program is the baseline and GEPA's start
        baseline, start_from = load_program(cfg.router.program, cfg.router.reasoning), cfg.router.program
    elif args.demos:  # the current compile: demos of the train split (dspy.LabeledFewShot), their
        # entities named from the real NER + linking (as benchmarks/router.py --compile names them)
        from medgraph.assemble import build_analyzer, load_extractor

        analyzer = build_analyzer(cfg, load_extractor(cfg), cache_size=0)
        baseline = compile_program(sets["train"], analyzer.analyze, max_demos=args.demos, reasoning=cfg.router.reasoning)
        start_from = f"LabeledFewShot, {min(args.demos, len(sets['train']))} train demos"
    else:
        baseline, start_from = RouterProgram(cfg.router.reasoning), "uncompiled RouterProgram"
    start = time.perf_counter()
    compiled = compile_gepa(baseline.deepcopy(), metric, examples["train"], examples["dev"],
                            student, reflection, args.budget, args.seed)
    seconds = time.perf_counter() - start
    scores = {split: {name: _router_summary(evaluate(program, metric, examples[split], student), by_id)
                      for name, program in (("baseline", baseline), ("compiled", compiled))}
              for split in _scored_splits(args)}
    data = {"train": file_record(args.train, len(sets["train"])) | {"split": "train"},
            "dev": file_record(args.train, len(sets["dev"])) | {"split": "eval"},
            "test": file_record(args.test, len(sets["test"])) | {"split": "eval"},
            "baseline": start_from}
    record = _record(cfg, "router", args, data, compiled, scores, seconds)
    _write_atomically(compiled, args.out, record)
    return record


# --- generator ------------------------------------------------------------------------------------

def generator_examples(agent: Any, queries: list[Any], spec: Any, min_relevance: float) -> tuple[list[dspy.Example], dict[str, int]]:
    """Each question's evidence as the agent retrieves it and the student's engine numbers it."""
    from medgraph.agent.graph import AgentRequest
    from medgraph.eval.answers import is_gold
    from medgraph.generate.prompt import number_evidence
    from medgraph.optimise.generator import evidence_example

    out, skipped = [], {"no_evidence": 0, "gold_not_retrieved": 0}
    for i, q in enumerate(queries, 1):
        state = asyncio.run(agent.run(AgentRequest(q.text)))
        numbered = number_evidence(state.get("evidence") or [], spec.max_evidence, spec.evidence_chars,
                                   min_relevance, q.language)
        if not len(numbered):
            skipped["no_evidence"] += 1
            continue
        gold = [n for n, c in enumerate(numbered.candidates, 1)
                if c.chunk is not None and is_gold(q, c.chunk.doc_id, c.chunk.page)]
        if q.answerable and not gold:
            skipped["gold_not_retrieved"] += 1
            continue
        out.append(evidence_example(q.query_id, q.text, q.language, numbered, gold, q.answerable))
        if i % 50 == 0:
            log.info("evidence for %d/%d questions", i, len(queries))
    return out, skipped


def optimise_generator(cfg: MedGraphConfig, args: Any) -> dict[str, Any]:
    from medgraph.eval.answers import corpus_agent, read_answer_queries
    from medgraph.generate.program import AnswerAdapter, GeneratorProgram
    from medgraph.generate.reply import STOP
    from medgraph.optimise.generator import (
        GeneratorMetric,
        evaluate_replies,
        example_record,
        summarise_replies,
    )
    from medgraph.optimise.gepa import compile_gepa, file_record

    spec, _ = _engines(cfg, args.student, args.reflection)
    missing = [p for p in [*args.corpus, args.dev, args.test] if not Path(p).is_file()]
    if missing:
        raise ValueError(f"no such file: {', '.join(map(str, missing))}")
    queries = {"dev": read_answer_queries(args.dev, None, args.limit),
               "test": read_answer_queries(args.test, None, args.limit)}
    if {q.text for q in queries["dev"]} & {q.text for q in queries["test"]}:
        raise ValueError("generator: questions in both --dev and --test; they must be different questions")
    examples: dict[str, list[dspy.Example]] = {}
    skipped: dict[str, dict[str, int]] = {}
    with corpus_agent(args.corpus, args.config, args.overrides) as (agent_cfg, _, agent):
        for split, qs in queries.items():
            examples[split], skipped[split] = generator_examples(agent, qs, spec, agent_cfg.answer.min_relevance)
    train = [ex for ex in examples["dev"] if _split(ex.id) == "train"]
    val = [ex for ex in examples["dev"] if _split(ex.id) == "val"]
    if not train or not val or not examples["test"]:
        raise ValueError(f"generator: too few usable questions (train {len(train)}, validation {len(val)}, "
                         f"test {len(examples['test'])}; left out: {skipped})")
    from medgraph.assemble import LocalEngines

    metric = GeneratorMetric(spec.min_support)
    engines = LocalEngines(cfg)
    chat = engines.chat_for(args.student, spec.max_tokens)
    student = _lm(engines, args.student, ChatParams(spec.max_tokens, spec.temperature, (STOP,)))
    reflection = _lm(engines, args.reflection, REFLECTION_PARAMS)
    start = time.perf_counter()
    compiled = compile_gepa(GeneratorProgram(), metric, train, val, student, reflection, args.budget, args.seed,
                            with_adapter=AnswerAdapter())
    seconds = time.perf_counter() - start
    params = ChatParams(max_tokens=spec.max_tokens, temperature=spec.temperature)
    candidates = (("hand_written_prompt", None), ("uncompiled_program", GeneratorProgram()), ("compiled", compiled))
    scores = {split: {name: summarise_replies(evaluate_replies(chat, examples[split], metric, params, program))
                      for name, program in candidates}
              for split in _scored_splits(args)}
    data = {"corpus": [str(p) for p in args.corpus],
            "dev": file_record(args.dev, len(examples["dev"])) | {"train": len(train), "validation": len(val),
                                                                 "left_out": skipped["dev"]},
            "test": file_record(args.test, len(examples["test"])) | {"left_out": skipped["test"]}}
    record = _record(cfg, "generator", args, data, compiled, scores, seconds)
    examples_path = args.out.with_name(args.out.name + ".examples.jsonl")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    staged = examples_path.with_name(examples_path.name + ".partial")
    staged.write_text("".join(json.dumps({"split": split, **example_record(ex)}, ensure_ascii=False) + "\n"
                              for split, exs in examples.items() for ex in exs), encoding="utf-8")
    os.replace(staged, examples_path)
    record["examples"] = str(examples_path)  # named in the record the program is saved with
    _write_atomically(compiled, args.out, record)
    return record


def summary_text(record: dict[str, Any]) -> str:
    if record["status"] != "succeeded":
        return f"optimise: {record['status']}: {record.get('error', '')}"
    test = record["scores"]["test"]
    parts = ", ".join(f"{name} {block['overall']['score']}" for name, block in test.items())
    return (f"optimise {record['program']}: wrote {record['out']} in {record['seconds']} s; "
            f"test score: {parts}")


def main(argv: list[str] | None = None) -> int:
    ap = job_parser("medgraph.eval optimise", __doc__, with_run=False)
    ap.add_argument("program", choices=("router", "generator"))
    ap.add_argument("--student", required=True, help="engine of tiers.engines that runs the program")
    ap.add_argument("--reflection", required=True, help="engine of tiers.engines that rewrites its instructions")
    ap.add_argument("--budget", type=int, default=120, help="GEPA's program runs (max_metric_calls)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, help="at most this many questions per split")
    ap.add_argument("--out", type=Path, help="the compiled program (default: programs/<program>.json)")
    ap.add_argument("--train", type=Path, default=FIXTURES / "labelled_questions.jsonl",
                    help="router: labelled questions (train split: GEPA's train set; eval split: dev)")
    ap.add_argument("--test", type=Path, help="router: held-out labelled questions (default: the fixtures'); "
                    "generator: test questions")
    ap.add_argument("--corpus", nargs="+", type=Path, help="generator: the corpus the evidence is retrieved from")
    ap.add_argument("--dev", type=Path, help="generator: dev questions (GEPA's train and validation sets)")
    ap.add_argument("--score-dev", action="store_true", help="also score the baselines and the program on dev")
    ap.add_argument("--demos", type=int, default=8, help="router: train-split demos of the start program (0: none)")
    ap.add_argument("--json", action="store_true", help="print the record as JSON")
    args = ap.parse_args(argv)
    args.out = args.out or Path("programs") / f"{args.program}.json"
    if args.program == "router":
        args.test = args.test or FIXTURES / "heldout_questions.jsonl"
    elif not (args.corpus and args.dev and args.test):
        ap.error("generator needs --corpus, --dev and --test")
    if args.budget < 1:
        ap.error("--budget must be positive")
    start_logging()
    try:
        cfg = load_config(args.config, args.overrides)
        record = (optimise_router if args.program == "router" else optimise_generator)(cfg, args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return finish(record, args, summary_text)


if __name__ == "__main__":
    sys.exit(main())
