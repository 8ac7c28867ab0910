"""The relevance calibration on saved answer runs: the fit, the threshold, the replay, the CLI."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from medgraph.eval import calibrate as cal
from medgraph.eval.__main__ import main as eval_main
from medgraph.retrieve.rerank import DEFAULT_WEIGHTS, FeatureReranker


def _passage(rng: random.Random, gold: bool, cross: bool, reranker: FeatureReranker) -> dict:
    # gold passages: high dense similarity; others: a high fused rank as often as not
    features = {"dense": rng.uniform(0.85, 0.95) if gold else rng.uniform(0.05, 0.35),
                "lexical": rng.uniform(0.0, 1.0), "entity": rng.choice([0.0, 1.0]),
                "ppr": rng.uniform(0.0, 1.0), "rrf": rng.uniform(0.3, 1.0), "cross_lingual": float(cross)}
    return {"relevance": round(reranker.relevance(features), 4), "features": features, "gold": gold}


def _runs(path: Path, seed: int, reranker: FeatureReranker, n: int = 40) -> Path:
    rng = random.Random(seed)
    records = []
    for i in range(n):
        lang = ("en", "de", "zh")[i % 3]
        answerable = i % 4 != 0
        gold = rng.randrange(3) if answerable else -1
        evidence = [_passage(rng, k == gold, lang != "en", reranker) for k in range(6)]
        records.append({"query_id": f"q{i}", "language": lang, "answerable": answerable, "evidence": evidence})
    path.write_text(json.dumps({"dev": records, "test": records[:5]}))
    return path


@pytest.fixture
def current() -> FeatureReranker:
    return FeatureReranker(cross_lingual_weights={"dense": 10, "lexical": 16, "entity": 6, "bias": -11})


def test_the_fit_finds_the_feature_that_separates_gold_passages(tmp_path: Path, current: FeatureReranker) -> None:
    questions = cal.read_runs(_runs(tmp_path / "a.runs.json", 0, current), "dev") + \
        cal.read_runs(_runs(tmp_path / "b.runs.json", 1, current), "dev")
    scorer = cal.fit(questions)
    for weights in (scorer.same, scorer.cross):
        assert weights["dense"] > 5 * max(abs(weights[f]) for f in ("lexical", "entity", "ppr", "rrf"))
    threshold = cal.choose_threshold(scorer, questions)
    rep = cal.report(scorer, questions, threshold)
    # dense alone separates these passages: every answerable question keeps its gold passage and
    # every unanswerable one is refused, in every (set, language) group
    assert rep["objective"] == 1.0
    assert all(g["usable"] in (None, 1.0) and g["refused"] in (None, 1.0) for g in rep["groups"].values())
    # the hand-set weights lean on lexical overlap, which is noise here
    old = cal.Scorer.from_config({}, {"dense": 10, "lexical": 16, "entity": 6, "bias": -11})
    assert cal.objective(old, questions, 0.2) < 0.9


def test_the_replay_reproduces_the_saved_relevance(tmp_path: Path, current: FeatureReranker) -> None:
    questions = cal.read_runs(_runs(tmp_path / "a.runs.json", 2, current), "dev")
    same = cal.Scorer(dict(current.weights), dict(current.cross_weights))
    assert cal.replay_error(same, questions) <= 1e-3
    assert cal.Scorer.from_config({}, {"dense": 10, "lexical": 16, "entity": 6, "bias": -11}).same == DEFAULT_WEIGHTS
    other = cal.Scorer.from_config({"bias": -2.0}, {})
    assert cal.replay_error(other, questions) > 0.1


def test_decisions_count_gold_refusals_and_the_first_passage() -> None:
    import numpy as np

    q = cal.Question("s", "q1", "de", True, np.zeros((3, len(cal.FEATURES))), np.array([True, True, False]),
                     np.array([False, True, False]), np.zeros(3))
    scorer = cal.Scorer({"bias": 0.0}, {"bias": 1.0})  # same-language 0.5, cross 0.73
    assert cal.decisions(scorer, [q], 0.6) == {"usable": [True], "first": [False], "refused": []}
    assert cal.decisions(scorer, [q], 0.8) == {"usable": [False], "first": [False], "refused": []}
    unanswerable = cal.Question("s", "q2", "de", False, q.features, q.cross, np.zeros(3, dtype=bool), q.relevance)
    assert cal.decisions(scorer, [unanswerable], 0.8)["refused"] == [True]
    assert cal.decisions(scorer, [unanswerable], 0.6)["refused"] == [False]


def test_the_threshold_is_the_middle_of_the_best_range() -> None:
    import numpy as np

    def question(i: int, answerable: bool, rel_feature: float) -> cal.Question:
        return cal.Question("s", f"q{i}", "en", answerable, np.array([[rel_feature, 0, 0, 0, 0]]),
                            np.array([False]), np.array([answerable]), np.zeros(1))

    # relevance = the dense feature itself through a steep sigmoid around 0.5
    scorer = cal.Scorer({"bias": -20.0, "dense": 40.0}, {})
    qs = [question(0, True, 0.8), question(1, False, 0.2)]
    t = cal.choose_threshold(scorer, qs, grid=[0.01, 0.1, 0.3, 0.5, 0.7, 0.99])
    # relevances ≈ 1.0 and 0.0: every grid value in (0.0003, 0.9999) separates; the middle one
    assert t == 0.5


def test_the_cli_fits_on_dev_and_only_replays_heldout_runs(tmp_path: Path, current: FeatureReranker,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _runs(tmp_path / "a.runs.json", 0, current), _runs(tmp_path / "b.runs.json", 1, current)
    held = _runs(tmp_path / "held.runs.json", 3, current)
    config = Path(__file__).resolve().parents[2] / "configs" / "local.yaml"
    assert eval_main(["calibrate", "--runs", str(a), str(b), "--heldout", str(held), "--config", str(config)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["questions"] == 80 and out["sets"] == ["a", "b"]
    assert out["heldout"]["fitted"]["groups"]["held/en"] == {**out["heldout"]["fitted"]["groups"]["held/en"], "answerable": 1, "unanswerable": 1}  # its test split: q0, q3
    assert set(out["leave_one_set_out"]) == {"a", "b"}
    assert out["overrides"][2] == f"answer.min_relevance={out['fitted']['min_relevance']}"
    with pytest.raises(SystemExit, match="dev runs only"):
        eval_main(["calibrate", "--runs", str(a), "--split", "test", "--config", str(config)])
    with pytest.raises(ValueError, match="no 'train' split"):
        eval_main(["calibrate", "--runs", str(a), "--split", "train", "--config", str(config)])


def test_the_ascent_only_keeps_changes_that_raise_the_replayed_decision(tmp_path: Path, current: FeatureReranker) -> None:
    questions = cal.read_runs(_runs(tmp_path / "a.runs.json", 0, current), "dev") + \
        cal.read_runs(_runs(tmp_path / "b.runs.json", 1, current), "dev")
    start = cal.Scorer.from_config({}, {"dense": 10, "lexical": 16, "entity": 6, "bias": -11})
    before = cal.objective(start, questions, 0.2)
    ascended, t = cal.ascend(questions, start, 0.2)
    after = cal.objective(ascended, questions, t)
    assert after > before  # dense separates these passages; the lexical weight of 16 hid it
    assert ascended.cross["dense"] > start.cross["dense"] or ascended.cross["lexical"] < start.cross["lexical"]
    assert cal.ascend(questions, ascended, t)[0] == ascended  # a fixed point stays put
    rows = cal.leave_one_set_out(questions, 1.0, start, 0.2)
    assert set(rows["a"]) == {"fitted", "current", "ascent"}
