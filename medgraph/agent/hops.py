"""Hop-by-hop retrieval of a planned question (``medgraph.agent.plan``) and its verification.

Each hop's sub-query is retrieved in order. A hop that a later one refers to (``#N``) gets a
sub-answer: the entity its best passages name that the question does not (``Retriever.
bridge_entities``: rare, high-ranked entities first). The later hop's text has ``#N`` replaced by
that entity's name in the question's language, and the entity seeds its PPR path — the graph
walks from the bridge to the passages that mention it, whatever the question's language.

``merge`` puts the whole question's ranking and every hop's into one list (RRF), so that each hop's
best passages reach the numbered evidence; ``verify`` says which hops have a usable passage. The
agent (``medgraph.agent.graph``) and the retrieval benchmark (``medgraph.eval.retrieval``) both run
these functions: what is measured is what is served.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from medgraph.agent.plan import REF, Plan, SubQuery
from medgraph.generate.base import Answer, Citation
from medgraph.retrieve.fusion import rrf
from medgraph.retrieve.types import Candidate, QueryAnalysis


@dataclass
class Hop:
    number: int  # 1-based, as in #N
    planned: str  # the sub-query with its #N references
    text: str = ""  # as retrieved: references filled in
    candidates: list[Candidate] = field(default_factory=list)
    answer_id: str | None = None  # the entity that fills #number in later hops
    answer: str | None = None  # its name in the question's language
    alternatives: list[str] = field(default_factory=list)  # the next-best bridge entities
    # the entities of the later hops that ask about its sub-answer (their own words, #N left out):
    # a sub-answer connected to them in the graph comes first (``Retriever.bridge_entities``)
    toward: tuple[str, ...] = ()
    # its passages that can support it: those naming the sub-answers it rests on (all, without #N)
    grounded: list[str] = field(default_factory=list)
    supported: bool | None = None  # verify(): a grounded passage among the usable evidence
    analysis: QueryAnalysis | None = None  # of ``text``, as retrieved (the hop's own answer is composed with it)

    def to_dict(self) -> dict[str, Any]:
        return {"hop": self.number, "query": self.planned, "resolved": self.text, "answer": self.answer,
                "answer_id": self.answer_id, "supported": self.supported,
                "passages": [c.chunk_id for c in self.candidates[:3]]}


@dataclass(frozen=True)
class HopTools:
    """What running hops calls (async: Serve handles in the agent, local objects in the benchmark)."""

    analyze: Callable[[str, str], Awaitable[QueryAnalysis]]
    # ranked candidates (reranked in the agent) and the analysis as retrieved (its query vector)
    retrieve: Callable[[QueryAnalysis], Awaitable[tuple[list[Candidate], QueryAnalysis]]]
    # Retriever.bridge_entities: (chunk IDs, excluded MeSH IDs, category first or None, the later
    # hops' entities a sub-answer should connect to)
    bridges: Callable[[list[str], set[str], str | None, Sequence[str]], Awaitable[list[tuple[str, float]]]]
    name: Callable[[str, str], Awaitable[str | None]]  # (MeSH ID, language) -> its name
    mentions: Callable[[list[str]], Awaitable[dict[str, set[str]]]]  # chunk ID -> MeSH IDs it names

    @classmethod
    def local(cls, analyzer: Any, retriever: Any) -> HopTools:
        """Tools over in-process objects: a ``QueryAnalyzer`` and a ``Retriever`` (fused lists)."""

        async def analyze(text: str, language: str) -> QueryAnalysis:
            return analyzer.analyze(text, language)  # type: ignore[no-any-return]

        async def retrieve(analysis: QueryAnalysis) -> tuple[list[Candidate], QueryAnalysis]:
            result = retriever.retrieve(analysis)
            return result.candidates, result.analysis

        async def bridges(chunk_ids: list[str], exclude: set[str], kind: str | None,
                          toward: Sequence[str] = ()) -> list[tuple[str, float]]:
            return retriever.bridge_entities(chunk_ids, exclude, kind, toward)  # type: ignore[no-any-return]

        async def name(mesh_id: str, language: str) -> str | None:
            return entity_name(retriever.graph.get_entity(mesh_id), language)

        async def mentions(chunk_ids: list[str]) -> dict[str, set[str]]:
            return retriever.graph.chunk_entities(chunk_ids)  # type: ignore[no-any-return]

        return cls(analyze, retrieve, bridges, name, mentions)


@dataclass(frozen=True)
class HopSettings:
    passages: int = 3  # a hop's best passages that name its sub-answer
    bridge_seeds: int = 1  # bridge candidates that seed the next hop's PPR (the best weighs 1)
    top_k: int = 8  # a hop's passages that may ground it (the numbered evidence's size)
    connect: bool = True  # order the sub-answer candidates by their connection to the asking hop's entities


async def run_hops(plan: Plan, language: str, question_entities: Sequence[str], tools: HopTools,
                   settings: HopSettings = HopSettings(), on_hop: Callable[[Hop], Any] | None = None) -> list[Hop]:
    """The plan's hops retrieved in order (a sub-answer for each hop a later one refers to);
    ``on_hop`` is called with each as it is done."""
    hops = [Hop(i, sub.text) for i, sub in enumerate(plan.hops, 1)]
    await continue_hops(plan, hops, 0, language, set(question_entities), tools, settings, on_hop)
    return hops


async def continue_hops(plan: Plan, hops: list[Hop], start: int, language: str, exclude: set[str],
                        tools: HopTools, settings: HopSettings, on_hop: Callable[[Hop], Any] | None = None) -> None:
    """Retrieve ``hops[start:]`` in order, with a sub-answer for each hop a later one refers to
    (``run_hops`` from the first; the agent's rehop from the one after a replaced sub-answer)."""
    referred = {n for sub in plan.hops for n in sub.refs}
    for hop, sub in list(zip(hops, plan.hops, strict=True))[start:]:
        await retrieve_hop(hop, sub.refs, hops, language, tools, settings)
        if hop.number in referred:
            if settings.connect and not hop.toward:
                hop.toward = await _asking_entities(plan, hop.number, language, tools)
            await answer_hop(hop, exclude, language, tools, settings, kind=plan.answer_kind(hop.number))
        if on_hop is not None:
            on_hop(hop)


async def _asking_entities(plan: Plan, number: int, language: str, tools: HopTools) -> tuple[str, ...]:
    """The entities of the sub-queries that refer to hop ``number``, in their own words (every
    ``#N`` left out)."""
    found: list[str] = []
    for sub in plan.hops:
        if number in sub.refs:
            words = " ".join(REF.sub(" ", sub.text).split())
            found.extend((await tools.analyze(words, language)).named_ids)
    return tuple(dict.fromkeys(found))


async def retrieve_hop(hop: Hop, refs: Sequence[int], hops: list[Hop], language: str, tools: HopTools,
                       settings: HopSettings) -> None:
    answers = {h.number: h.answer for h in hops if h.answer}
    hop.text = SubQuery(hop.planned).resolve(answers).replace("#", "")  # an unresolved #N: its words only
    analysis = await tools.analyze(hop.text, language)
    seeds = {}
    for n in refs:
        earlier = hops[n - 1]
        for rank, mesh_id in enumerate([earlier.answer_id, *earlier.alternatives][: settings.bridge_seeds]):
            if mesh_id:
                seeds[mesh_id] = 1.0 / (rank + 1)
    if seeds:  # the bridge entities seed PPR beside the sub-query's own entities
        analysis = replace(analysis, seed_bias=(*analysis.seed_bias, *seeds.items()))
    hop.candidates, hop.analysis = await tools.retrieve(analysis)
    top = [c.chunk_id for c in hop.candidates[: settings.top_k]]
    bridges = {hops[n - 1].answer_id for n in refs} - {None}
    if bridges:  # grounded only by passages that name the sub-answer, other than those it came from
        named = await tools.mentions(top)
        sources = {c.chunk_id for n in refs for c in hops[n - 1].candidates[: settings.passages]}
        hop.grounded = [c for c in top if bridges & named.get(c, set()) and c not in sources]
    else:
        hop.grounded = top


async def answer_hop(hop: Hop, exclude: set[str], language: str, tools: HopTools, settings: HopSettings,
                     skip: int = 0, kind: str | None = None) -> None:
    """The hop's sub-answer: the best bridge entity of its passages (``skip``: pass over that many,
    when verification found the best one led nowhere); ``kind``: the entity category the question
    says it has ("this drug"), whose entities come first."""
    ranked = await tools.bridges([c.chunk_id for c in hop.candidates[: settings.passages]], exclude, kind, hop.toward)
    ids = [m for m, _ in ranked][skip:]
    if not ids:
        return
    hop.answer_id, hop.alternatives = ids[0], ids[1:]
    hop.answer = await tools.name(ids[0], language)


def entity_name(entity: Any, language: str) -> str | None:
    """An entity's first name in ``language``, else its preferred (English) name."""
    if entity is None:
        return None
    names = entity.names.get(language) or []
    return str(names[0]) if names else str(entity.name)


def merge(question: list[Candidate], hops: Sequence[Hop], k: int = 10, hop_weight: float = 1.0) -> list[Candidate]:
    """One ranking of the whole question's list and every hop's (RRF; ``hop_weight`` per hop list,
    the question's 1). A passage keeps the candidate it came with (its chunk, features, relevance)."""
    lists = {"question": question, **{f"hop{h.number}": h.candidates for h in hops}}
    weights = {"question": 1.0, **{f"hop{h.number}": hop_weight for h in hops}}
    known: dict[str, Candidate] = {}
    for cands in lists.values():
        for c in cands:
            known.setdefault(c.chunk_id, c)
    merged = []
    for fused in rrf(lists, k, weights):
        base = known[fused.chunk_id]
        merged.append(replace(base, score=fused.score, path_ranks={**base.path_ranks, **fused.path_ranks}))
    return merged


def verify(hops: Sequence[Hop], evidence: Sequence[Candidate], top_k: int, min_relevance: float) -> list[Hop]:
    """Mark each hop supported when one of its grounded passages is among the first ``top_k`` of
    the evidence with a relevance of at least ``min_relevance``; the unsupported hops."""
    usable = {c.chunk_id for c in evidence[:top_k] if c.relevance >= min_relevance}
    for hop in hops:
        hop.supported = any(c in usable for c in hop.grounded)
    return [h for h in hops if not h.supported]


_MARKER = re.compile(r"\[(\d+)\]")


def _renumbered(text: str, table: dict[int, int]) -> str:
    """``text`` with each ``[N]`` marker as ``[table[N]]`` (a number not in ``table`` kept)."""
    def number(m: re.Match[str]) -> str:
        n = int(m.group(1))
        return f"[{table.get(n, n)}]"

    return _MARKER.sub(number, text)


def combine_answers(parts: Sequence[Answer]) -> Answer:
    """The answers of a question's hops as one: each hop's quotes in hop order, citations numbered
    anew across them (a passage cited by two hops keeps one number), the first lead line only."""
    numbers: dict[str, int] = {}
    citations: list[Citation] = []
    texts: list[str] = []
    sentences: list[tuple[str, int]] = []
    grounding: dict[str, int] = {}
    for part in parts:
        renumber: dict[int, int] = {}
        for c in part.citations:
            if c.chunk_id not in numbers:
                numbers[c.chunk_id] = len(numbers) + 1
                citations.append(replace(c, number=numbers[c.chunk_id]))
            renumber[c.number] = numbers[c.chunk_id]
        body = part.content[len(part.lead):].strip() if part.lead and part.content.startswith(part.lead) else part.content
        texts.append(_renumbered(body, renumber))
        sentences.extend((text, renumber.get(n, n)) for text, n in part.sentences)
        for key, value in part.grounding.items():
            grounding[key] = grounding.get(key, 0) + value
    first = parts[0]
    lead = next((p.lead for p in parts if p.lead), "")
    content = " ".join([lead, *texts] if lead else texts)
    return Answer(content, citations, False, first.language, first.model_used, first.disclaimer, sentences,
                  grounding, lead)
