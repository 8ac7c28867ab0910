"""The agent: one LangGraph state machine runs each question, from input guard to persisted memory.

Input: an ``AgentRequest`` (question, language, session, user, forced tier, optional history).
Output: the final ``AgentState`` — the ``Answer`` with its ``[N]`` citations, the route, the
retrieval paths used, the guard verdicts, what gap completion added, per-node timings. While it
runs, the generate node streams ``{"delta": text}`` events (LangGraph ``custom`` stream mode)
and every finished node is a ``{"node": name}`` progress event (``run_events``).

    guard_input ──blocked──> refuse ──────────────────────────────────────────────┐
        │ ok                                                                         │
    rewrite ─> analyse ─┬─> semantic ──┐
                        ├─> relational ┼─> fuse ─> verify ─┬─> assess ──gaps──> complete_gaps ─┐ │
                        └─> hops ──────┘     ^  unsupported│     │ ok   (bounded; runs every     │ │
                             ^               └── rehop <───┘     v       channel again)        │ │
                             └────────────────────────────── generate <─────────────────────────┘ │
                                                      │                               │
                                                guard_output ─> persist <─────────────┘

- guard_input: hazard check (S1–S14) before anything else; a blocked question never reaches
  retrieval. Language: the request's, else detected.
- rewrite: resolves pronouns and ellipsis from the session's last turns (short-term memory).
- analyse: NER + linking of the standalone question, the user's top interests as PPR seed bias,
  the route (intent, tier), and the plan: a multi-hop question as sub-queries with ``#N``
  back-references (``medgraph.agent.plan``).
- semantic (chunk evidence: every retrieval path fused by RRF, then reranked) and relational
  (entity co-occurrence paths between the question's entities, from the graph) run in parallel;
  hops (multi-hop questions only) retrieves each sub-query in order, a hop's sub-answer (the bridge
  entity its passages name) filling ``#N`` and seeding PPR in the next (``medgraph.agent.hops``);
  it streams ``{"hop": ...}`` events. fuse merges the channels and the hops by RRF and adds the
  user's recalled memories (relative-time labelled).
- verify: each hop needs a usable passage among the numbered evidence that grounds it (for a hop
  about #N: one naming the sub-answer); an unsupported hop that rests on a sub-answer is run again
  with the next bridge entity (rehop, ``hop_retries`` times; none by default), then assess adds a
  gap on the bridge entity, so gap completion fetches literature on it and every channel and hop
  runs again.
- assess: asks for gaps (two question entities with no connecting evidence, or weak evidence for
  one); complete_gaps fetches literature for them from the configured sources and ingests it into
  the live stores, then both channels run again. Bounded by ``max_tool_calls`` and a time budget.
- generate: the routed tier's engine answers from the numbered evidence, streaming deltas; a
  multi-hop question is answered hop by hop, each from its own passages, and the answers joined.
- guard_output: hazard check of the answer; a blocked answer is replaced by a refusal.
- persist: the session's messages, and for signed-in users interests and conversation memories.

Every dependency is injected (``AgentDeps``): in-process objects in tests, Serve deployment
handles in ``serve/agent.py``. Each node is a plain ``async`` function of (state, deps).
"""

from __future__ import annotations

import asyncio
import logging
import operator
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypedDict

from medgraph import lang
from medgraph.generate.aspects import asked_aspects, aspect_gap, gap_answer
from medgraph.generate.base import Answer, disclaimer
from medgraph.observe import metrics, tracing
from medgraph.retrieve.fusion import rrf
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.route.types import RouteDecision
from medgraph.schemas import Chunk

if TYPE_CHECKING:
    from medgraph.agent.guard import Guard
    from medgraph.agent.plan import Plan
    from medgraph.agent.rewrite import Rewriter
    from medgraph.literature.base import LiteratureRecord
    from medgraph.literature.gaps import Gap
    from medgraph.literature.ingest import IngestReport
    from medgraph.memory.longterm import Memory
    from medgraph.memory.sessions import ChatMessage, ChatSession
    from medgraph.retrieve.retriever import RetrievalResult

