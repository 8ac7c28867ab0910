"""The ``Generator`` interface and the answer records every generation tier returns.

Input: the question, its ``QueryAnalysis`` and the reranked evidence (``Candidate`` with chunks).
Output: ``Answer`` — text with inline ``[N]`` markers (after an optional uncited ``lead`` line), the ``Citation`` each N resolves to
(document title, source ID, section path, page, snippet), a refusal flag, and the disclaimer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from medgraph.retrieve.types import Candidate, QueryAnalysis

DISCLAIMERS = {
    "en": "This answer is generated from the indexed literature for information only and is not medical "
          "advice. Consult a qualified health professional for diagnosis or treatment.",
    "de": "Diese Antwort wurde aus der indexierten Literatur erzeugt, dient nur der Information und ist keine "
          "medizinische Beratung. Wenden Sie sich für Diagnose oder Behandlung an medizinisches Fachpersonal.",
    "zh": "本回答根据已索引的文献生成，仅供参考，不构成医疗建议。诊断或治疗请咨询合格的医疗专业人员。",
}
REFUSALS = {
    "en": "I could not find evidence in the indexed corpus that answers this question, so I will not guess.",
    "de": "Ich habe im indexierten Korpus keine Belege gefunden, die diese Frage beantworten, und rate deshalb nicht.",
    "zh": "在已索引的语料中没有找到能够回答该问题的证据，因此不作推测。",
}


def disclaimer(language: str) -> str:
    return DISCLAIMERS.get(language, DISCLAIMERS["en"])


def refusal(language: str) -> str:
    return REFUSALS.get(language, REFUSALS["en"])


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
    language: str = "en"
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
