"""Router benchmark: tier and intent accuracy on the labelled EN/DE/ZH questions, and routing latency.

    python benchmarks/router.py [--config configs/local.yaml] [--sets labelled_questions heldout_questions]
        [--dspy-per-lang 2] [--dspy-engine gemma] [--program router.json] [--compile router.json]

Questions are analysed with the real NER + linking of the query path (the vocabulary of the
config, built or loaded from MEDGRAPH_HOME), then routed by the offline rule router. Latency is
the router alone (analysis excluded: it is shared with retrieval); ``analysis_ms`` is reported
separately.

``eval_split``: the rules and the DSPy router (``router.kind: dspy``, medgraph/route/dspy_router.py)
side by side on the questions of the evaluation split (``"split": "eval"``: 44 labelled + 30
held-out; the 18 ``train`` questions only ever become few-shot demos). The DSPy router runs on
the llama.cpp engine ``--dspy-engine`` of the config (the Gemma 3 270M GGUF when installed; a base
model, so this measures the plumbing, the fallback rate and the latency of one model call, not
what an instruction-tuned tier would reach), on the first ``--dspy-per-lang`` eval questions of
each language and set (0: skip), one call each; the rules are timed on the same questions and the
p50 ratio is reported. ``--compile`` writes a few-shot program compiled from the train split
(``dspy.LabeledFewShot``) and ``--program`` routes with one. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.config import load_config  # noqa: E402
from medgraph.retrieve.types import QueryAnalysis  # noqa: E402
from medgraph.route import RuleRouter  # noqa: E402
from medgraph.route.evaluate import evaluate, load_labelled  # noqa: E402
from medgraph.route.types import RouteDecision  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "router"


class CountingRouter:
    """A router that counts the ``method`` of its decisions (dspy / dspy-fallback)."""

    def __init__(self, router: object) -> None:
        self.router, self.methods = router, Counter[str]()

    def route(self, analysis: QueryAnalysis) -> RouteDecision:
        decision: RouteDecision = self.router.route(analysis)  # type: ignore[attr-defined]
        self.methods[decision.method] += 1
        return decision


def eval_rows(sets: list[str], per_lang: int | None) -> list[dict[str, object]]:
    """Rows of the evaluation split; with ``per_lang``, the first N of each language in each set."""
    out = []
    for name in sets:
        taken: Counter[str] = Counter()
        for row in load_labelled(FIXTURES / f"{name}.jsonl"):
            full = per_lang is not None and taken[row["lang"]] >= per_lang
            if row.get("split", "eval") != "eval" or full:
                continue
            taken[row["lang"]] += 1
            out.append(row)
    return out


def _summary(res: dict[str, object]) -> dict[str, object]:
    keys = ("questions", "tier_accuracy", "intent_accuracy", "per_language", "latency_ms")
    return {k: res[k] for k in keys}


def dspy_side(cfg: object, args: argparse.Namespace, analyze: object, rules: RuleRouter) -> dict[str, object]:
    """The DSPy router on the GGUF engine next to the rules, on the same eval questions."""
    from medgraph.llm.base import ModelUnavailable
    from medgraph.llm.dspy_bridge import chat_lm
    from medgraph.llm.llamacpp import LlamaCppModel
    from medgraph.route.dspy_router import PARAMS, DSPyRouter, load_program

    engine = cfg.tiers.engines.get(args.dspy_engine)  # type: ignore[attr-defined]
    if engine is None or engine.kind != "llamacpp":
        return {"skipped": f"no llamacpp engine {args.dspy_engine!r} in tiers.engines"}
    model = LlamaCppModel(engine, args.dspy_engine)
    try:
        start = time.perf_counter()
        model.wake()
        load_s = time.perf_counter() - start
    except ModelUnavailable as exc:
        return {"skipped": str(exc)}
    program = load_program(args.program) if args.program else None
    r = cfg.router  # type: ignore[attr-defined]
    dspy_router = DSPyRouter(chat_lm(model, params=PARAMS), r.small_max, r.medium_max, program=program)
    router = CountingRouter(dspy_router)
    rows = eval_rows(args.sets, args.dspy_per_lang)
    res = evaluate(router, analyze, rows, repeats=1)  # type: ignore[arg-type]
    base = evaluate(rules, analyze, rows, repeats=20)  # type: ignore[arg-type]
    model.sleep()
    p50 = res["latency_ms"]["p50"]  # type: ignore[index]
    return {
        "model": model.name, "load_s": round(load_s, 1), "program": args.program,
        "demos": len(program.classify.demos) if program else 0, **_summary(res),
        "methods": dict(router.methods),
        "fallback_rate": round(router.methods["dspy-fallback"] / max(1, len(rows)), 3),
        "rules_on_same": _summary(base),
        "p50_ratio_vs_rules": round(p50 / max(base["latency_ms"]["p50"], 1e-6), 1),  # type: ignore[index]
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument("--sets", nargs="+", default=["labelled_questions", "heldout_questions"])
    ap.add_argument("--show-misrouted", action="store_true")
    ap.add_argument("--dspy-per-lang", type=int, default=2,
                    help="DSPy eval questions per language and set (0: skip)")
    ap.add_argument("--dspy-engine", default="gemma",
                    help="the llamacpp engine of tiers.engines the DSPy router uses")
    ap.add_argument("--program", help="a compiled DSPy router program (JSON) for the DSPy side")
    ap.add_argument("--compile", metavar="OUT", help="compile a few-shot program from the train split to OUT")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)

    from medgraph.assemble import build_analyzer, load_extractor

    cfg = load_config(args.config)
    start = time.perf_counter()
    analyzer = build_analyzer(cfg, load_extractor(cfg), cache_size=0)
    load_s = time.perf_counter() - start
    router = RuleRouter(cfg.router.small_max, cfg.router.medium_max)
    out: dict[str, object] = {"analyzer_load_s": round(load_s, 1)}
    every = []
    for name in args.sets:
        rows = load_labelled(REPO / "tests" / "fixtures" / "router" / f"{name}.jsonl")
        every += rows
        analysis_ms: list[float] = []

        def analyze(q: str, lang: str, sink: list[float] = analysis_ms) -> object:
            t = time.perf_counter()
            a = analyzer.analyze(q, lang)
            sink.append((time.perf_counter() - t) * 1000)
            return a

        res = evaluate(router, analyze, rows)  # type: ignore[arg-type]
        if not args.show_misrouted:
            res["misrouted"] = [m["id"] for m in res["misrouted"]]
        res["analysis_ms_p50"] = round(statistics.median(analysis_ms), 2)
        out[name] = res
    combined = evaluate(router, lambda q, lang: analyzer.analyze(q, lang), every, repeats=5)
    out["all"] = {k: combined[k] for k in ("questions", "tier_accuracy", "intent_accuracy", "per_language")}

    def plain(q: str, lang: str) -> object:
        return analyzer.analyze(q, lang)

    if args.compile:
        from medgraph.route.dspy_router import compile_program, save_program

        train = [r for r in load_labelled(FIXTURES / "labelled_questions.jsonl") if r["split"] == "train"]
        program = compile_program(train, plain)  # type: ignore[arg-type]
        out["compiled"] = {"path": str(save_program(program, args.compile)), "train_questions": len(train),
                           "demos": len(program.classify.demos),
                           "demos_with_entities": sum("entities" in d for d in program.classify.demos)}
    every_eval = eval_rows(args.sets, None)
    out["eval_split"] = {"questions": len(every_eval),
                         "rules": _summary(evaluate(router, plain, every_eval))}  # type: ignore[arg-type]
    if args.dspy_per_lang > 0:
        out["eval_split"]["dspy"] = dspy_side(cfg, args, plain, router)  # type: ignore[index]
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