log = logging.getLogger(__name__)

MEMORY_PREFIX = "memory:"  # chunk IDs of recalled conversation memories in the numbered context


# --- request, settings, dependencies --------------------------------------------------------


@dataclass(frozen=True)
class AgentRequest:
    question: str
    language: str | None = None
    session_id: str | None = None
    user_id: str | None = None  # None: anonymous (never writes long-term memory)
    tier: str | None = None  # force a tier instead of routing
    # the conversation so far when the caller carries it (OpenAI-style messages): (role, content)
    history: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class AgentSettings:
    top_k: int = 8  # numbered evidence passed to generation
    history_turns: int = 5
    top_interests: int = 5
    interest_seed_weight: float = 0.3  # the strongest interest's PPR seed weight (question entities: ~1)
    memories: int = 2  # conversation memories recalled into the context
    relational_weight: float = 0.5  # RRF weight of the relational channel (semantic: 1)
    relational_pairs: int = 6
    rrf_k: int = 10
    gaps_enabled: bool = True
    max_tool_calls: int = 2
    time_budget_s: float = 20.0  # gap completion may start only this long after the question arrived
    min_relevance: float = 0.3  # the answer's usable-evidence floor: recalled memories get it
    decompose: bool = True  # plan multi-hop questions as hops (a single-hop question keeps one pass)
    hop_weight: float = 2.0  # RRF weight of each hop's list (the channels' fused list: 1)
    hop_passages: int = 3  # a hop's best passages that name its sub-answer
    bridge_seeds: int = 1  # bridge candidates seeding the next hop's PPR
    bridge_connect: bool = True  # sub-answers connected in the graph to the asking hop's entities first
    hop_retries: int = 0  # an unsupported hop re-run with the next bridge entity


Events = AsyncIterator[dict[str, Any]]


class SessionLog(Protocol):
    """The conversation store the agent reads and appends to (``medgraph.memory.sessions.SessionStore``)."""

    def open_session(self, session_id: str | None, user_id: str | None) -> ChatSession: ...

    def recent(self, session_id: str, n: int = 5) -> list[ChatMessage]: ...

    def add_message(self, session_id: str, role: str, content: str,
                    entities: Sequence[tuple[str, str]] = ()) -> ChatMessage: ...


class UserMemory(Protocol):
    """A user's interests and remembered answers (``medgraph.memory.longterm.LongTermMemory``)."""

    def top_interests(self, user_id: str | None, k: int = 5) -> list[tuple[str, float]]: ...

    def recall(self, user_id: str | None, mesh_ids: Sequence[str], k: int = 3,
               language: str = lang.PIVOT) -> list[Memory]: ...

    def record_interests(self, user_id: str | None, mesh_ids: Sequence[str]) -> None: ...

    def reinforce(self, user_id: str | None, memory_ids: Sequence[str]) -> None: ...

    def remember(self, user_id: str | None, question: str, answer: str, mesh_ids: Sequence[str]) -> str | None: ...


class Planner(Protocol):
    """Splits a question into hops (``medgraph.agent.plan``: rules or a DSPy program)."""

    def plan(self, question: str, language: str) -> Plan: ...


@dataclass
class AgentDeps:
    """What the nodes call. ``generate(tier, question, analysis, evidence)`` yields
    ``{"delta": str}`` events then ``{"answer": Answer}`` (the tier engines' stream)."""

    guard: Guard
    rewriter: Rewriter
    analyze: Callable[[str, str | None], Awaitable[QueryAnalysis]]
    route: Callable[[QueryAnalysis, str | None], Awaitable[RouteDecision]]
    retrieve: Callable[[QueryAnalysis], Awaitable[RetrievalResult]]
    rerank: Callable[[str, list[Candidate]], Awaitable[list[Candidate]]]
    relational: Callable[[QueryAnalysis], Awaitable[list[Candidate]]]  # featurised, chunks loaded
    generate: Callable[[str, str, QueryAnalysis, list[Candidate]], Events]
    find_gaps: Callable[[QueryAnalysis, list[Candidate]], Awaitable[list[Gap]]] | None = None
    fetch: Callable[[Gap], Awaitable[list[LiteratureRecord]]] | None = None
    ingest: Callable[[list[LiteratureRecord]], Awaitable[IngestReport]] | None = None
    sessions: SessionLog | None = None
    memory: UserMemory | None = None
    planner: Planner | None = None  # None: never multi-hop
    bridges: Callable[[list[str], set[str], str | None, Sequence[str]], Awaitable[list[tuple[str, float]]]] | None = None
    entity_name: Callable[[str, str], Awaitable[str | None]] | None = None  # (MeSH ID, language)
    mentions: Callable[[list[str]], Awaitable[dict[str, set[str]]]] | None = None  # chunk ID -> MeSH IDs
    settings: AgentSettings = field(default_factory=AgentSettings)
    clock: Callable[[], float] = time.time


