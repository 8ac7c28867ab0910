"""The generator program (``medgraph.generate.program``) as a GEPA task, scored like the engine.

Examples (``evidence_example``): a question, its language and the evidence the service prompts
with (the agent's reranked evidence numbered as the tier numbers it: ``number_evidence`` with the
engine's ``max_evidence`` / ``evidence_chars``), with the numbers of the gold passages among it; or
``answerable: false`` (the gold is a refusal). ``python -m medgraph.eval optimise`` builds them by running the
agent in process over question files with gold documents (``medgraph.eval answers`` format).

``GeneratorMetric`` grounds the reply as the engine does (``ground_text``: a sentence keeps the
[N] that resolve, one without is repaired when a passage supports it, else dropped; ``NO_ANSWER``
or no sentence left is a refusal) and scores
- an answerable question: ½ for citing a gold passage + ½ citation precision (the share of the
  cited passages that are gold); a refusal scores 0;
- an unanswerable one: 1 for a refusal, 0 for an answer.
Its feedback names what went wrong: "no sentence cites a passage", "cites [2], which does not
answer; the answer is in [4]", "[7] names no passage (there are 4)", "sentence dropped, no
passage supports it: ...", "answered, but no passage answers the question: reply NO_ANSWER".

``evaluate_replies`` scores the hand-written prompt (``program=None``) or a program's messages on
the same chat model, through the engine's path (``program_messages`` + ``answer_text``), so the
compiled program, its uncompiled start and the hand-written prompt are compared in one run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import dspy

from medgraph.generate.citations import ground_text
from medgraph.generate.program import GeneratorProgram, program_inputs, program_messages_for
from medgraph.generate.prompt import NumberedEvidence, passage_lines, prompt_messages
from medgraph.generate.reply import STOP, answer_text, is_no_answer
from medgraph.llm.base import ChatParams, Message
from medgraph.optimise.gepa import Scored, feedback_metric

ChatFn = Callable[[list[Message], ChatParams], str]
log = logging.getLogger(__name__)


def evidence_example(query_id: str, question: str, language: str, numbered: NumberedEvidence,
                     gold: Sequence[int], answerable: bool) -> dspy.Example:
    """One example: the program's inputs, the passage lines and texts, the gold passage numbers."""
    return dspy.Example(id=query_id, lang=language, answerable=answerable, gold=sorted(set(gold)),
                        lines=passage_lines(numbered), passages=list(numbered.texts),
                        **program_inputs(question, language, numbered)).with_inputs("evidence", "question", "language")


def example_record(ex: dspy.Example) -> dict[str, Any]:
    return {k: ex[k] for k in ("id", "lang", "answerable", "gold", "lines", "passages", "evidence", "question",
                               "language")}


class GeneratorMetric:
    """Citation of the gold passage, citation precision, refusal where nothing answers (module docstring)."""

    def __init__(self, min_support: float = 0.5) -> None:
        self.min_support = min_support

    def __call__(self, gold: dspy.Example, pred: Any, trace: Any = None, pred_name: str | None = None,
                 pred_trace: Any = None) -> dspy.Prediction:
        return self.score_text(gold, str(getattr(pred, "answer", "") or ""))

    def score_text(self, gold: dspy.Example, text: str) -> dspy.Prediction:
        """The score and its diagnosis, with what the engine would answer (``refused``,
        ``cited_gold``, ``citation_precision``: None for a refusal) as extras."""
        passages: list[str] = list(gold.passages)
        kept, stats = ground_text(text, passages, self.min_support)
        kept = [g for g in kept if not is_no_answer(g.text)]
        cited = sorted({p for g in kept for p in g.passages})
        right = set(gold.gold)
        served = {"refused": not cited, "cited_gold": bool(right & set(cited)),
                  "citation_precision": len(right & set(cited)) / len(cited) if cited else None}
        notes = []
        if stats.unresolved_markers:
            notes.append(f"{stats.unresolved_markers} citation(s) name no passage (there are {len(passages)}: "
                         f"[1] to [{len(passages)}]).")
        if stats.dropped_text:
            notes.append(f"Sentence dropped, no passage supports it: \"{stats.dropped_text[0][:160]}\".")
        if not gold.answerable:
            if not kept:
                return feedback_metric(1.0, "Right: no passage answers this question, and the reply refused.",
                                       **served)
            return feedback_metric(0.0, "Answered, but no passage answers this question (it asks about something "
                                        f"the passages do not state; it cited {_numbers(cited)}): the reply must be "
                                        "only NO_ANSWER. " + " ".join(notes), **served)
        if not kept:
            return feedback_metric(0.0, f"Refused or kept no cited sentence, but passage {_numbers(sorted(right))} "
                                        "answers the question: state what it says and end the sentence with its "
                                        "number. " + " ".join(notes), **served)
        hit = bool(right & set(cited))
        precision = len(right & set(cited)) / len(cited)
        if not hit:
            notes.insert(0, f"Cites {_numbers(cited)}, which does not answer the question; the answer is in "
                            f"{_numbers(sorted(right))}.")
        elif precision < 1:
            notes.insert(0, f"Cites {_numbers(sorted(set(cited) - right))} besides the answering passage "
                            f"{_numbers(sorted(right & set(cited)))}: cite only passages that answer.")
        if stats.repaired:
            notes.append(f"{stats.repaired} sentence(s) had no [N] citation and were matched to a passage by their "
                         "words: end every sentence with its [N].")
        score = 0.5 * hit + 0.5 * precision
        return feedback_metric(score, " ".join(notes) or "Right: every sentence cites the answering passage.",
                               **served)


