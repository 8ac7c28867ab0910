"""The jobs' shared command line: common options, the summary printed as JSON or as text, and the
exit status from the run's status."""

from __future__ import annotations

import json

import pytest

from jobs.build_communities import parse_args as communities_args
from jobs.build_corpus import parse_args as corpus_args
from jobs.build_corpus import summary_text
from jobs.cli import finish, job_parser

SUMMARY = {
    "run_id": "r1", "status": "succeeded", "seconds": 1.5, "documents_written": 2, "chunks_written": 5,
    "mentions_written": 9, "documents_skipped": 1,
    "store": {"documents": 3, "chunks": 7, "mentions": 12, "entities": 6, "vectors": 7},
    "failures": [{"source": "bad.pdf", "stage": "parse", "reason": "not a PDF"}],
}


def test_every_job_takes_the_common_options() -> None:
    args = corpus_args(["--input", "a.jsonl", "b/", "--set", "x.y=1", "--set", "z=2", "--run-id", "r", "--json"])
    assert (args.input, args.overrides, args.run_id, args.json) == (["a.jsonl", "b/"], ["x.y=1", "z=2"], "r", True)
    assert args.config == "configs/local.yaml"
    args = communities_args(["--config", "c.yaml", "--full"])
    assert (args.config, args.full, args.json, args.run_id) == ("c.yaml", True, False, None)
    with pytest.raises(SystemExit):
        corpus_args([])  # --input is required
    assert not hasattr(job_parser("jobs.x", "doc", with_run=False).parse_args([]), "json")


def test_finish_prints_json_or_text_and_returns_the_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert finish(SUMMARY, corpus_args(["--input", "a", "--json"]), summary_text) == 0
    assert json.loads(capsys.readouterr().out) == SUMMARY
    assert finish({**SUMMARY, "status": "failed"}, corpus_args(["--input", "a"]), summary_text) == 1
    text = capsys.readouterr().out
    assert "run r1: failed in 1.5 s" in text and "bad.pdf [parse]: not a PDF" in text
    assert finish({**SUMMARY, "status": "up_to_date"}, communities_args([]), lambda s: "", ok=("up_to_date",)) == 0
