"""The generator as a DSPy program: answer from numbered evidence, every sentence cited with [N].

Input: the question, its language and the numbered evidence (``NumberedEvidence``). Output: the
chat messages of the program (``program_messages``: DSPy's ``ChatAdapter`` renders its
instructions, which GEPA may have rewritten, its demos and the inputs) and, from the model's reply,
the answer's text (``medgraph.generate.reply.AnswerField`` drops the adapter's field header as the
reply streams and stops at the next one). ``GroundedEngine`` (``medgraph.generate.engines``) prompts with these messages
instead of the hand-written prompt (``medgraph.generate.prompt.build_messages``) when its tier has
a compiled program (``program:`` in the engine's config, loaded at start); the reply is then
grounded exactly as the hand-written prompt's is: sentences citing passages that exist are kept,
a reply that is only ``NO_ANSWER`` (or keeps no grounded sentence) is a refusal.

``GeneratorProgram`` is also what ``medgraph.optimise`` compiles with GEPA: called as a DSPy module
(``program(evidence=..., question=..., language=...)``, with ``AnswerAdapter``: a reply is read as
the engine reads it) it returns ``answer``.

Needs DSPy (the ``llm`` extra): the engines import this module only for a tier that has a program.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dspy

from medgraph import lang
from medgraph.generate.prompt import NumberedEvidence, passage_lines
from medgraph.generate.reply import answer_text
from medgraph.llm.base import Message
from medgraph.llm.programs import load_state


class AnswerFromEvidence(dspy.Signature):  # type: ignore[misc]  # dspy ships no type hints
    """Answer the medical question using only the numbered evidence passages.

    Every sentence of the answer states what one passage says and ends with that passage's number
    in brackets, for example [2]. Answer in the requested language, in a few sentences. When no
    passage answers the question, reply only with NO_ANSWER.
    """

    evidence: str = dspy.InputField(desc="numbered passages, one per line: '[N] title: text'")
    question: str = dspy.InputField(desc="the user's question")
    language: str = dspy.InputField(desc="the language to answer in")
    answer: str = dspy.OutputField(desc="the answer, every sentence ending with its [N] citation; or NO_ANSWER")


class GeneratorProgram(dspy.Module):  # type: ignore[misc]
    """One LM call: ``AnswerFromEvidence`` with ``Predict``."""

    def __init__(self) -> None:
        super().__init__()
        self.respond = dspy.Predict(AnswerFromEvidence)

    def forward(self, evidence: str, question: str, language: str) -> dspy.Prediction:
        return self.respond(evidence=evidence, question=question, language=language)


def program_inputs(question: str, language: str, numbered: NumberedEvidence) -> dict[str, str]:
    """The program's inputs: the passages as the hand-written prompt shows them, the language's name."""
    return {"evidence": "\n".join(passage_lines(numbered)), "question": question,
            "language": lang.get_or_pivot(language).name}


def program_messages(program: GeneratorProgram, question: str, language: str,
                     numbered: NumberedEvidence) -> list[Message]:
    """The chat messages DSPy's ``ChatAdapter`` builds for ``program`` on these inputs."""
    return program_messages_for(program, program_inputs(question, language, numbered))


def program_messages_for(program: GeneratorProgram, inputs: dict[str, str]) -> list[Message]:
    """``program_messages`` from the program's inputs (``program_inputs``)."""
    predictor = program.respond
    messages = dspy.ChatAdapter().format(predictor.signature, list(predictor.demos), inputs)
    return [{"role": m["role"], "content": str(m["content"])} for m in messages]


class AnswerAdapter(dspy.ChatAdapter):  # type: ignore[misc]
    """DSPy's chat adapter reading a reply as the engine reads it: a reply without the
    ``[[ ## answer ## ]]`` header is the answer as it stands (``answer_text``), so GEPA scores
    what the service would serve, not whether a small model wrote the header."""

    def __init__(self) -> None:
        super().__init__(use_json_adapter_fallback=False)

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        try:
            return dict(super().parse(signature, completion))
        except Exception:  # noqa: BLE001 - any parse failure: read it as the engine does
            if list(signature.output_fields) != ["answer"]:
                raise
            return {"answer": answer_text(completion)}


# --- saving and loading (medgraph.llm.programs) ---------------------------------------------------

def load_generator(path: str | Path) -> GeneratorProgram:
    """The compiled generator program at ``path`` (``save_program``)."""
    return load_state(GeneratorProgram(), path, "generator")
