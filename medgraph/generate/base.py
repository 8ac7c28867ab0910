"""The ``Generator`` interface and the answer records every generation tier returns.

Input: the question, its ``QueryAnalysis`` and the reranked evidence (``Candidate`` with chunks).
Output: ``Answer`` — text with inline ``[N]`` markers (after an optional uncited ``lead`` line), the ``Citation`` each N resolves to
(document title, source ID, section path, page, snippet), a refusal flag, and the disclaimer.
The disclaimer and the no-evidence refusal are those of the answer's language pack
(``AnswerStrings``); ``DISCLAIMERS`` and ``REFUSALS`` show them per registered language code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from medgraph import lang
from medgraph.lang.sections.answer import AnswerStrings
from medgraph.retrieve.types import Candidate, QueryAnalysis


class PackStrings(Mapping[str, str]):
    """A live read-only view, language code -> one string of each registered pack's answer section."""

    def __init__(self, read: Callable[[AnswerStrings], str]) -> None:
        self._read = read

    def __getitem__(self, code: str) -> str:
        if not lang.is_known(code):
            raise KeyError(code)
        return self._read(lang.get(code).answer)

    def __iter__(self) -> Iterator[str]:
        return iter(lang.codes())

    def __len__(self) -> int:
        return len(lang.codes())


DISCLAIMERS = PackStrings(lambda answer: answer.disclaimer)  # appended to every medical answer
REFUSALS = PackStrings(lambda answer: answer.refusal)  # the reply when the evidence does not answer


def disclaimer(language: str) -> str:
    """The disclaimer in ``language`` (an unknown language: the pivot's)."""
    return lang.get_or_pivot(language).answer.disclaimer


def refusal(language: str) -> str:
    """The no-evidence refusal in ``language`` (an unknown language: the pivot's)."""
    return lang.get_or_pivot(language).answer.refusal


@dataclass(frozen=True)
class Citation:
    number: int
    chunk_id: str
    doc_id: str
    title: str
    source_id: str
    section_path: list[str]
    page: int | None
    snippet: str
    relevance: float = 0.0


@dataclass
class Answer:
    content: str
    citations: list[Citation] = field(default_factory=list)
    refused: bool = False
    language: str = lang.PIVOT
    model_used: str = ""
    disclaimer: str = ""
    sentences: list[tuple[str, int]] = field(default_factory=list)  # (sentence, citation number)
    # generated answers: sentences kept with their own citation, repaired, dropped; markers removed
    grounding: dict[str, int] = field(default_factory=dict)
    lead: str = ""  # extractive answers: a line in the asker's language before quotes in other languages

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Generator(Protocol):
    name: str

    def generate(self, question: str, analysis: QueryAnalysis, evidence: list[Candidate]) -> Answer: ...
