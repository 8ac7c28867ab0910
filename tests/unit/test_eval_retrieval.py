"""Retrieval benchmark: metrics, chunk → document mapping, the PubMedQA converter and the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from medgraph.eval.__main__ import main as eval_main
from medgraph.eval.convert import convert_pubmedqa
from medgraph.eval.metrics import doc_ranking, ndcg_at, recall_at, reciprocal_rank, score_ranking, summarise
from medgraph.eval.retrieval import METHODS, read_queries
from tests.helpers import REPO

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_recall_and_mrr_by_hand() -> None:
    ranked = ["d3", "d1", "d7", "d2"]
    relevant = {"d1", "d2", "d9"}
    assert recall_at(ranked, relevant, 1) == 0.0
    assert recall_at(ranked, relevant, 2) == pytest.approx(1 / 3)
    assert recall_at(ranked, relevant, 10) == pytest.approx(2 / 3)
    assert reciprocal_rank(ranked, relevant) == pytest.approx(0.5)
    assert reciprocal_rank([], relevant) == 0.0  # a method that returns nothing is a miss
    assert recall_at([], relevant, 10) == 0.0


def test_ndcg_uses_graded_gains_and_ideal_order() -> None:
    grades = {"a": 2.0, "b": 1.0, "c": 1.0}
    ranked = ["b", "x", "a"]
    dcg = 1 / math.log2(2) + 0 + 2 / math.log2(4)
    idcg = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at(ranked, grades, 10) == pytest.approx(dcg / idcg)
    assert ndcg_at(["a", "b", "c"], grades, 10) == pytest.approx(1.0)
    # binary: one relevant document at rank 2
    assert ndcg_at(["x", "a"], {"a": 1.0}, 10) == pytest.approx(1 / math.log2(3))
    # the cut-off: relevant documents below rank k earn nothing, but the ideal still counts them
    assert ndcg_at(["x", "y", "a"], {"a": 1.0}, 2) == 0.0


def test_chunk_hits_map_to_documents_at_their_best_rank() -> None:
    chunk_doc = {"c1": "A", "c2": "B", "c3": "A", "c4": "C"}
    assert doc_ranking(["c2", "c1", "c3", "missing", "c4", "c2"], chunk_doc) == ["B", "A", "C"]
    scores = score_ranking(doc_ranking(["c2", "c1", "c3"], chunk_doc), {"A"}, {"A": 1.0})
    assert scores["recall@1"] == 0.0 and scores["recall@5"] == 1.0 and scores["mrr"] == 0.5
    summary = summarise([scores, score_ranking(["A"], {"A"}, {"A": 1.0})], [3.0, 1.0, 2.0])
    assert summary["mrr"] == 0.75 and summary["recall@1"] == 0.5 and summary["latency_p50_ms"] == 2.0
    # two gold passages (a two-hop question): recall is the share found, all@5 asks for both
    two = score_ranking(["A", "x", "y", "z", "w", "B"], {"A", "B"}, {"A": 1.0, "B": 1.0})
    assert two["recall@1"] == 0.5 and two["recall@5"] == 0.5 and two["recall@10"] == 1.0 and two["all@5"] == 0.0
    assert score_ranking(["B", "A"], {"A", "B"}, {"A": 1.0, "B": 1.0})["all@5"] == 1.0


def test_queries_grades_default_to_binary(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        json.dumps({"query_id": 1, "text": "a", "language": "en", "relevant_doc_ids": ["x"]}) + "\n"
        + json.dumps({"query_id": "2", "text": "b", "relevant_doc_ids": ["y", "z"], "graded": {"y": 2, "z": 1}})
        + "\n\n",
        encoding="utf-8",
    )
    q1, q2 = read_queries(path)
    assert q1.query_id == "1" and q1.grades == {"x": 1.0} and q1.relevant == {"x"}
    assert q2.language == "en" and q2.grades == {"y": 2.0, "z": 1.0}
    assert len(read_queries(path, limit=1)) == 1


PUBMEDQA = {
    "111": {"QUESTION": "Does metformin reduce myocardial infarction?", "CONTEXTS": ["Ctx one.", "Ctx two."],
            "LABELS": ["BACKGROUND", "RESULTS"], "LONG_ANSWER": "Metformin helped.", "YEAR": "2001"},
    "222": {"QUESTION": "Is fever common?", "CONTEXTS": ["Fever data."], "LABELS": ["METHODS"],
            "LONG_ANSWER": "Fever is common.", "YEAR": "2002"},
    "333": {"QUESTION": "Is lead toxic?", "CONTEXTS": ["Lead levels."], "LABELS": ["OBJECTIVE"],
            "LONG_ANSWER": "", "YEAR": "2003"},
}


def test_convert_pubmedqa_shape(tmp_path: Path) -> None:
    src = tmp_path / "ori_pqal.json"
    src.write_text(json.dumps(PUBMEDQA), encoding="utf-8")
    corpus, queries = tmp_path / "c.jsonl", tmp_path / "q.jsonl"
    rc = eval_main(["convert-pubmedqa", "--input", str(src), "--corpus", str(corpus), "--queries", str(queries)])
    assert rc == 0
    docs = [json.loads(x) for x in corpus.read_text(encoding="utf-8").splitlines()]
    qs = [json.loads(x) for x in queries.read_text(encoding="utf-8").splitlines()]
    assert [d["doc_id"] for d in docs] == ["pmid-111", "pmid-222", "pmid-333"]
    first = docs[0]
    assert first["title"] == "PubMed 111" and first["language"] == "en"
    assert first["sections"] == [{"title": "Background", "text": "Ctx one."}, {"title": "Results", "text": "Ctx two."},
                                 {"title": "Conclusions", "text": "Metformin helped."}]
    assert [s["title"] for s in docs[2]["sections"]] == ["Objective"]  # no empty conclusion
    assert qs[0] == {"query_id": "111", "text": PUBMEDQA["111"]["QUESTION"], "language": "en",
                     "relevant_doc_ids": ["pmid-111"]}
    for doc, item in zip(docs, PUBMEDQA.values(), strict=True):
        assert item["QUESTION"] not in json.dumps(doc)  # the question never leaks into the corpus
    again = tmp_path / "c2.jsonl"
    convert_pubmedqa(src, again, tmp_path / "q2.jsonl")
    assert again.read_bytes() == corpus.read_bytes()  # deterministic: same file, same index cache key


CORPUS = [
    {"doc_id": "heart", "title": "Metformin and the heart", "language": "en",
     "text": "Metformin lowered the rate of myocardial infarction in older patients with diabetes. "
             "Heart attack admissions fell during five years of follow-up."},
    {"doc_id": "fever", "title": "Fever in children", "language": "en",
     "sections": [{"title": "Results", "text": "Fever after vaccination resolved within two days in most children."},
                  {"title": "Conclusions", "text": "Pyrexia is a common and harmless reaction to vaccines."}]},
    {"doc_id": "lead", "title": "Lead exposure", "language": "en",
     "text": "Blood lead levels in workers of a battery plant exceeded the limits for occupational exposure."},
    {"doc_id": "leuk", "title": "Leukemia outcomes", "language": "en",
     "text": "Precursor cell lymphoblastic leukemia-lymphoma survival improved with modern chemotherapy."},
]
QUERIES = [
    {"query_id": "q1", "text": "metformin myocardial infarction", "language": "en", "relevant_doc_ids": ["heart"]},
    {"query_id": "q2", "text": "fever after vaccination in children", "language": "en",
     "relevant_doc_ids": ["fever", "heart"], "graded": {"fever": 2, "heart": 1}},
    {"query_id": "q3", "text": "blood lead in battery workers", "language": "en", "relevant_doc_ids": ["lead"]},
]


@pytest.fixture
def tiny_benchmark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, list[str]]:
    monkeypatch.setenv("MEDGRAPH_HOME", str(tmp_path / "home"))
    corpus, queries = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in CORPUS), encoding="utf-8")
    queries.write_text("".join(json.dumps(r) + "\n" for r in QUERIES), encoding="utf-8")
    sources = json.dumps([{"kind": "mesh_xml", "path": str(FIXTURES / "mesh" / "desc_fixture.xml")},
                          {"kind": "mesh_tree", "path": "pkg:mesh_tree_numbers.tsv.gz"}])
    sets = ["embedding.dense=hashing", f"vocabulary.path={tmp_path / 'vocab'}", f"vocabulary.sources={sources}"]
    return corpus, queries, [a for s in sets for a in ("--set", s)]


def test_cli_json_keys_and_cache(tiny_benchmark: tuple[Path, Path, list[str]],
                                 capsys: pytest.CaptureFixture[str]) -> None:
    corpus, queries, sets = tiny_benchmark
    argv = ["retrieval", "--corpus", str(corpus), "--queries", str(queries), "--json", *sets]
    assert eval_main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_queries"] == 3 and out["n_docs"] == 4 and out["n_chunks"] >= 4
    assert set(out["methods"]) == set(METHODS)
    keys = {"recall@1", "recall@2", "recall@5", "recall@10", "all@5", "mrr", "ndcg@10", "latency_p50_ms"}
    for method, row in out["methods"].items():
        assert set(row) == keys, method
        assert all(0.0 <= row[k] <= 1.0 for k in keys - {"latency_p50_ms"}), method
    assert out["methods"]["bm25"]["recall@1"] > 0.5 and out["methods"]["fused"]["recall@10"] == 1.0
    assert out["bm25_stemmer"]
    cache = Path(out["index"]["path"])
    assert cache.parent.name == "eval-cache" and (cache / "manifest.json").is_file()
    # a re-run reuses the cached index (same key, no rebuild), and --limit-queries applies
    assert eval_main([*argv, "--limit-queries", "1"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["index"]["path"] == out["index"]["path"] and again["n_queries"] == 1
    assert again["index"]["build_s"] == out["index"]["build_s"]  # read back from the manifest
    assert [p.name for p in cache.parent.iterdir()] == [cache.name]


# --- dev / test protocol ---------------------------------------------------------------------------


def test_query_ranges_pick_lines_and_reject_bad_ones(tmp_path: Path) -> None:
    from medgraph.eval.retrieval import parse_range

    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps({"query_id": i, "text": f"q{i}", "relevant_doc_ids": ["d"]}) + "\n"
                            for i in range(1, 11)), encoding="utf-8")
    assert [q.query_id for q in read_queries(path, lines=parse_range("3-5"))] == ["3", "4", "5"]
    assert parse_range(None) is None
    for bad in ("5-3", "0-2", "x", "1"):
        with pytest.raises(ValueError, match="range"):
            parse_range(bad)
    with pytest.raises(ValueError, match="past its end"):
        read_queries(path, lines=(8, 12))


def _run(qid: str, per_path: dict[str, list[str]], relevant: str, language: str = "en"):  # type: ignore[no-untyped-def]
    from medgraph.eval.tuning import QueryRun

    return QueryRun(qid, language, per_path, frozenset({relevant}), {relevant: 1.0})


def test_tuning_moves_weight_to_the_path_that_finds_the_answer() -> None:
    from medgraph.eval.tuning import TuningSet, fused_docs, mean_metric, tune_fusion

    chunk_doc = {f"c{i}": f"d{i}" for i in range(10)}
    # "good" ranks the relevant chunk first; "bad" ranks it last, and its first chunks are wrong
    runs = [_run(f"q{i}", {"good": [f"c{i}", "c8", "c9"], "bad": ["c8", "c9", "c7", f"c{i}"]}, f"d{i}")
            for i in range(5)]
    base = {"good": 1.0, "bad": 2.0}
    before = mean_metric(runs, base, 60, {}, chunk_doc, "recall@1", 40)
    assert before == 0.0  # the bad path outweighs the good one
    result = tune_fusion([TuningSet("dev", runs, chunk_doc, "recall@1")], base, 60, {}, limit=40)
    assert result.dev_before == before and result.dev_after == 1.0
    assert result.weights["good"] > result.weights["bad"]
    assert result.trace and result.evaluations > 1
    assert fused_docs(runs[0], result.weights, result.rrf_k, {}, chunk_doc, 40)[0] == "d0"
    # a setting that cannot improve stays where it is (ties keep the current value)
    same = tune_fusion([TuningSet("dev", runs, chunk_doc, "recall@1")], result.weights, result.rrf_k, {}, limit=40)
    assert same.weights == result.weights and same.trace == []


def test_tuning_applies_language_factors() -> None:
    from medgraph.eval.tuning import fused_docs

    chunk_doc = {"a": "A", "b": "B"}
    run = _run("q", {"sparse": ["a"], "translate:en": ["b"]}, "B", language="de")
    weights = {"sparse": 1.0, "translate": 1.0}
    assert fused_docs(run, weights, 10, {}, chunk_doc, 40)[0] == "A"  # tie broken by chunk ID
    assert fused_docs(run, weights, 10, {"de": {"sparse": 0.25}}, chunk_doc, 40)[0] == "B"


def test_language_factors_are_chosen_on_that_languages_runs_only(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from medgraph.eval.tuning import TuningSet, mean_metric, save_runs, tune_language

    chunk_doc = {f"c{i}": f"d{i}" for i in range(20)}
    # English questions: sparse finds the answer; Chinese ones: only the translation does, and sparse
    # (the Chinese words against English text) ranks a wrong chunk first
    en = [_run(f"e{i}", {"sparse": [f"c{i}"], "translate:en": ["c19"]}, f"d{i}") for i in range(4)]
    zh = [_run(f"z{i}", {"sparse": ["c18"], "translate:en": [f"c{i}"]}, f"d{i}", language="zh")
          for i in range(4, 8)]
    weights = {"sparse": 2.0, "translate": 1.0}
    sets = [TuningSet("dev", en + zh, chunk_doc, "recall@1")]
    factors, before, after, trace = tune_language(sets, "zh", weights, 60, {})
    assert before == 0.0 and after == 1.0 and trace
    assert factors["sparse"] * weights["sparse"] < factors["translate"] * weights["translate"]
    assert mean_metric(en, weights, 60, {"zh": factors}, chunk_doc, "recall@1", 40) == 1.0  # English untouched
    with pytest.raises(ValueError, match="no dev runs"):
        tune_language(sets, "de", weights, 60, {})
    # the CLI: base weights kept, one factor table per language
    save_runs(tmp_path / "r.json", en + zh, chunk_doc, {})
    assert eval_main(["tune", "--runs", f"{tmp_path / 'r.json'}:recall@1", "--fixed-weights", "--languages", "zh",
                      "--set", "retrieval.weights={\"sparse\": 2.0, \"translate\": 1.0}",
                      "--set", "retrieval.language_weights={}"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["weights"] == weights and out["languages"]["zh"]["dev_after"] == 1.0
    assert out["language_weights"]["zh"] == factors


def test_saved_runs_round_trip(tmp_path: Path) -> None:
    from medgraph.eval.tuning import load_runs, save_runs

    runs = [_run("q1", {"sparse": ["c1", "c2"]}, "d1")]
    save_runs(tmp_path / "r.json", runs, {"c1": "d1", "c2": "d2", "c3": "d3"}, {"corpus": "x"})
    back = load_runs(tmp_path / "r.json", "mrr")
    assert back.runs == runs and back.metric == "mrr" and back.chunk_doc == {"c1": "d1", "c2": "d2"}


def test_cli_dev_test_tunes_on_dev_only(tiny_benchmark: tuple[Path, Path, list[str]], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    corpus, queries, sets = tiny_benchmark
    runs = tmp_path / "dev.runs.json"
    argv = ["retrieval", "--corpus", str(corpus), "--dev", str(queries), "--dev-range", "1-2",
            "--test", str(queries), "--test-range", "3-3", "--tune", "mrr", "--runs-out", str(runs), "--json", *sets]
    assert eval_main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dev"]["n_queries"] == 2 and out["test"]["n_queries"] == 1
    assert out["tuning"]["dev_after"] >= out["tuning"]["dev_before"]
    assert out["test"]["retrieval"]["weights"] == out["tuning"]["weights"]
    assert out["test"]["retrieval"]["rrf_k"] == out["tuning"]["rrf_k"]
    assert {r["query_id"] for r in json.loads(runs.read_text())["runs"]} == {"q1", "q2"}  # dev only
    # the saved dev runs tune a setting for several corpora at once
    assert eval_main(["tune", "--runs", f"{runs}:mrr", f"{runs}:recall@1", *sets]) == 0
    joint = json.loads(capsys.readouterr().out)
    assert set(joint["sets"]) == {"dev.runs.json"} and joint["metric"] == "mrr+recall@1"
    # overlapping splits and half a protocol are refused
    overlap = ["retrieval", "--corpus", str(corpus), "--dev", str(queries), "--test", str(queries), *sets]
    assert eval_main(overlap) == 2 and "share" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        eval_main(["retrieval", "--corpus", str(corpus), "--dev", str(queries), *sets])


def test_tuning_keeps_ppr_for_questions_with_several_entities() -> None:
    from dataclasses import replace

    from medgraph.eval.tuning import TuningSet, tune_fusion

    chunk_doc = {f"c{i}": f"d{i}" for i in range(20)}
    # one-entity questions: ppr ranks a wrong chunk first; two-entity ones: only ppr finds the answer
    one = [replace(_run(f"a{i}", {"sparse": [f"c{i}", "c19"], "ppr": ["c18"]}, f"d{i}"), n_entities=1)
           for i in range(4)]
    two = [replace(_run(f"b{i}", {"sparse": ["c17", "c16"], "ppr": [f"c{i}", "c15"]}, f"d{i}"), n_entities=2)
           for i in range(4, 8)]
    result = tune_fusion([TuningSet("dev", one + two, chunk_doc, "recall@1")], {"sparse": 1.0, "ppr": 1.5}, 60, {})
    assert result.ppr_min_entities == 2 and result.dev_after == 1.0
    assert result.weights["ppr"] > 0  # it earns its weight where it helps


def test_overlap_counts_ties_at_the_kth_score() -> None:
    from medgraph.eval.metrics import overlap_at

    exact = {"a": 1.0, "b": 0.5, "c": 0.5, "d": 0.1}
    assert overlap_at(["a", "c"], exact, 2) == 1.0  # c ties b, the exact 2nd
    assert overlap_at(["a", "d"], exact, 2) == 0.5
    assert overlap_at([], exact, 2) == 0.0


def test_convert_shared_gives_the_ids_the_question_files_name(shared_data: Path, tmp_path: Path) -> None:
    from medgraph.eval.convert_shared import convert_shared

    out = tmp_path / "mixed.jsonl"
    counts = convert_shared(shared_data, out, (1, 60), (1, 5))
    assert counts == {"letters": 63, "huatuo": 60, "liver": 5}
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    by_id = {r["doc_id"]: r for r in records}
    assert by_id["Albers"]["language"] == "de" and "Kollegin" in by_id["Albers"]["sections"][0]["text"]
    assert [s["title"] for s in by_id["huatuo-13"]["sections"]] == ["Question", "Answer"]
    assert by_id["huatuo-liver-2"]["language"] == "zh" and "huatuo-61" not in by_id
    # every question of the German- and Chinese-document sets names a document of the default ranges
    full = tmp_path / "full.jsonl"
    convert_shared(shared_data, full, (1, 3000), (1, 300))
    ids = {json.loads(line)["doc_id"] for line in full.read_text(encoding="utf-8").splitlines()}
    for name in ("xl_grascco", "xl_huatuo"):
        for split in ("dev", "test"):
            for q in read_queries(REPO / "data" / "eval" / f"{name}.{split}.jsonl"):
                assert q.relevant <= ids, q.query_id


def test_convert_abstracts_gives_one_corpus_with_the_ids_the_multihop_questions_name(shared_data: Path,
                                                                                     tmp_path: Path) -> None:
    from medgraph.eval.convert_abstracts import abstract_records

    records = list(abstract_records(shared_data))
    by_id = {r["doc_id"]: r for r in records}
    assert len(records) == 10_345 and len(by_id) == len(records)  # PubMedQA, SciFact, NFCorpus, BC5CDR
    assert by_id["bc5cdr-227508"]["title"] == "Naloxone reverses the antihypertensive effect of clonidine."
    assert "clonidine" in by_id["bc5cdr-227508"]["text"] and by_id["bc5cdr-227508"]["source_id"] == "PMID:227508"
    assert by_id["MED-10"]["language"] == "en" and by_id["4983"]["title"].startswith("Microstructural")
    assert [s["title"] for s in by_id[records[0]["doc_id"]]["sections"]][-1] == "Conclusions"
    pubmedqa_order = list(json.loads((shared_data / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8")))
    test_half = {f"pmid-{p}" for p in pubmedqa_order[500:]}
    for split in ("dev", "test"):
        questions = read_queries(REPO / "data" / "eval" / f"multihop.{split}.jsonl")
        assert questions
        for q in questions:
            assert len(q.relevant) >= 2 and q.relevant <= set(by_id), q.query_id
            assert not q.relevant & test_half, q.query_id  # PubMedQA's test half is never written about