def _numbers(numbers: Sequence[int]) -> str:
    return ", ".join(f"[{n}]" for n in numbers) if numbers else "nothing"


def evaluate_replies(chat: ChatFn, examples: Sequence[dspy.Example], metric: GeneratorMetric,
                     params: ChatParams, program: GeneratorProgram | None = None) -> Scored:
    """The hand-written prompt (``program=None``) or ``program``'s messages on ``chat``, each reply
    read and grounded as the engine reads it, scored by ``metric``."""
    rows: list[dict[str, Any]] = []
    failures = 0
    if program is not None:
        params = ChatParams(params.max_tokens, params.temperature, (STOP,), params.seed)
    for i, ex in enumerate(examples, 1):
        if i % 25 == 0:
            log.info("scored %d/%d replies (%s)", i, len(examples), "program" if program is not None else "prompt")
        if program is None:
            messages = prompt_messages(ex.question, ex.lang, list(ex.lines))
        else:
            messages = program_messages_for(program, ex.inputs().toDict())
        try:
            reply = chat(messages, params)
        except Exception as exc:  # noqa: BLE001 - a failed call scores 0, counted
            failures += 1
            rows.append({"id": ex.id, "score": 0.0, "feedback": f"the model call failed ({type(exc).__name__})"})
            continue
        result = metric.score_text(ex, answer_text(reply) if program is not None else reply)
        rows.append({"id": ex.id, "lang": ex.lang, "answerable": ex.answerable, "score": float(result.score),
                     "feedback": str(result.feedback), "refused": result.refused, "cited_gold": result.cited_gold,
                     "citation_precision": result.citation_precision})
    score = sum(r["score"] for r in rows) / len(rows) if rows else 0.0
    return Scored(score, len(rows), failures, rows)


def summarise_replies(scored: Scored) -> dict[str, Any]:
    """Mean score and, per language and overall, the engine-level figures of ``evaluate_replies``."""
    def block(rows: list[dict[str, Any]]) -> dict[str, Any]:
        answerable = [r for r in rows if r.get("answerable")]
        unanswerable = [r for r in rows if "answerable" in r and not r["answerable"]]
        precisions = [r["citation_precision"] for r in answerable if r.get("citation_precision") is not None]
        return {
            "n": len(rows), "score": _mean([r["score"] for r in rows]),
            "cited_gold": _mean([float(r["cited_gold"]) for r in answerable]),
            "citation_precision": _mean(precisions),
            "refused_unanswerable": _mean([float(r["refused"]) for r in unanswerable]),
        }
    languages = sorted({r["lang"] for r in scored.rows if "lang" in r})
    return {"overall": {**block(scored.rows), "failures": scored.failures},
            "by_language": {code: block([r for r in scored.rows if r.get("lang") == code]) for code in languages}}


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None
