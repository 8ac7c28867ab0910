"""Per-document isolation: the parser's child process, its time and memory limits, and crashes.

Real child processes, real limits: a corrupt PDF, a call that outlives its timeout (with a
grandchild, as tesseract would be), an allocation over the memory limit and a native crash each
fail with their reason, and the sandbox parses the next document as if nothing happened.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from medgraph.config.models import ParseConfig
from medgraph.ingest.isolation import IsolationError, Sandbox, run_isolated

CDC = "cdc_guide_infection_prevention_outpatient_2016.pdf"


@pytest.fixture()
def sandbox():
    box = Sandbox(memory_mb=600)
    yield box
    box.close()


def _parses(box: Sandbox, shared_data: Path) -> None:
    parsed = box.call("medgraph.ingest.pdf:parse_pdf", shared_data / "pdfs" / CDC, ParseConfig(), timeout_s=120)
    assert parsed.n_pages == 44 and parsed.ocr_pages == []


def test_a_document_parses_in_the_child(sandbox, shared_data):
    _parses(sandbox, shared_data)
    first = sandbox._proc.pid
    _parses(sandbox, shared_data)
    assert sandbox._proc.pid == first  # one child serves document after document


def test_a_corrupt_pdf_fails_with_the_parser_reason(sandbox, tmp_path, shared_data):
    (tmp_path / "corrupt.pdf").write_bytes(b"%PDF-1.7\n garbage")
    with pytest.raises(IsolationError, match="PdfError: not a readable PDF"):
        sandbox.call("medgraph.ingest.pdf:parse_pdf", tmp_path / "corrupt.pdf", ParseConfig(), timeout_s=60)
    _parses(sandbox, shared_data)


def _dead(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in state  # a zombie waiting for init to reap it is dead too


def test_a_timeout_kills_the_child_and_what_it_started(sandbox, tmp_path, shared_data):
    pid_file = tmp_path / "pid"
    start = time.monotonic()
    with pytest.raises(IsolationError, match="timed out after 2 s"):
        sandbox.call("subprocess:check_call", ["sh", "-c", f"echo $$ > {pid_file}; exec sleep 60"], timeout_s=2)
    assert time.monotonic() - start < 10
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while not _dead(grandchild) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _dead(grandchild)
    _parses(sandbox, shared_data)


def test_the_memory_limit_stops_an_allocation_and_the_child_is_replaced(sandbox, shared_data):
    with pytest.raises(IsolationError, match="MemoryError: the document needs more than the memory limit of 600 MB"):
        sandbox.call("numpy:ones", 10**9, timeout_s=60)  # 8 GB
    _parses(sandbox, shared_data)


def test_a_native_crash_is_reported_with_its_signal(sandbox, shared_data):
    with pytest.raises(IsolationError, match="died of SIGABRT"):
        sandbox.call("os:abort", timeout_s=30)
    _parses(sandbox, shared_data)


def test_without_a_sandbox_the_call_runs_in_process(shared_data):
    parsed = run_isolated(None, "medgraph.ingest.pdf:text_layer", shared_data / "pdfs" / CDC, ParseConfig(), timeout_s=1)
    assert parsed.n_pages == 44


def test_json_and_xml_read_whole_are_parsed_under_the_memory_limit(tmp_path):
    """A JSON file parsed whole and a PMC article parsed as one tree (here gzipped: small on disk,
    under the bomb check's 1 GB floor, over a GB once parsed) fail alone with the memory limit as
    their reason, in planning and in the parse stage; the records beside them load, and the
    actor's parser process serves the next file."""
    import gzip
    import json

    from jobs.stages import Parse
    from medgraph.ingest.loaders import expand_inputs, plan_shards

    with gzip.open(tmp_path / "huge.json.gz", "wt") as fh:  # [{}, {}, ...]: ~60 MB of text, 20M dicts
        fh.write("[" + "{}," * 20_000_000 + "{}]")
    with gzip.open(tmp_path / "huge.nxml.gz", "wt") as fh:  # one <article> of 10M elements
        fh.write("<article><body>" + "<p/>" * 10_000_000 + "</body></article>")
    good = {"doc_id": "ok", "title": "T", "text": "Metformin lowers glucose in type 2 diabetes."}
    (tmp_path / "good.json").write_text(json.dumps([good, {**good, "doc_id": "ok2"}]))
    files, _ = expand_inputs([tmp_path])
    cfg = ParseConfig(memory_mb=600, timeout_s=120)
    planner = Sandbox(cfg.memory_mb)
    try:
        shards = plan_shards(files, 64, planner, cfg.timeout_s)
    finally:
        planner.close()
    by_name = {s.path.rsplit("/", 1)[-1]: s for s in shards}
    assert by_name["huge.json.gz"].stop is None  # could not be counted: one shard, whose load says why
    assert (by_name["good.json"].start, by_name["good.json"].stop) == (0, 64)
    stage = Parse(cfg)
    try:
        rows = {name: stage({"path": s.path, "start": s.start, "stop": -1 if s.stop is None else s.stop})
                for name, s in sorted(by_name.items())}
    finally:
        stage.sandbox.close()
    for name in ("huge.json.gz", "huge.nxml.gz"):
        [row] = rows[name]
        assert row["kind"] == "failure" and "memory limit of 600 MB" in row["error"], row
    assert [json.loads(r["payload"])["doc_id"] for r in rows["good.json"]] == ["ok", "ok2"]
