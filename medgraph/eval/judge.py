"""RAGAS's judged answer metrics, with a configured engine as the judge (our implementation of
the published definitions; the judge is named in the output).

    python -m medgraph.eval answers ... --judge ENGINE      (an engine of ``tiers.engines``)

- ``faithfulness``: the share of the answer's statements (its quoted sentences, markers removed)
  that the judge finds supported by the passages the answer cites (``Supported``: one verdict per
  statement);
- ``answer_relevancy``: the mean cosine, in the configured dense embedding, between the question
  and ``questions_per_answer`` questions the judge writes back from the answer (``AskBack``):
  an answer beside the point gives questions about something else;
- ``judged_context_precision``: rank-weighted precision of the top ``CONTEXT_K`` evidence passages,
  a passage counting when the judge finds it useful for answering the question (``Useful``; given
  the reference answer where the question file has one).

Each judge call is one ``dspy.Predict`` on the engine (``medgraph.llm.dspy_bridge.chat_lm``); a call
that fails or a verdict that does not parse counts as no verdict, and a metric with no verdict at
all is None (``judge_failures`` counts them). A refusal has no statements: only its context
precision is judged.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from medgraph.eval.metrics import CONTEXT_K, rank_weighted_precision

log = logging.getLogger(__name__)
_MARKER = re.compile(r"\s*\[\d+\]")
Embed = Callable[[list[str]], Any]  # texts -> one row per text


def _programs() -> tuple[Any, Any, Any]:
    import dspy

    class Supported(dspy.Signature):  # type: ignore[misc]  # dspy ships no type hints
        """Is the statement supported by the passages (stated or directly implied by them)?"""

        passages: str = dspy.InputField()
        statement: str = dspy.InputField()
        supported: bool = dspy.OutputField(desc="true only when the passages support the statement")

    class AskBack(dspy.Signature):  # type: ignore[misc]
        """Write the question that this answer answers, in the answer's language."""

        answer: str = dspy.InputField()
        question: str = dspy.OutputField()

    class Useful(dspy.Signature):  # type: ignore[misc]
        """Is the passage useful for answering the question (it states what the answer needs)?"""

        question: str = dspy.InputField()
        reference: str = dspy.InputField(desc="a reference answer, or empty")
        passage: str = dspy.InputField()
        useful: bool = dspy.OutputField()

    return dspy.Predict(Supported), dspy.Predict(AskBack), dspy.Predict(Useful)


@dataclass
class Judge:
    """The judged metrics on one DSPy LM; ``name`` says which engine and model judged."""

    lm: Any
    name: str
    embed: Embed | None = None
    questions_per_answer: int = 2
    failures: int = 0
    _programs: tuple[Any, Any, Any] = field(default_factory=_programs, repr=False)

    def _call(self, program: Any, **inputs: str) -> Any:
        import dspy

        try:
            with dspy.context(lm=self.lm):
                return program(**inputs)
        except Exception as exc:  # noqa: BLE001 - no verdict; counted, never raised
            self.failures += 1
            log.debug("judge call failed: %s", exc)
            return None

    def _verdict(self, out: Any, name: str) -> bool | None:
        value = getattr(out, name, None) if out is not None else None
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "yes", "false", "no"):
            return value.strip().lower() in ("true", "yes")
        if out is not None:
            self.failures += 1
        return None

    def faithfulness(self, statements: Sequence[str], passages: Sequence[str]) -> float | None:
        supported, context = _Mean(), "\n\n".join(f"[{i}] {p}" for i, p in enumerate(passages, 1))
        for statement in statements:
            supported.add(self._verdict(self._call(self._programs[0], passages=context, statement=statement),
                                        "supported"))
        return supported.value()

    def answer_relevancy(self, question: str, answer: str) -> float | None:
        if self.embed is None or not answer.strip():
            return None
        asked = []
        for _ in range(self.questions_per_answer):
            out = self._call(self._programs[1], answer=answer)
            text = str(getattr(out, "question", "") or "").strip() if out is not None else ""
            if text:
                asked.append(text)
        if not asked:
            return None
        vectors = np.asarray(self.embed([question, *asked]), dtype=np.float64)
        norms = np.linalg.norm(vectors, axis=1)
        norms[norms == 0] = 1.0
        unit = vectors / norms[:, None]
        return float(np.mean(unit[1:] @ unit[0]))

    def context_precision(self, question: str, reference: str, passages: Sequence[str]) -> float | None:
        useful = [self._verdict(self._call(self._programs[2], question=question, reference=reference, passage=p),
                                "useful") for p in passages[:CONTEXT_K]]
        if not any(v is not None for v in useful):
            return None
        return rank_weighted_precision([bool(v) for v in useful])

    def score(self, question: str, answer: Any, evidence: Sequence[Any], reference: str = "") -> dict[str, float | None]:
        """The judged metrics of one answer (``medgraph.generate.base.Answer``) over its evidence."""
        texts = {c.chunk_id: c.chunk.text for c in evidence if c.chunk is not None}
        out: dict[str, float | None] = {"judged_context_precision": self.context_precision(
            question, reference, [texts[c.chunk_id] for c in evidence if c.chunk_id in texts])}
        if answer.refused:
            return {**out, "faithfulness": None, "answer_relevancy": None}
        statements = [_MARKER.sub("", s).strip() for s, _ in answer.sentences] or [_MARKER.sub("", answer.content)]
        cited = [texts[c.chunk_id] for c in answer.citations if c.chunk_id in texts]
        out["faithfulness"] = self.faithfulness([s for s in statements if s], cited or list(texts.values())[:CONTEXT_K])
        out["answer_relevancy"] = self.answer_relevancy(question, " ".join(statements))
        return out


class _Mean:
    def __init__(self) -> None:
        self.values: list[bool] = []

    def add(self, value: bool | None) -> None:
        if value is not None:
            self.values.append(value)

    def value(self) -> float | None:
        return sum(self.values) / len(self.values) if self.values else None