# --- state ------------------------------------------------------------------------------------


def _merge(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    return {**left, **right}


class AgentState(TypedDict, total=False):
    request: AgentRequest
    started: float  # monotonic time the question arrived
    language: str
    session_id: str
    input_verdict: Any
    output_verdict: Any
    blocked: bool
    history: list[Any]  # [Turn]
    rewrite: Any  # Rewrite
    question: str  # the standalone question
    analysis: QueryAnalysis
    route: RouteDecision
    semantic: list[Candidate]
    relational: list[Candidate]
    evidence: list[Candidate]
    memories: list[Any]  # [Memory]
    plan: Any  # medgraph.agent.plan.Plan
    hops: list[Any]  # [medgraph.agent.hops.Hop], empty for a single-hop question
    channels: list[Candidate]  # the channels' fused evidence before the hops are merged in
    rehops: int
    paths_used: list[str]
    gaps: list[Any]  # [Gap]
    tool_calls: int
    gap_log: Annotated[list[dict[str, Any]], operator.add]
    answer: Answer
    timings: Annotated[dict[str, float], _merge]  # node -> ms (summed over loop passes)


# --- nodes ------------------------------------------------------------------------------------


async def guard_input(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    from medgraph.ingest.text import detect_language

    req = state["request"]
    language = req.language or detect_language(req.question)
    # the session and memory stores block (SQLite, PostgreSQL): in a thread, off the replica's event loop
    session = await asyncio.to_thread(deps.sessions.open_session, req.session_id, req.user_id) if deps.sessions else None
    verdict = await asyncio.to_thread(deps.guard.check_input, req.question, language)  # a model tier blocks
    return {"language": language, "input_verdict": verdict, "blocked": not verdict.allowed,
            "session_id": session.session_id if session else (req.session_id or ""), "tool_calls": 0}


async def refuse(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    from medgraph.agent.guard import refusal_text

    language = state["language"]
    text = refusal_text(state["input_verdict"], language)
    answer = Answer(content=text, refused=True, language=language, model_used="guard", disclaimer=disclaimer(language))
    return {"answer": answer, "question": state["request"].question, "paths_used": []}


async def rewrite(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    from medgraph.agent.rewrite import Turn

    req, n = state["request"], deps.settings.history_turns
    if req.history is not None:
        turns = [Turn(role, content) for role, content in req.history[-n:]]
    elif deps.sessions is not None and state.get("session_id"):
        recent = await asyncio.to_thread(deps.sessions.recent, state["session_id"], n)
        turns = [Turn(m.role, m.content, tuple(m.entities)) for m in recent]
    else:
        turns = []
    result = await asyncio.to_thread(deps.rewriter.rewrite, req.question, turns, state["language"])
    return {"history": turns, "rewrite": result, "question": result.question}


async def analyse(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    analysis = await deps.analyze(state["question"], state["language"])
    user = state["request"].user_id
    if user and deps.memory is not None:
        interests = await asyncio.to_thread(deps.memory.top_interests, user, deps.settings.top_interests)
        analysis = with_interests(analysis, interests, deps.settings.interest_seed_weight)
    route = await deps.route(analysis, state["request"].tier)
    plan = None
    planner = _planner(deps)
    if planner is not None:  # a model-tier planner blocks on its engine: in a thread
        plan = await asyncio.to_thread(planner.plan, state["question"], state["language"])
    return {"analysis": analysis, "route": route, "plan": plan, "rehops": 0}


def _planner(deps: AgentDeps) -> Planner | None:
    """The planner, when decomposition is on and the hops' graph calls are there; else None."""
    if deps.settings.decompose and None not in (deps.bridges, deps.entity_name, deps.mentions):
        return deps.planner
    return None


def with_interests(analysis: QueryAnalysis, interests: Sequence[tuple[str, float]], top_weight: float) -> QueryAnalysis:
    """The analysis with the user's interests as extra PPR seeds, scaled so the strongest weighs
    ``top_weight`` (below a linked question entity's ~1), never replacing the question's own."""
    own = set(analysis.entity_ids)
    best = max((w for _, w in interests), default=0.0)
    if best <= 0:
        return analysis
    bias = tuple((mesh_id, top_weight * w / best) for mesh_id, w in interests if mesh_id not in own and w > 0)
    return replace(analysis, seed_bias=bias)


async def semantic(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    result = await deps.retrieve(state["analysis"])
    ranked = await deps.rerank(state["question"], result.candidates)
    # the analysis as retrieved carries the question's query vector to the answer step
    return {"semantic": ranked, "paths_used": list(result.paths_used), "analysis": result.analysis}


async def relational(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    if len(state["analysis"].entity_ids) < 2:
        return {"relational": []}
    return {"relational": await deps.relational(state["analysis"])}


def _hop_tools(state: AgentState, deps: AgentDeps) -> Any:
    from medgraph.agent.hops import HopTools

    async def analyze(text: str, language: str) -> QueryAnalysis:
        return await deps.analyze(text, language)

    async def retrieve(analysis: QueryAnalysis) -> tuple[list[Candidate], QueryAnalysis]:
        result = await deps.retrieve(analysis)  # each hop reranked against its own text
        return await deps.rerank(analysis.text, result.candidates), result.analysis

    # _planner: no plan without them
    assert deps.bridges is not None and deps.entity_name is not None and deps.mentions is not None
    return HopTools(analyze, retrieve, deps.bridges, deps.entity_name, deps.mentions)


def hop_settings(s: AgentSettings) -> Any:
    """The hops' settings (``medgraph.agent.hops.HopSettings``) from the agent's."""
    from medgraph.agent.hops import HopSettings

    return HopSettings(passages=s.hop_passages, bridge_seeds=s.bridge_seeds, top_k=s.top_k, connect=s.bridge_connect)


async def hops(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    """A multi-hop question's hops, in order (``medgraph.agent.hops.run_hops``), each streamed."""
    from medgraph.agent.hops import run_hops

    plan = state.get("plan")
    if plan is None or not plan.multi_hop:
        return {"hops": []}
    write = _writer()
    done = await run_hops(plan, state["language"], state["analysis"].named_ids, _hop_tools(state, deps),
                          hop_settings(deps.settings), on_hop=lambda hop: write({"hop": hop.to_dict()}))
    return {"hops": done}


def _writer() -> Callable[[Any], None]:
    from langgraph.config import get_stream_writer

    try:
        return get_stream_writer()
    except RuntimeError:  # not streaming (a direct call in a test)
        return lambda _: None


async def fuse(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    """Semantic and relational evidence fused by RRF; relational-only chunks are reranked first so
    that every candidate carries a calibrated relevance. Recalled memories are appended."""
    sem, rel = state.get("semantic", []), state.get("relational", [])
    known = {c.chunk_id for c in sem}
    fresh = [c for c in rel if c.chunk_id not in known]
    if fresh:
        fresh = await deps.rerank(state["question"], fresh)
    relevance = {c.chunk_id: c for c in [*sem, *fresh]}
    fused = rrf({"semantic": sem, "relational": rel}, deps.settings.rrf_k,
                {"semantic": 1.0, "relational": deps.settings.relational_weight})
    evidence = []
    for cand in fused:
        base = relevance.get(cand.chunk_id)
        if base is not None:
            evidence.append(replace(base, score=cand.score, path_ranks={**base.path_ranks, **cand.path_ranks},
                                    entity_path=base.entity_path or cand.entity_path))
    # the composer keeps its own order by relevance; the fused order decides what enters the top-k
    paths = list(state.get("paths_used", []))
    if rel and "relational" not in paths:
        paths.append("relational")
    channels, hopped = evidence, state.get("hops") or []
    if hopped:
        from medgraph.agent.hops import merge

        evidence = merge(channels, hopped, deps.settings.rrf_k, deps.settings.hop_weight)
        paths.extend(p for p in ("hops",) if p not in paths)
    memories = []
    user = state["request"].user_id
    if user and deps.memory is not None and deps.settings.memories:
        memories = await asyncio.to_thread(deps.memory.recall, user, state["analysis"].entity_ids, deps.settings.memories,
                                           state["language"])
    return {"evidence": evidence, "channels": channels, "memories": memories, "paths_used": paths}


async def verify(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    """Which hops have a grounding passage among the usable numbered evidence (``Hop.supported``)."""
    from medgraph.agent.hops import verify as check

    hopped = state.get("hops") or []
    if hopped:
        check(hopped, state["evidence"], deps.settings.top_k, deps.settings.min_relevance)
    return {"hops": hopped}


def _retry_from(state: AgentState, deps: AgentDeps) -> int | None:
    """The hop whose sub-answer to replace (the earliest one an unsupported hop rests on, with a
    next-best bridge entity left), or None: no retry left."""
    if state.get("rehops", 0) >= deps.settings.hop_retries:
        return None
    plan, hopped = state.get("plan"), state.get("hops") or []
    for hop, sub in zip(hopped, plan.hops if plan else (), strict=False):
        if hop.supported is False:
            for n in sub.refs:
                if hopped[n - 1].alternatives:
                    return int(n)
    return None


async def rehop(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    """Run again from a sub-answer that led to no usable passage: its hop takes the next bridge
    entity, and every later hop is retrieved anew; the evidence is merged again."""
    from medgraph.agent.hops import answer_hop, continue_hops, merge

    n, hopped = _retry_from(state, deps), state["hops"]
    assert n is not None
    tools, settings, retries = _hop_tools(state, deps), hop_settings(deps.settings), state.get("rehops", 0) + 1
    exclude = set(state["analysis"].named_ids)
    await answer_hop(hopped[n - 1], exclude, state["language"], tools, settings, skip=retries,
                     kind=state["plan"].answer_kind(n))
    write = _writer()
    await continue_hops(state["plan"], hopped, n, state["language"], exclude, tools, settings,
                        on_hop=lambda hop: write({"hop": hop.to_dict()}))
    evidence = merge(state["channels"], hopped, deps.settings.rrf_k, deps.settings.hop_weight)
    return {"hops": hopped, "evidence": evidence, "rehops": retries}


async def assess(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    if not _may_complete(state, deps):
        return {"gaps": []}
    gaps = await deps.find_gaps(state["analysis"], state["evidence"][: deps.settings.top_k])  # type: ignore[misc]
    return {"gaps": [*gaps, *hop_gaps(state)]}


def hop_gaps(state: AgentState) -> list[Any]:
    """A weak-evidence gap for each bridge entity whose dependent hop is still unsupported."""
    from medgraph.literature.gaps import Gap

    plan, hopped, out = state.get("plan"), state.get("hops") or [], []
    for hop, sub in zip(hopped, plan.hops if plan else (), strict=False):
        for n in sub.refs:
            bridge = hopped[n - 1]
            if hop.supported is False and bridge.answer_id:
                out.append(Gap("weak", (bridge.answer_id,), (bridge.answer or bridge.answer_id,),
                               f"hop {hop.number} ({hop.text}) has no supporting passage"))
    return out


def _may_complete(state: AgentState, deps: AgentDeps) -> bool:
    s = deps.settings
    return (s.gaps_enabled and deps.find_gaps is not None and deps.fetch is not None and deps.ingest is not None
            and state.get("tool_calls", 0) < s.max_tool_calls
            and time.monotonic() - state["started"] < s.time_budget_s)


async def complete_gaps(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    """One tool call: fetch literature for each gap's entities and ingest it into the live stores."""
    log_entries: list[dict[str, Any]] = []
    for gap in state["gaps"]:
        t0 = time.monotonic()
        try:
            records = await deps.fetch(gap)  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - a failing source degrades to the evidence we have
            log_entries.append({"gap": _gap_dict(gap), "error": f"{type(exc).__name__}: {exc}"})
            continue
        fetched = time.monotonic()
        report = await deps.ingest(records) if records else None  # type: ignore[misc]
        log_entries.append({
            "gap": _gap_dict(gap), "fetched": [r.doc_id for r in records],
            "ingested": list(report.doc_ids) if report else [], "chunks": len(report.chunk_ids) if report else 0,
            "fetch_ms": round(1000 * (fetched - t0), 1), "ingest_ms": round(1000 * (time.monotonic() - fetched), 1),
        })
    return {"tool_calls": state.get("tool_calls", 0) + 1, "gap_log": log_entries}


def _gap_dict(gap: Any) -> dict[str, Any]:
    return {"kind": gap.kind, "mesh_ids": list(gap.mesh_ids), "names": list(gap.names), "reason": gap.reason}


async def generate(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    write = _writer()
    s = deps.settings
    memories = [memory_candidate(m, s.min_relevance) for m in state.get("memories", [])][: s.top_k // 2]
    # recalled memories take the last places of the numbered context, at the usable floor: they
    # are quoted when the evidence does not say it better, and never crowd out more than half
    evidence = state["evidence"][: s.top_k - len(memories)] + memories
    gap = aspect_gap(state["analysis"], state["evidence"], s.min_relevance, s.top_k)
    hopped = state.get("hops") or []
    last = hopped[-1] if hopped else None
    if gap is not None and last is not None and last.analysis is not None and asked_aspects(last.analysis.text):
        # a multi-hop question asks its aspect of the last hop's subject (the sub-answer it rests on,
        # which the whole question never names): that hop's passages, reranked against its own
        # text, may state it where the merged evidence, scored against the whole question, does not
        gap = gap if aspect_gap(last.analysis, last.candidates, s.min_relevance, s.top_k) is not None else None
    if gap is not None:  # no usable evidence states the aspect asked about: say so, every tier alike
        said = gap_answer(gap, state["analysis"])
        write({"delta": said.content})
        return {"answer": said}
    if hopped and all(h.candidates and h.analysis is not None for h in hopped):
        combined = await _answer_hops(state, deps, hopped)
        if combined is not None:
            write({"delta": combined.content})
            return {"answer": combined}
    answer: Answer | None = None
    async for event in deps.generate(state["route"].tier, state["question"], state["analysis"], evidence):
        if "delta" in event:
            write({"delta": event["delta"]})
        else:
            answer = event["answer"]
    if answer is None:
        raise RuntimeError("the tier engine ended its stream without an answer")
    return {"answer": answer}


async def _answer_hops(state: AgentState, deps: AgentDeps, hopped: list[Any]) -> Answer | None:
    """A multi-hop question answered hop by hop — each hop's sub-query from its own passages
    (about #N: those that name its sub-answer) — and the answers joined, so that the answer cites
    every hop (``hops.combine_answers``); None when the last hop (the question asked) has no
    answer: then the whole evidence is tried at once."""
    from medgraph.agent.hops import combine_answers

    # a comparison's sides do not rest on each other: one side without an answer leaves the question
    # half answered, so the whole evidence is tried at once (where the refusal decides as for any question)
    plan = state.get("plan")
    independent = plan is not None and plan.kind == "comparison"
    parts = []
    for hop in hopped:
        # a hop about #N is answered from its passages that name #N's sub-answer, where it has some
        # and one is usable; a hop whose sub-answer led to no usable passage (``verify``: a wrong
        # bridge entity) is answered from its own best passages, which its other words found
        top = hop.candidates[: deps.settings.top_k]
        grounded = [c for c in top if c.chunk_id in set(hop.grounded)] if hop.supported is not False else []
        evidence = grounded or top
        answer: Answer | None = None
        async for event in deps.generate(state["route"].tier, hop.text, hop.analysis, evidence):
            answer = event.get("answer", answer)
        if answer is None:
            raise RuntimeError("the tier engine ended its stream without an answer")
        if not answer.refused:
            parts.append(answer)
        elif hop is hopped[-1] or independent:
            return None
    return combine_answers(parts) if parts else None


_MARKER = re.compile(r"\s*\[\d+\]")


def memory_candidate(memory: Any, relevance: float) -> Candidate:
    """A recalled conversation memory as one numbered context passage, labelled with its age
    (the old answer's own ``[N]`` markers removed: they pointed into another context)."""
    text = f"({memory.age_label}) {_MARKER.sub('', memory.text)}"
    chunk = Chunk(chunk_id=f"{MEMORY_PREFIX}{memory.memory_id}", doc_id=f"{MEMORY_PREFIX}{memory.memory_id}",
                  index=0, text=text, section_path=["Conversation memory", memory.age_label], parent_id="",
                  parent_text=text, token_count=len(text.split()), language="", title="Earlier conversation")
    return Candidate(chunk.chunk_id, chunk=chunk, relevance=relevance, features={"memory": 1.0})


async def guard_output(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    from medgraph.agent.guard import refusal_text

    answer, language = state["answer"], state["language"]
    if answer.refused:
        return {}
    shown = f"{answer.content}\n\n{answer.disclaimer}"  # what the user reads
    verdict = await asyncio.to_thread(deps.guard.check_output, state["question"], shown, language)
    if verdict.allowed:
        return {"output_verdict": verdict}
    blocked = Answer(content=refusal_text(verdict, language), refused=True, language=language,
                     model_used=answer.model_used, disclaimer=disclaimer(language))
    return {"output_verdict": verdict, "answer": blocked}


async def persist(state: AgentState, deps: AgentDeps) -> dict[str, Any]:
    req, answer = state["request"], state["answer"]
    analysis = state.get("analysis")
    entities = analysis.linked if analysis else ()
    if deps.sessions is not None and state.get("session_id"):
        await asyncio.to_thread(deps.sessions.add_message, state["session_id"], "user", req.question, entities)
        await asyncio.to_thread(deps.sessions.add_message, state["session_id"], "assistant", answer.content)
    if deps.memory is None or not req.user_id or state.get("blocked") or analysis is None:
        return {}
    ids, memory, user = analysis.entity_ids, deps.memory, req.user_id
    cited = [c.chunk_id[len(MEMORY_PREFIX):] for c in answer.citations if c.chunk_id.startswith(MEMORY_PREFIX)]

    def remember() -> None:  # the memory store blocks: in a thread, off the event loop
        memory.record_interests(user, ids)
        if cited:
            memory.reinforce(user, cited)
        if not answer.refused and ids:
            memory.remember(user, state["question"], answer.content, ids)

    await asyncio.to_thread(remember)
    return {}


# --- edges and assembly -----------------------------------------------------------------------


def _after_guard(state: AgentState) -> str:
    return "refuse" if state.get("blocked") else "rewrite"


def _after_assess(state: AgentState) -> str:
    return "complete_gaps" if state.get("gaps") else "generate"


NODES: dict[str, Callable[[AgentState, AgentDeps], Awaitable[dict[str, Any]]]] = {
    "guard_input": guard_input, "refuse": refuse, "rewrite": rewrite, "analyse": analyse, "semantic": semantic,
    "relational": relational, "hops": hops, "fuse": fuse, "verify": verify, "rehop": rehop, "assess": assess,
    "complete_gaps": complete_gaps,
    "generate": generate, "guard_output": guard_output, "persist": persist,
}


def _timed(name: str, fn: Callable[[AgentState, AgentDeps], Awaitable[dict[str, Any]]], deps: AgentDeps
           ) -> Callable[[AgentState], Awaitable[dict[str, Any]]]:
    async def node(state: AgentState) -> dict[str, Any]:
        t0 = time.perf_counter()
        with tracing.span(f"agent.{name}", {"openinference.span.kind": "CHAIN"}):
            update = await fn(state, deps)
        seconds = time.perf_counter() - t0
        metrics.observe("medgraph_agent_node_seconds", seconds, node=name)
        ms = 1000 * seconds + state.get("timings", {}).get(name, 0.0)
        return {**update, "timings": {name: round(ms, 2)}}

    return node


def build_graph(deps: AgentDeps) -> Any:
    """The compiled LangGraph state machine over ``deps``."""
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(AgentState)
    for name, fn in NODES.items():
        g.add_node(name, _timed(name, fn, deps))  # type: ignore[call-overload]
    g.add_edge(START, "guard_input")
    g.add_conditional_edges("guard_input", _after_guard, ["refuse", "rewrite"])
    g.add_edge("refuse", "persist")
    g.add_edge("rewrite", "analyse")
    for channel in ("semantic", "relational", "hops"):
        g.add_edge("analyse", channel)
        g.add_edge("complete_gaps", channel)
        g.add_edge(channel, "fuse")
    g.add_edge("fuse", "verify")

    def after_verify(state: AgentState) -> str:
        return "rehop" if _retry_from(state, deps) is not None else "assess"

    g.add_conditional_edges("verify", after_verify, ["rehop", "assess"])
    g.add_edge("rehop", "verify")
    g.add_conditional_edges("assess", _after_assess, ["complete_gaps", "generate"])
    g.add_edge("generate", "guard_output")
    g.add_edge("guard_output", "persist")
    g.add_edge("persist", END)
    return g.compile()


class Agent:
    """Runs the graph: ``run`` for the final state, ``events`` for progress, deltas and the end."""

    def __init__(self, deps: AgentDeps) -> None:
        self.deps = deps
        self.graph = build_graph(deps)

    def _initial(self, request: AgentRequest) -> AgentState:
        return {"request": request, "started": time.monotonic(), "timings": {}, "gap_log": []}

    async def run(self, request: AgentRequest) -> AgentState:
        state: AgentState = await self.graph.ainvoke(self._initial(request))
        return state

    async def events(self, request: AgentRequest) -> AsyncIterator[dict[str, Any]]:
        """``{"node": name}`` as each node finishes, ``{"delta": text}`` while generating, then
        ``{"final": AgentState}``."""
        state: dict[str, Any] = dict(self._initial(request))
        async for mode, chunk in self.graph.astream(state, stream_mode=["custom", "updates"]):
            if mode == "custom":
                yield chunk
                continue
            for node, update in chunk.items():
                for key, value in (update or {}).items():
                    if key == "timings":
                        state["timings"] = {**state.get("timings", {}), **value}
                    elif key == "gap_log":
                        state["gap_log"] = [*state.get("gap_log", []), *value]
                    else:
                        state[key] = value
                yield {"node": node}
        yield {"final": state}


def summary(state: AgentState) -> dict[str, Any]:
    """The agent's trace for the API response: rewrite, verdicts, gaps, memories, timings."""
    rw, gaps = state.get("rewrite"), state.get("gap_log", [])
    return {
        "question": state.get("question", state["request"].question),
        "rewritten": bool(rw and rw.changed),
        "blocked": bool(state.get("blocked")),
        "input_guard": _verdict(state.get("input_verdict")),
        "output_guard": _verdict(state.get("output_verdict")),
        "gap_completion": {"tool_calls": state.get("tool_calls", 0), "rounds": gaps},
        "memories_used": [m.memory_id for m in state.get("memories", [])],
        "plan": state["plan"].to_dict() if state.get("plan") else None,
        "hops": [h.to_dict() for h in state.get("hops") or []],
        "timings_ms": state.get("timings", {}),
    }


def _verdict(v: Any) -> dict[str, Any] | None:
    if v is None:
        return None
    return {"allowed": v.allowed, "categories": list(v.categories), "reason": v.reason, "method": v.method}
