"""Router benchmark: tier and intent accuracy on the labelled EN/DE/ZH questions, and routing latency.

    python benchmarks/router.py [--config configs/local.yaml] [--sets labelled_questions heldout_questions]

Questions are analysed with the real NER + linking of the query path (the vocabulary of the
config, built or loaded from MEDGRAPH_HOME), then routed by the offline rule router. Latency is
the router alone (analysis excluded: it is shared with retrieval); ``analysis_ms`` is reported
separately. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.config import load_config  # noqa: E402
from medgraph.route import RuleRouter  # noqa: E402
from medgraph.route.evaluate import evaluate, load_labelled  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument("--sets", nargs="+", default=["labelled_questions", "heldout_questions"])
    ap.add_argument("--show-misrouted", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)

    from medgraph.link import EntityExtractor
    from medgraph.ontology.build import load_or_build
    from medgraph.retrieve.query import QueryAnalyzer

    cfg = load_config(args.config)
    start = time.perf_counter()
    analyzer = QueryAnalyzer(EntityExtractor(load_or_build(cfg.vocabulary), cfg.ner, cfg.linking), cache_size=0)
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
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
