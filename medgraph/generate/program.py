"""The generator as a DSPy program: answer from numbered evidence, every sentence cited with [N].

Input: the question, its language and the numbered evidence (``NumberedEvidence``). Output: the
chat messages of the program (``program_messages``: DSPy's ``ChatAdapter`` renders its
instructions, which GEPA may have rewritten, its demos and the inputs) and, from the model's reply,
the answer's text (``AnswerField`` drops the adapter's field header as the reply streams and stops
at the next one). ``GroundedEngine`` (``medgraph.generate.engines``) prompts with these messages
instead of the hand-written prompt (``medgraph.generate.prompt.build_messages``) when its tier has
a compiled program (``program:`` in the engine's config, loaded at start); the reply is then
grounded exactly as the hand-written prompt's is: sentences citing passages that exist are kept,
a reply that is only ``NO_ANSWER`` (or keeps no grounded sentence) is a refusal.

``GeneratorProgram`` is also what ``medgraph.optimise`` compiles with GEPA: called as a DSPy module
(``program(evidence=..., question=..., language=...)``, with ``AnswerAdapter``: a reply is read as
the engine reads it) it returns ``answer``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import dspy

from medgraph import lang
from medgraph.generate.prompt import NumberedEvidence, passage_lines
from medgraph.llm.base import Message
from medgraph.llm.programs import load_state

NO_ANSWER = "NO_ANSWER"  # the reply that says no passage answers the question
STOP = "[[ ## completed ## ]]"  # the adapter's end marker: generation stops there


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


_HEADER = re.compile(r"\s*\[\[\s*##\s*\w+\s*##\s*\]\]\s*")


class AnswerField:
    """The answer field's text out of a streamed ``ChatAdapter`` reply.

    A leading ``[[ ## answer ## ]]`` header is dropped (a reply without one is taken whole), and
    the text ends at the next ``[[`` (the next field or the end marker). ``feed`` returns what
    can be passed on now: a trailing ``[`` waits for the next delta (it may start ``[[``).
    """

    def __init__(self) -> None:
        self.pending = ""
        self.started = False
        self.done = False

    def feed(self, delta: str) -> str:
        if self.done:
            return ""
        self.pending += delta
        if not self.started:
            head = self.pending.lstrip()
            if head.startswith("[["):
                match = _HEADER.match(self.pending)
                if match is None:
                    if "]]" not in head and len(head) < 64:
                        return ""  # the header is still arriving
                    self.started = True  # something else in brackets: pass it on as it is
                else:
                    self.pending = self.pending[match.end():]
                    self.started = True
            elif head in ("", "["):
                return ""
            else:
                self.started = True
        cut = self.pending.find("[[")
        if cut >= 0:
            out, self.pending, self.done = self.pending[:cut], "", True
            return out
        keep = 1 if self.pending.endswith("[") else 0
        out, self.pending = self.pending[:len(self.pending) - keep], self.pending[len(self.pending) - keep:]
        return out

    def flush(self) -> str:
        out, self.pending = ("" if self.done else self.pending), ""
        self.done = True
        return out


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


def answer_text(reply: str) -> str:
    """The answer field of a whole reply (``AnswerField`` over one delta)."""
    field = AnswerField()
    return (field.feed(reply) + field.flush()).strip()


def is_no_answer(sentence: str) -> bool:
    """Whether a sentence of the reply is the refusal token (with punctuation or markers around)."""
    return re.sub(r"[\W_]+", "", sentence).upper() == NO_ANSWER.replace("_", "")


# --- saving and loading (medgraph.llm.programs) ---------------------------------------------------

def load_generator(path: str | Path) -> GeneratorProgram:
    """The compiled generator program at ``path`` (``save_program``)."""
    return load_state(GeneratorProgram(), path, "generator")
