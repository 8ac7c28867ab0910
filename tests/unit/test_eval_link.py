"""Linking benchmark CLI on a tiny PubTator fixture (empty abstract line, German document)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medgraph.config.models import VocabularyConfig, VocabularySource
from medgraph.eval.__main__ import main as eval_main
from medgraph.eval.link import detect_language
from medgraph.ingest.pubtator import parse_ids, parse_pubtator
from medgraph.ontology.build import build_vocabulary

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TINY = FIXTURES / "pubtator" / "tiny.pubtator.txt"
KEYS = {"n_mentions", "acc_at_1", "acc_at_1_in_vocab", "e2e_precision", "e2e_recall", "e2e_f1"}


@pytest.fixture(scope="module")
def vocab_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vocab")
    build_vocabulary(
        VocabularyConfig(
            sources=[
                VocabularySource(kind="mesh_xml", path=str(FIXTURES / "mesh" / "desc_fixture.xml")),
                VocabularySource(kind="mesh_tree", path="pkg:mesh_tree_numbers.tsv.gz"),
                VocabularySource(kind="multilingual_terms", path="pkg:seed_terms.tsv"),
            ]
        )
    ).save(out)
    return out


def test_pubtator_parser_handles_empty_abstract() -> None:
    docs = parse_pubtator(TINY.read_text(encoding="utf-8"))
    assert [d.pmid for d in docs] == ["1001", "1002", "1003"]
    assert docs[1].abstract == "" and docs[1].text == "Fever after aspirin."
    for doc in docs:
        for ann in doc.annotations:
            assert doc.text[ann.start : ann.end] == ann.surface
    assert parse_ids("MESH:D001943|D010051") == ["D001943", "D010051"]
    assert parse_ids("-1") == [] and parse_ids("D1+D2") == ["D1", "D2"]


def test_detect_language() -> None:
    assert detect_language("Der Patient hatte einen Herzinfarkt und Fieber.") == "de"
    assert detect_language("The patient had a heart attack.") == "en"
    assert detect_language("患者有心肌梗死") == "zh"


def test_cli_scores(vocab_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert eval_main(["link", "--pubtator", str(TINY), "--vocab", str(vocab_dir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert KEYS <= set(out) and KEYS <= set(out["baseline"])
    # 13 gold mentions with an ID (the -1 one is ignored); "Fever" has OMIM-only gold
    assert (out["n_mentions"], out["n_in_vocab"]) == (13, 12)
    assert out["acc_at_1"] == round(12 / 13, 4) and out["acc_at_1_in_vocab"] == 1.0
    # e2e: 12 of 13 predictions right (Fever → D005334 vs OMIM gold), 12 of 13 gold found
    assert (out["e2e_tp"], out["e2e_predicted"], out["e2e_gold"]) == (12, 13, 13)
    assert out["e2e_precision"] == out["e2e_recall"] == out["e2e_f1"] == round(12 / 13, 4)
    base = out["baseline"]  # exact dictionary only: both "MI" short forms are missed
    assert base["acc_at_1"] == round(10 / 13, 4) and base["acc_at_1_in_vocab"] == round(10 / 12, 4)
    assert (base["e2e_tp"], base["e2e_predicted"]) == (10, 11)
    assert base["e2e_f1"] == round(2 * 0.9091 * 0.7692 / (0.9091 + 0.7692), 4)


def test_dispatcher_lists_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert eval_main(["--help"]) == 0
    assert "link" in capsys.readouterr().out
    assert eval_main(["no-such-command"]) == 2
