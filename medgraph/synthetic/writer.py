"""The synthetic QA factory's model tier: a DSPy program writes the question a passage answers.

Input: the kind of question, the entities' names in the asker's language, the gold sentence and
its passage, the language. Output: the question, or None — then the factory keeps the template's
question (``medgraph.synthetic.factory``; the item's ``method`` says which wrote it).

``ModelQuestions`` runs ``WriteQuestion`` (one ``dspy.Predict``) on any DSPy LM (a configured tier
through ``medgraph.llm.dspy_bridge.chat_lm``: the llama.cpp GGUF here, vLLM on a cluster) and keeps
a reply only when it is one question (ends with "?" or "？", at most ``MAX_CHARS``), in the asked
language (``detect_language``), names at least one of the entities, and does not copy the sentence
(a question that quotes its answer tests nothing). A failed call or a rejected reply is logged and
counted (``rejected``), never raised.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from medgraph import lang
from medgraph.ingest.text import detect_language

log = logging.getLogger(__name__)
MAX_CHARS = 240
KIND_HINTS = {
    "relation": "how the two entities are related, as the sentence reports",
    "finding": "what was found about the entity",
    "recommendation": "what is recommended about the entity",
    "adverse_effects": "the adverse effects (side effects) of the drug",
    "dosage": "the dose of the drug",
}


def _signature() -> Any:
    import dspy

    class WriteQuestion(dspy.Signature):  # type: ignore[misc]  # dspy ships no type hints
        """Write the one question, in the given language, that a clinician would ask and that the
        sentence answers. Name the entities; do not copy the sentence; no answer, no preamble."""

        passage: str = dspy.InputField(desc="the passage the sentence is from")
        sentence: str = dspy.InputField(desc="the sentence that answers the question")
        entities: list[str] = dspy.InputField(desc="the entities to name, as written in the question's language")
        asks_for: str = dspy.InputField(desc="what the question asks for")
        language: str = dspy.InputField(desc="the language of the question")
        question: str = dspy.OutputField(desc="one question ending with a question mark")

    return WriteQuestion


class ModelQuestions:
    """``(kind, names, sentence, passage, language) -> question | None`` on a DSPy LM."""

    def __init__(self, lm: Any) -> None:
        import dspy

        self.lm = lm
        self.program = dspy.Predict(_signature())
        self.written = 0
        self.rejected = 0

    def __call__(self, kind: str, names: Sequence[str], sentence: str, passage: str, language: str) -> str | None:
        import dspy

        try:
            with dspy.context(lm=self.lm):
                out = self.program(passage=passage[:1500], sentence=sentence, entities=list(names),
                                   asks_for=KIND_HINTS.get(kind, kind), language=lang.get_or_pivot(language).name)
            question = checked_question(str(out.question), names, sentence, language)
        except Exception as exc:  # noqa: BLE001 - the template stands in for a failed call
            log.warning("question writer failed (%s); the template's question is kept", exc)
            question = None
        if question is None:
            self.rejected += 1
        else:
            self.written += 1
        return question


def checked_question(text: str, names: Sequence[str], sentence: str, language: str) -> str | None:
    """The model's question when it is usable (see the module docstring), else None."""
    question = " ".join(text.strip().strip('"“”').split())
    if not question or len(question) > MAX_CHARS or not question.endswith(("?", "？")):
        return None
    if question.count("?") + question.count("？") > 1:
        return None
    if detect_language(question, default="") != language:
        return None
    folded = question.casefold()
    if not any(name.casefold() in folded for name in names):
        return None
    if sentence and (sentence.casefold()[:60] in folded or folded.rstrip("?？") in sentence.casefold()):
        return None
    return question
