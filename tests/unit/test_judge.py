"""RAGAS's judged metrics (``medgraph.eval.judge``): the arithmetic over the judge's verdicts, what
the judge is shown, and how missing verdicts count. The judge here is DSPy's scripted ``DummyLM``
(a judge model is an LLM the tests cannot rely on); the embedding is the real offline hashing one.
The judge runs against the real GGUF engine in tests/integration/test_synthesise.py."""

from __future__ import annotations

from dspy.utils import DummyLM

from medgraph.config.models import EmbeddingConfig
from medgraph.embed import make_embedder
from medgraph.eval.judge import Judge
from medgraph.generate.base import Answer, Citation
from medgraph.retrieve.types import Candidate
from medgraph.schemas import Chunk

EVIDENCE = "Metformin caused diarrhoea in 12% of patients; no lactic acidosis was seen."


def _cand(cid: str, text: str) -> Candidate:
    return Candidate(cid, 1.0, chunk=Chunk(cid, f"d-{cid}", 0, text, [], "p", text, 10, "en"))


def _answer(*sentences: str) -> Answer:
    return Answer(" ".join(f"{s} [1]" for s in sentences),
                  [Citation(1, "a", "d-a", "T", "d-a", [], None, "", 0.9)],
                  sentences=[(s, 1) for s in sentences])


def test_an_answer_its_evidence_contradicts_scores_low_on_faithfulness() -> None:
    embed = make_embedder(EmbeddingConfig(dense="hashing")).embed_query_dense
    lm = DummyLM([{"supported": "false"}, {"supported": "true"}, {"question": "Does metformin cause diarrhoea?"},
                  {"question": "How often does metformin cause diarrhoea?"}])
    judge = Judge(lm, "scripted", embed=embed)
    out = judge.faithfulness(["Metformin often causes lactic acidosis.", "Diarrhoea occurred in 12%."], [EVIDENCE])
    assert out == 0.5  # one of two statements supported
    shown = lm.history[0]["messages"][-1]["content"]
    assert EVIDENCE in shown and "lactic acidosis" in shown
    relevancy = judge.answer_relevancy("Does metformin cause diarrhoea?", "Diarrhoea occurred in 12%.")
    assert relevancy is not None and relevancy > 0.5  # the questions written back are the question asked


def test_context_precision_is_rank_weighted_and_a_refusal_has_no_statements() -> None:
    lm = DummyLM([{"useful": "false"}, {"useful": "true"}, {"useful": "true"}])
    judge = Judge(lm, "scripted")
    out = judge.score("Does metformin cause diarrhoea?", Answer("No answer.", refused=True),
                      [_cand("x", "Unrelated."), _cand("a", EVIDENCE), _cand("b", EVIDENCE)])
    assert out["judged_context_precision"] == (1 / 2 + 2 / 3) / 2
    assert out["faithfulness"] is None and out["answer_relevancy"] is None


def test_no_verdict_counts_as_a_failure_not_a_score() -> None:
    judge = Judge(DummyLM([{"verdict": "maybe"}] * 4), "scripted")
    assert judge.faithfulness(["Metformin causes diarrhoea."], [EVIDENCE]) is None
    assert judge.failures >= 1
    answered = judge.score("q?", _answer("Diarrhoea occurred in 12%."), [_cand("a", EVIDENCE)])
    assert answered["faithfulness"] is None and answered["answer_relevancy"] is None  # no embedder given
