"""Short-term memory, the DSPy tier of the follow-up rewriter: the program's output is used, the
window is respected, and any failure falls back to the rules. dspy comes with the llm-test extra
(make test): without it these tests skip, or fail under ``MEDGRAPH_REQUIRE_LLM=1`` (CI)."""

from __future__ import annotations

import pytest

from medgraph.agent.rewrite import DSPyRewriter, Rewrite, RuleRewriter, Turn, make_rewriter
from medgraph.config.models import MedGraphConfig, RewriterConfig
from tests.helpers import require_module
from tests.unit.test_rewrite import H_EN, METFORMIN

dspy = require_module("dspy", "MEDGRAPH_REQUIRE_LLM")
DummyLM = dspy.utils.DummyLM


def test_dspy_rewriter_uses_the_program_output() -> None:
    lm = DummyLM([{"standalone_question": "What are the side effects of metformin in children?"}])
    result = DSPyRewriter(lm).rewrite("And in children?", H_EN, "en")
    assert result == Rewrite("What are the side effects of metformin in children?", True, "dspy", (METFORMIN,))
    prompt = lm.history[-1]["messages"][-1]["content"]
    assert "user: What are the side effects of metformin?" in prompt and "And in children?" in prompt


def test_dspy_rewriter_unchanged_question() -> None:
    lm = DummyLM([{"standalone_question": "What is gout?"}])
    assert DSPyRewriter(lm).rewrite("What is gout?", H_EN, "en") == Rewrite("What is gout?", False, "dspy")


def test_dspy_rewriter_sees_only_the_window() -> None:
    lm = DummyLM([{"standalone_question": "x?"}])
    turns = [Turn("user", f"question {i}") for i in range(8)]
    DSPyRewriter(lm, window=5).rewrite("And then?", turns, "en")
    prompt = lm.history[-1]["messages"][-1]["content"]
    assert "question 3" in prompt and "question 2" not in prompt


class BrokenLM(dspy.BaseLM):  # type: ignore[misc]
    """An LM whose endpoint is down."""

    def __init__(self) -> None:
        super().__init__(model="broken")

    def forward(self, prompt: object = None, messages: object = None, **kwargs: object) -> object:
        raise ConnectionError("endpoint down")


@pytest.mark.parametrize("lm", [BrokenLM(), DummyLM([{"answer": "no such field"}]), DummyLM([{"standalone_question": " "}])],
                         ids=["call-fails", "unparsable", "empty"])
def test_dspy_rewriter_falls_back_to_the_rules(lm: object) -> None:
    result = DSPyRewriter(lm).rewrite("What are its side effects?", H_EN[:1], "en")
    assert result == Rewrite("What are the side effects of metformin?", True, "rules", (METFORMIN,))


def test_make_rewriter_and_config() -> None:
    assert isinstance(make_rewriter(RewriterConfig()), RuleRewriter)
    cfg = RewriterConfig(kind="dspy", engine="gemma")
    with pytest.raises(ValueError, match="DSPy LM"):
        make_rewriter(cfg)
    assert isinstance(make_rewriter(cfg, DummyLM([])), DSPyRewriter)
    with pytest.raises(ValueError, match="memory.rewriter.engine"):
        MedGraphConfig.model_validate({"memory": {"rewriter": {"kind": "dspy", "engine": "nope"}}})
    assert MedGraphConfig().memory.rewriter.kind == "rules" and MedGraphConfig().memory.rewriter.window == 5


