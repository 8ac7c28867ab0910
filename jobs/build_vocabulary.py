"""Build the MeSH vocabulary once and save it where the config says.

Usage: ``python -m jobs.build_vocabulary --config configs/local.yaml [--set a.b=c ...]``
Input: the config's ``vocabulary`` section (sources, output path). Output: ``vocab.pkl`` and
``manifest.json`` under ``vocabulary.path``, and a JSON summary on stdout (counts per language
and category, sources loaded or skipped, build and load seconds). Needs no Ray.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time

from medgraph.config import load_config
from medgraph.ontology.build import build_summary, build_vocabulary
from medgraph.ontology.vocabulary import Vocabulary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.build_vocabulary", description=__doc__)
    parser.add_argument("--config", default=None, help="config YAML (default: built-in defaults)")
    parser.add_argument("--set", action="append", default=[], dest="overrides", help="a.b=c override")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    cfg = load_config(args.config, args.overrides)
    vocab = build_vocabulary(cfg.vocabulary)
    out = vocab.save(cfg.vocabulary.path)
    t0 = time.perf_counter()
    Vocabulary.load(out)
    summary = build_summary(vocab) | {"path": str(out), "load_seconds": round(time.perf_counter() - t0, 2)}
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
