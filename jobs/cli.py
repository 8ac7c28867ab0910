"""The command line every job shares: its options, logging, and how the summary is printed.

``job_parser(prog, doc)`` has ``--config`` and ``--set a.b=c`` (repeatable); ``with_run=True`` adds
``--run-id`` and ``--json``. ``finish(summary, args, line, ok)`` prints the summary as JSON
(``--json``) or as ``line(summary)`` and returns the exit status: 0 when ``summary["status"]`` is in
``ok``, else 1.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Callable, Iterable
from typing import Any


def job_parser(prog: str, doc: str | None, with_run: bool = True) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=f"python -m {prog}", description=(doc or "").split("\n")[0])
    ap.add_argument("--config", default="configs/local.yaml")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="A.B=C",
                    help="override one config setting (repeatable)")
    if with_run:
        ap.add_argument("--run-id", help="the run's ID in the graph store (default: a new one)")
        ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    return ap


def start_logging(fmt: str = "%(asctime)s %(levelname)s %(name)s: %(message)s") -> None:
    logging.basicConfig(level=logging.INFO, format=fmt)


def finish(summary: dict[str, Any], args: argparse.Namespace, line: Callable[[dict[str, Any]], str],
           ok: Iterable[str] = ("succeeded",)) -> int:
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        print(line(summary))
    return 0 if summary["status"] in tuple(ok) else 1
