"""Reading a model's reply in DSPy's chat format: the answer field, and the refusal token.

``AnswerField`` takes the ``answer`` field's text out of a streamed reply (the ``[[ ## answer ## ]]``
header dropped, the text ending at the next ``[[``); ``answer_text`` does it for a whole reply;
``is_no_answer`` tells a sentence that is only the refusal token ``NO_ANSWER``. No DSPy here: the
engines read replies with it whether or not DSPy is installed (``medgraph.generate.program`` builds
the messages and needs it).
"""

from __future__ import annotations

import re

NO_ANSWER = "NO_ANSWER"  # the reply that says no passage answers the question
STOP = "[[ ## completed ## ]]"  # the chat format's end marker: generation stops there


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


def answer_text(reply: str) -> str:
    """The answer field of a whole reply (``AnswerField`` over one delta)."""
    field = AnswerField()
    return (field.feed(reply) + field.flush()).strip()


def is_no_answer(sentence: str) -> bool:
    """Whether a sentence of the reply is the refusal token (with punctuation or markers around)."""
    return re.sub(r"[\W_]+", "", sentence).upper() == NO_ANSWER.replace("_", "")
