"""Community summaries: extractive (offline tier) and a DSPy summariser (model tier).

Input: ``SummaryInput`` — a community, its central entities (name, category, weighted degree
inside the community) and its evidence (chunks mentioning several members, with the members'
mention spans). Output: the community with ``title``, ``summary``, ``citations`` and
``top_entities`` filled in.

Offline tier (``ExtractiveSummariser``): the most central entities by name and category, then the
most representative sentences of the evidence — those naming the most distinct members, at most
one per chunk and two per document — each followed by its ``[n]`` citation (chunk, document,
section, page, the sentence itself).

Model tier (``LLMSummariser``): the DSPy program ``CommunitySummariser`` writes the summary from
the same entities and numbered sentences, with any DSPy LM (``dspy.LM`` over the configured
engine; tests use ``dspy.utils.DummyLM``). The citations stay the extractive ones; an answer whose
``[n]`` markers cite nothing, or cite a number that does not exist, is replaced by the extractive
summary (logged), so every marker of a stored summary resolves.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from medgraph.graph.communities import Citation, Community
from medgraph.schemas import Chunk, Mention

log = logging.getLogger(__name__)
MARKER = re.compile(r"\[(\d+)\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*")
MAX_SENTENCE_CHARS = 320


@dataclass(frozen=True)
class CentralEntity:
    mesh_id: str
    name: str
    category: str
    weight: float  # weighted degree inside the community


@dataclass(frozen=True)
class Evidence:
    chunk: Chunk
    mentions: tuple[Mention, ...]  # mentions of community members in the chunk


@dataclass
class SummaryInput:
    community: Community
    entities: list[CentralEntity]  # most central first
    evidence: list[Evidence] = field(default_factory=list)


class Summariser(Protocol):
    name: str

    def summarise(self, item: SummaryInput) -> Community: ...


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (Latin and CJK sentence ends)."""
    spans, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


@dataclass(frozen=True)
class _Scored:
    score: tuple[int, float, int]
    evidence: Evidence
    sentence: str


def representative_sentences(item: SummaryInput, limit: int, per_doc: int = 2) -> list[tuple[Evidence, str]]:
    """The sentences naming the most distinct members (then the most central ones), best first."""
    weight = {e.mesh_id: e.weight for e in item.entities}
    scored: list[_Scored] = []
    for order, ev in enumerate(item.evidence):
        best: _Scored | None = None
        for start, end in sentence_spans(ev.chunk.text):
            inside = {m.mesh_id for m in ev.mentions if m.mesh_id and start <= m.start < end}
            if not inside:
                continue
            sentence = _clip(" ".join(ev.chunk.text[start:end].split()))
            cand = _Scored((len(inside), sum(weight.get(m, 0.0) for m in inside), -order), ev, sentence)
            if best is None or cand.score > best.score:
                best = cand
        if best is not None:
            scored.append(best)
    scored.sort(key=lambda s: s.score, reverse=True)
    chosen: list[tuple[Evidence, str]] = []
    docs: dict[str, int] = {}
    for s in scored:
        doc = s.evidence.chunk.doc_id
        if docs.get(doc, 0) >= per_doc:
            continue
        docs[doc] = docs.get(doc, 0) + 1
        chosen.append((s.evidence, s.sentence))
        if len(chosen) == limit:
            break
    return chosen


def _clip(sentence: str, limit: int = MAX_SENTENCE_CHARS) -> str:
    """A long sentence cut at a word boundary, marked with " …" (its start still quotes the chunk)."""
    if len(sentence) <= limit:
        return sentence
    cut = sentence[:limit].rsplit(" ", 1)[0] if " " in sentence[:limit] else sentence[:limit]
    return cut + " …"


def _citation(number: int, ev: Evidence, sentence: str) -> Citation:
    c = ev.chunk
    return Citation(number, c.chunk_id, c.doc_id, sentence, c.title, c.source_id, tuple(c.section_path), c.page)


def _title(entities: list[CentralEntity]) -> str:
    names = [e.name for e in entities[:3]]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else ""


class ExtractiveSummariser:
    """The offline tier; see the module docstring."""

    name = "extractive"

    def __init__(self, entities: int = 8, sentences: int = 4) -> None:
        if entities < 1 or sentences < 1:
            raise ValueError("need at least one entity and one sentence per summary")
        self.entities, self.sentences = entities, sentences

    def summarise(self, item: SummaryInput) -> Community:
        top = item.entities[: self.entities]
        picked = representative_sentences(item, self.sentences)
        citations = [_citation(i, ev, sentence) for i, (ev, sentence) in enumerate(picked, 1)]
        listed = ", ".join(f"{e.name} ({e.category or 'Other'})" for e in top)
        parts = [f"{item.community.size} entities that co-occur in the corpus; most central: {listed}."]
        parts += [f"{c.sentence} [{c.number}]" for c in citations]
        return replace(
            item.community, title=_title(top), summary=" ".join(parts), citations=citations,
            top_entities=[{"mesh_id": e.mesh_id, "name": e.name, "category": e.category} for e in top],
            summariser=self.name,
        )


def markers_resolve(summary: str, citations: list[Citation]) -> bool:
    """True when the summary has at least one ``[n]`` marker and each names a citation."""
    numbers = {int(n) for n in MARKER.findall(summary)}
    return bool(numbers) and numbers <= {c.number for c in citations}


def _program() -> Any:
    import dspy

    class SummariseCommunity(dspy.Signature):  # type: ignore[misc]
        """Summarise the common theme of a group of medical entities that co-occur in a corpus.
        Use only the numbered evidence sentences and cite each claim with its [n] markers."""

        entities: str = dspy.InputField(desc="the most central entities: name (category)")
        evidence: str = dspy.InputField(desc="numbered evidence sentences, one per line: [n] sentence")
        title: str = dspy.OutputField(desc="a short title of the theme")
        summary: str = dspy.OutputField(desc="2-5 sentences; every claim followed by [n] markers")

    class CommunitySummariser(dspy.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.write = dspy.Predict(SummariseCommunity)

        def forward(self, entities: str, evidence: str) -> Any:
            return self.write(entities=entities, evidence=evidence)

    return CommunitySummariser()


class LLMSummariser:
    """The model tier: a DSPy program over any DSPy LM; see the module docstring."""

    def __init__(self, lm: Any, name: str = "llm", entities: int = 8, sentences: int = 6) -> None:
        self.lm, self.name = lm, name
        self.extractive = ExtractiveSummariser(entities, sentences)
        self.program = _program()

    def summarise(self, item: SummaryInput) -> Community:
        import dspy

        base = self.extractive.summarise(item)
        if not base.citations:
            return base
        entities = "; ".join(f"{e['name']} ({e['category'] or 'Other'})" for e in base.top_entities)
        evidence = "\n".join(f"[{c.number}] {c.sentence}" for c in base.citations)
        try:
            with dspy.context(lm=self.lm):
                out = self.program(entities=entities, evidence=evidence)
            title, summary = str(out.title).strip(), " ".join(str(out.summary).split())
        except Exception as exc:  # noqa: BLE001 - the extractive summary stands in for a failed call
            log.warning("summariser %s failed on %s (%s); kept the extractive summary",
                        self.name, item.community.community_id, exc)
            return base
        if not summary or not markers_resolve(summary, base.citations):
            log.warning("summariser %s cited no valid [n] for %s; kept the extractive summary",
                        self.name, item.community.community_id)
            return base
        return replace(base, title=title or base.title, summary=summary, summariser=self.name)
