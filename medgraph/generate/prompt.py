"""The grounded-answer prompt: the question and numbered evidence passages, in the question's language.

Input: the question, its language and the reranked evidence. Output: chat messages telling the
model to answer only from passages [1]..[n] and to cite each statement with its [N] (the
instructions and labels of the question's language pack), plus the ``NumberedEvidence``
(N → candidate) that citations are resolved against.
"""

from __future__ import annotations

from dataclasses import dataclass

from medgraph import lang
from medgraph.llm.base import Message
from medgraph.retrieve.types import Candidate


@dataclass(frozen=True)
class NumberedEvidence:
    """Passage N (1-based) is ``candidates[N - 1]``; ``texts`` are the (cut) passage texts shown."""

    candidates: tuple[Candidate, ...]
    texts: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.candidates)


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit * 0.6 else cut) + " …"


def number_evidence(evidence: list[Candidate], max_passages: int, max_chars: int,
                    min_relevance: float = 0.0, language: str | None = None) -> NumberedEvidence:
    """The usable passages (relevance ≥ ``min_relevance``), at most ``max_passages``; with the
    question's ``language``, passages in it or in the pivot language (English) come first (the model
    answers in the asker's language and a third language is the hardest evidence to read right)."""
    usable = [c for c in evidence if c.chunk is not None and c.relevance >= min_relevance]
    if language is not None:
        usable.sort(key=lambda c: c.chunk is None or c.chunk.language not in (language, lang.PIVOT))  # stable
    usable = usable[:max_passages]
    texts = tuple(_cut(c.chunk.text, max_chars) for c in usable if c.chunk is not None)
    return NumberedEvidence(tuple(usable), texts)


def passage_lines(numbered: NumberedEvidence) -> list[str]:
    """One line per passage as the model sees it: ``[N] title: text``."""
    lines = []
    for n, (cand, text) in enumerate(zip(numbered.candidates, numbered.texts, strict=True), start=1):
        title = cand.chunk.title if cand.chunk is not None and cand.chunk.title else ""
        lines.append(f"[{n}] {title + ': ' if title else ''}{text}")
    return lines


def build_messages(question: str, language: str, numbered: NumberedEvidence) -> list[Message]:
    """The hand-written prompt: the language pack's instructions, the passages, the question."""
    return prompt_messages(question, language, passage_lines(numbered))


def prompt_messages(question: str, language: str, passages: list[str]) -> list[Message]:
    """The hand-written prompt over passage lines (``passage_lines``)."""
    strings = lang.get_or_pivot(language).answer
    user = (f"{strings.evidence_label}:\n" + "\n".join(passages) +
            f"\n\n{strings.question_label}: {question}\n{strings.answer_label}:")
    return [{"role": "system", "content": strings.instructions}, {"role": "user", "content": user}]
