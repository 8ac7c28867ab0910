"""The end-to-end answer benchmark: question files, scoring one answer against its gold passage and
reference, per-language summaries, the PubMedQA conversion that holds the conclusion out, and the
CLI over a tiny corpus through the in-process agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medgraph.eval.__main__ import main as eval_main
from medgraph.eval.answers import (
    gold_key,
    lead_baseline,
    read_answer_queries,
    rouge,
    score_answer,
    summarise_split,
)
from medgraph.generate.base import Answer, Citation
from medgraph.ingest.storage import file_doc_id
from medgraph.retrieve.types import Candidate
from medgraph.schemas import Chunk

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


GUIDE = {"query_id": "g1", "text": "When should hands be washed with soap?", "language": "en", "answerable": True,
         "doc": "cdc.pdf", "pages": [9, 25], "section": "Hand Hygiene", "answer": "Use soap and water when hands are soiled."}
UNANSWERABLE = {"query_id": "u1", "text": "Dose of apixaban?", "language": "de", "answerable": False,
                "doc": None, "pages": [], "section": None, "answer": None}


def test_question_files_name_their_gold(tmp_path: Path) -> None:
    qs = read_answer_queries(_write(tmp_path / "q.jsonl", [
        GUIDE, UNANSWERABLE,
        {"query_id": "11", "text": "Does X help?", "language": "en", "relevant_doc_ids": ["pmid-11"], "reference": "X helped."},
    ]))
    assert qs[0].gold_docs == {"file:cdc.pdf"} and qs[0].pages == (9, 25) and qs[0].reference == GUIDE["answer"]
    assert not qs[1].answerable and qs[1].gold_docs == frozenset()
    assert qs[2].gold_docs == {"pmid-11"} and qs[2].pages == () and qs[2].reference == "X helped."
    assert [q.query_id for q in read_answer_queries(tmp_path / "q.jsonl", (2, 3))] == ["u1", "11"]
    with pytest.raises(ValueError, match="names no gold document"):
        read_answer_queries(_write(tmp_path / "bad.jsonl", [{"query_id": "x", "text": "t?", "language": "en"}]))


CDC_ID = file_doc_id(Path("/data/pdfs/cdc.pdf"))
OTHER_ID = file_doc_id(Path("/data/pdfs/other.pdf"))


def _citation(n: int, doc: str, page: int | None, section: list[str]) -> Citation:
    return Citation(n, f"c{n}", doc, "T", doc, section, page, "s", 0.5)


def test_score_answer_checks_document_page_section_and_reference(tmp_path: Path) -> None:
    query = read_answer_queries(_write(tmp_path / "q.jsonl", [GUIDE]))[0]
    top = Chunk("c1", CDC_ID, 0, "Hand hygiene matters. Use soap and water when hands are soiled. More.",
                ["Hand Hygiene"], "p", "", 10, "en", page=9)
    evidence = [Candidate("c1", 1.0, chunk=top)]
    right = Answer("Use soap and water when hands are soiled. [1] Other. [2]",
                   [_citation(1, CDC_ID, 9, ["Fundamentals", "Hand Hygiene"]), _citation(2, OTHER_ID, 9, ["X"])],
                   sentences=[("Use soap and water when hands are soiled.", 1), ("Other.", 2)])
    rec = score_answer(query, right, evidence, 12.0)
    assert CDC_ID.startswith("file:cdc.pdf@")  # indexed files' IDs carry their location; gold matches by name
    assert rec["cited_gold"] and rec["cited_gold_doc"] and rec["cited_gold_section"]
    assert rec["supported_sentences"] == 0.5  # one of two sentences is quoted from the gold passage
    assert rec["rougeL"] > rec["lead_rougeL"]  # the lead baseline: the top passage's first two sentences
    assert lead_baseline(evidence, 2) == "Hand hygiene matters. Use soap and water when hands are soiled."
    wrong_page = Answer("x [1]", [_citation(1, CDC_ID, 14, ["Hand Hygiene"])], sentences=[("x", 1)])
    rec = score_answer(query, wrong_page, evidence, 1.0)
    assert rec["cited_gold_doc"] and not rec["cited_gold"] and not rec["cited_gold_section"]
    refused = score_answer(query, Answer("no", refused=True), evidence, 1.0)
    assert not refused["cited_gold"] and refused["rougeL"] == 0.0 and refused["lead_rougeL"] > 0
    assert rouge("", "anything") == (0.0, 0.0)
    elsewhere = file_doc_id(Path("/another/folder/cdc.pdf"))
    assert elsewhere != CDC_ID and gold_key(elsewhere) == gold_key(CDC_ID) == "file:cdc.pdf"
    assert gold_key("pmid-11") == "pmid-11"


def test_a_multi_hop_answer_counts_when_it_cites_every_hops_document(tmp_path: Path) -> None:
    query = read_answer_queries(_write(tmp_path / "q.jsonl", [
        {"query_id": "mh", "text": "Which drug ..., and what ... with it?", "language": "en",
         "relevant_doc_ids": ["pmid-1", "pmid-2"]}]))[0]
    both = Answer("a [1] b [2]", [_citation(1, "pmid-1", None, []), _citation(2, "pmid-2", None, [])],
                  sentences=[("a", 1), ("b", 2)])
    one = Answer("a [1]", [_citation(1, "pmid-1", None, [])], sentences=[("a", 1)])
    assert score_answer(query, both, [], 1.0)["cited_every_gold"]
    rec = score_answer(query, one, [], 1.0)
    assert rec["cited_gold"] and not rec["cited_every_gold"]
    assert summarise_split([score_answer(query, both, [], 1.0), rec])["overall"]["cited_every_gold"] == 0.5


def test_reference_based_context_and_citation_scores(tmp_path: Path) -> None:
    query = read_answer_queries(_write(tmp_path / "q.jsonl", [
        {"query_id": "mh", "text": "q?", "language": "en", "relevant_doc_ids": ["pmid-1", "pmid-2"]}]))[0]

    def ctx(doc: str) -> Candidate:
        return Candidate(doc, 1.0, chunk=Chunk(doc, doc, 0, "t", [], "p", "", 1, "en"))

    contexts = [ctx("pmid-9"), ctx("pmid-1"), ctx("pmid-8"), ctx("pmid-2")]  # gold at ranks 2 and 4
    answer = Answer("a [1] b [2]", [_citation(1, "pmid-1", None, []), _citation(2, "pmid-8", None, [])],
                    sentences=[("a", 1), ("b", 2)])
    rec = score_answer(query, answer, contexts, 1.0)
    assert rec["context_precision"] == pytest.approx((1 / 2 + 2 / 4) / 2)  # precision@2 and @4, averaged
    assert rec["context_recall"] == 1.0  # both gold documents among the contexts
    assert rec["citation_precision"] == 0.5 and rec["citation_recall"] == 0.5  # one of two cited is gold; 1 of 2 gold
    none = score_answer(query, Answer("no", refused=True), [ctx("pmid-9")], 1.0)
    assert none["context_precision"] == 0.0 and none["context_recall"] == 0.0
    assert none["citation_precision"] is None and none["citation_recall"] == 0.0
    summary = summarise_split([rec, none])["overall"]
    assert summary["citation_precision"] == 0.5  # answered questions only
    assert summary["citation_recall"] == 0.25 and summary["context_recall"] == 0.5


def test_summary_is_per_language_and_counts_refusals(tmp_path: Path) -> None:
    qs = read_answer_queries(_write(tmp_path / "q.jsonl", [GUIDE, UNANSWERABLE, {**UNANSWERABLE, "query_id": "u2"}]))
    gold = Answer("a [1]", [_citation(1, "file:cdc.pdf", 9, ["Hand Hygiene"])], sentences=[("a", 1)])
    records = [score_answer(qs[0], gold, [], 10.0), score_answer(qs[1], Answer("r", refused=True), [], 20.0),
               score_answer(qs[2], gold, [], 30.0)]
    summary = summarise_split(records)
    assert summary["overall"]["answerable"] == 1 and summary["overall"]["unanswerable"] == 2
    assert summary["overall"]["refused_unanswerable"] == 0.5 and summary["overall"]["cited_gold"] == 1.0
    assert summary["by_language"]["de"]["refused_unanswerable"] == 0.5
    assert summary["by_language"]["de"]["answered"] is None  # no answerable German question
    assert summary["overall"]["latency_ms"]["p50"] == 20.0


PUBMEDQA = {
    "111": {"QUESTION": "Does metformin help?", "CONTEXTS": ["Ctx one.", "Ctx two."], "LABELS": ["BACKGROUND", "RESULTS"],
            "LONG_ANSWER": "Metformin helped.", "final_decision": "yes"},
    "222": {"QUESTION": "Is fever harmless?", "CONTEXTS": ["Fever data."], "LABELS": ["RESULTS"],
            "LONG_ANSWER": "Fever was harmless.", "final_decision": "maybe"},
}


def test_convert_holds_the_conclusion_out_and_splits_by_test_ids(tmp_path: Path) -> None:
    src = tmp_path / "ori_pqal.json"
    src.write_text(json.dumps(PUBMEDQA))
    (tmp_path / "test_ids.json").write_text(json.dumps({"222": "maybe"}))
    corpus, dev, test = tmp_path / "c.jsonl", tmp_path / "dev.jsonl", tmp_path / "test.jsonl"
    assert eval_main(["convert-pubmedqa", "--input", str(src), "--corpus", str(corpus), "--queries", str(dev),
                      "--hold-out-conclusion", "--test-ids", str(tmp_path / "test_ids.json"),
                      "--test-queries", str(test)]) == 0
    docs = [json.loads(x) for x in corpus.read_text().splitlines()]
    assert [s["title"] for s in docs[0]["sections"]] == ["Background", "Results"]  # no conclusion indexed
    assert "helped" not in corpus.read_text()
    dev_q = [json.loads(x) for x in dev.read_text().splitlines()]
    test_q = [json.loads(x) for x in test.read_text().splitlines()]
    assert [q["query_id"] for q in dev_q] == ["111"] and [q["query_id"] for q in test_q] == ["222"]
    assert dev_q[0]["reference"] == "Metformin helped." and dev_q[0]["final_decision"] == "yes"
    with pytest.raises(SystemExit):  # the CLI says so before reading anything
        eval_main(["convert-pubmedqa", "--input", str(src), "--corpus", str(corpus), "--queries", str(dev),
                   "--test-ids", str(tmp_path / "test_ids.json")])
    with pytest.raises(ValueError, match="go together"):
        from medgraph.eval.convert import convert_pubmedqa

        convert_pubmedqa(src, corpus, dev, True, tmp_path / "test_ids.json", None)


CORPUS = [
    {"doc_id": "heart", "title": "Metformin and the heart", "language": "en",
     "sections": [{"title": "Objective", "text": "To evaluate metformin in older patients with diabetes and heart disease."},
                  {"title": "Results", "text": "Metformin lowered the rate of myocardial infarction in older patients "
                                               "with diabetes during five years of follow-up."}]},
    {"doc_id": "fever", "title": "Fever in children", "language": "en",
     "sections": [{"title": "Results", "text": "Fever after vaccination resolved within two days in most children."}]},
]


def test_cli_runs_the_agent_per_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MEDGRAPH_HOME", str(tmp_path / "home"))
    corpus = _write(tmp_path / "corpus.jsonl", CORPUS)
    dev = _write(tmp_path / "dev.jsonl", [
        {"query_id": "d1", "text": "Does metformin lower myocardial infarction in diabetes?", "language": "en",
         "relevant_doc_ids": ["heart"], "reference": "Metformin lowered myocardial infarction in diabetes."},
        {"query_id": "d2", "text": "Who won the football world cup in 1998?", "language": "en", "answerable": False},
    ])
    test = _write(tmp_path / "test.jsonl", [
        {"query_id": "t1", "text": "How long does fever after vaccination last in children?", "language": "en",
         "relevant_doc_ids": ["fever"]},
    ])
    sources = json.dumps([{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")},
                          {"kind": "mesh_tree", "path": "pkg:mesh_tree_numbers.tsv.gz"}])
    sets = ["embedding.dense=hashing", f"vocabulary.path={tmp_path / 'vocab'}", f"vocabulary.sources={sources}"]
    runs = tmp_path / "runs.json"
    argv = ["answers", "--corpus", str(corpus), "--dev", str(dev), "--test", str(test), "--runs-out", str(runs),
            "--json", *[a for s in sets for a in ("--set", s)]]
    assert eval_main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_docs"] == 2 and set(out["splits"]) == {"dev", "test"}
    dev_all = out["splits"]["dev"]["overall"]
    assert dev_all["answerable"] == 1 and dev_all["unanswerable"] == 1
    assert dev_all["cited_gold"] == 1.0 and dev_all["refused_unanswerable"] == 1.0
    assert dev_all["rougeL"] > 0 and "lead_rougeL" in dev_all and dev_all["latency_ms"]["p50"] > 0
    assert out["splits"]["test"]["by_language"]["en"]["cited_gold"] == 1.0
    saved = json.loads(runs.read_text())
    answer = saved["dev"][0]["answer"]
    assert "Metformin lowered" in answer and "To evaluate" not in answer  # the finding, not the aim
    overlap = _write(tmp_path / "overlap.jsonl", [json.loads(dev.read_text().splitlines()[0])])
    assert eval_main(["answers", "--corpus", str(corpus), "--dev", str(dev), "--test", str(overlap)]) == 2
    assert "in both dev and test" in capsys.readouterr().err
    bad = _write(tmp_path / "bad.jsonl", [{"query_id": "b1", "text": "Is it safe?", "language": "en"}])
    assert eval_main(["answers", "--corpus", str(corpus), "--dev", str(bad)]) == 2  # no gold document
    assert "names no gold document" in capsys.readouterr().err
    assert eval_main(["answers", "--corpus", str(corpus), "--dev", str(dev), "--dev-range", "5-1"]) == 2
    assert "FIRST <= LAST" in capsys.readouterr().err
