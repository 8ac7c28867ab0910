"""The agent deployment: runs each question through the LangGraph agent (``medgraph.agent.graph``).

It owns what the agent keeps between questions — the guard, the rewriter, the session store and
long-term memory (``app.path``), the literature sources of gap completion — and calls the other
deployments through their handles: analyzer, router, retriever (retrieval, the relational
channel, gap detection, live ingestion), reranker and the per-tier engines.

``run(request)`` returns the answer body of ``/chat``; ``stream(request)`` yields
``{"status": node}`` as the graph advances, ``{"delta": text}`` while the tier generates, and
``{"done": body}``. A backend that does not answer in time, or a store or tier that is down,
raises ``AgentUnavailable`` (the ingress answers 503); another user's session id raises
``SessionForbidden`` (403). The session and memory stores' calls get ``serve.store_timeout_s`` each
(``serve.calls.BoundedStore``), as the ingress's key checks do.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from medgraph.agent.graph import Agent, AgentDeps, AgentRequest, AgentState, summary
from medgraph.config import MedGraphConfig
from medgraph.generate.base import Answer
from medgraph.llm.base import ModelUnavailable
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.stores.errors import StoreError
from serve import calls
from serve.colocated import SERVICES, LocalHandle, colocated_engines

if TYPE_CHECKING:
    from ray.serve.handle import DeploymentHandle

log = logging.getLogger(__name__)


class AgentUnavailable(RuntimeError):
    """A backend (store, tier, deployment) cannot answer now; the request may be retried."""


# What a caller reads in a 503: what failed, in words; never a host, a port, a path or an exception's
# text (those go to the server log, under the request's ID)
STORE_DOWN = "a data store is unavailable; try again later"
TIER_DOWN = "the LLM tier is unavailable; try again later"
LATE_BACKEND = "a backend did not answer in time; try again later"
LATE_TIER = "the LLM tier did not answer in time; try again later"
BACKEND_DOWN = "a backend is unavailable; try again later"  # a replica died mid-call (Serve replaces it)
_REASONS = (LATE_BACKEND, LATE_TIER, STORE_DOWN, TIER_DOWN, BACKEND_DOWN)


def unavailable_reason(exc: BaseException) -> str | None:
    """The 503 message for errors that mean 'try again later' (also when Serve wraps them): one of
    the fixed reasons above."""
    from ray.exceptions import RayActorError

    from serve.tiers import TierUnavailable

    seen = 0
    err: BaseException | None = exc
    while err is not None and seen < 6:  # Serve wraps a deployment's error; the agent adds a level
        if isinstance(err, AgentUnavailable):  # ours; inside Serve's wrapper its text is a traceback
            text = str(err)
            return next((reason for reason in _REASONS if reason in text), LATE_BACKEND)
        if isinstance(err, StoreError):
            return STORE_DOWN
        if isinstance(err, TierUnavailable | ModelUnavailable):
            return TIER_DOWN
        if isinstance(err, RayActorError):  # the replica died or cannot be reached
            return BACKEND_DOWN
        err = getattr(err, "cause", None) or err.__cause__
        seen += 1
    return None


def answer_body(state: AgentState) -> dict[str, Any]:
    answer: Answer = state["answer"]
    route = state.get("route")
    return {
        "session_id": state.get("session_id") or uuid.uuid4().hex,
        "content": answer.content,
        "citations": [c.__dict__ for c in answer.citations],
        "retrieval_paths_used": list(state.get("paths_used", [])),
        "model_used": answer.model_used,
        "refused": answer.refused,
        "language": answer.language,
        "disclaimer": answer.disclaimer,
        "tier": route.tier if route else None,
        "route": route.to_dict() if route else None,
        "grounding": answer.grounding,
        "agent": summary(state),
    }


class AgentService:
    def __init__(self, cfg: MedGraphConfig, analyzer: DeploymentHandle | None, retriever: DeploymentHandle,
                 reranker: DeploymentHandle | None, router: DeploymentHandle | None,
                 engines: dict[str, DeploymentHandle | None]) -> None:
        """The handles of the deployments it calls (``serve/app.py``): analyzer, retriever, reranker,
        router (``serve/services.py``) and one ``TierService`` per engine name; ``None`` for the
        parts of ``serve.colocate``, built here."""
        from medgraph.assemble import build_agent_parts

        self.cfg = cfg
        # a deployment's handle, or a colocated part's LocalHandle (the same call shapes)
        self.analyzer: Any = analyzer
        self.retriever: Any = retriever
        self.reranker: Any = reranker
        self.router: Any = router
        self.engines: dict[str, Any] = dict(engines)  # a copy: Serve scans the bound arguments again later
        self.colocated_parts = self._colocate(cfg)
        self.timeout_s = cfg.serve.request_timeout_s
        self.answer_timeout_s = cfg.serve.answer_timeout_s + cfg.tiers.wake_timeout_s
        parts = build_agent_parts(cfg, self._blocking_chat, self._link)
        self.sources = parts.sources
        gaps_on = bool(self.sources)
        state = calls.StatePool(cfg.serve.store_timeout_s)
        deps = AgentDeps(
            guard=parts.guard, rewriter=parts.rewriter,
            analyze=self._analyze, route=self._route, retrieve=self._retrieve, rerank=self._rerank,
            relational=self._relational, generate=self._generate,
            find_gaps=self._find_gaps if gaps_on else None, fetch=self._fetch if gaps_on else None,
            ingest=self._ingest if gaps_on else None,
            sessions=calls.BoundedStore(parts.sessions, state), memory=calls.BoundedStore(parts.memory, state),
            planner=parts.planner, bridges=self._bridges, entity_name=self._entity_name, mentions=self._mentions,
            settings=parts.settings,
        )
        self.agent = Agent(deps)

    def _colocate(self, cfg: MedGraphConfig) -> dict[str, LocalHandle]:
        """Build the parts of ``serve.colocate`` in this replica, in place of their handles (bound
        as None by serve/app.py); by part name, and each colocated engine by its engine name."""
        from serve.services import AnalyzerService, RerankerService, RouterService
        from serve.tiers import TierService

        parts: dict[str, LocalHandle] = {}
        if "analyzer" in cfg.serve.colocate:
            self.analyzer = parts["analyzer"] = LocalHandle(AnalyzerService(cfg))
        if "reranker" in cfg.serve.colocate:
            self.reranker = parts["reranker"] = LocalHandle(RerankerService(cfg))
        for name in colocated_engines(cfg):
            if name in SERVICES:
                raise ValueError(f"engine {name!r} is colocated and shares its name with a part; rename it")
            self.engines[name] = parts[name] = LocalHandle(TierService(cfg, name))
        if "router" in cfg.serve.colocate:
            r = cfg.router
            classifier = self.engines.get(r.engine) if r.kind in ("llm", "dspy") and r.engine else None
            self.router = parts["router"] = LocalHandle(RouterService(cfg, classifier))
        return parts

    async def colocated(self, part: str, method: str, *args: object) -> object:
        """``method(*args)`` of colocated part ``part`` (a name of ``serve.colocate``, or a colocated
        engine's name), for the ingress (``serve.colocated.ViaAgent``)."""
        if part not in self.colocated_parts:
            raise ValueError(f"{part!r} does not run in the agent; colocated: {sorted(self.colocated_parts)}")
        return await getattr(self.colocated_parts[part], method).remote(*args)

    # --- model tiers of the guard and the rewriter: an engine deployment, called from a worker thread

    def _blocking_chat(self, engine: str | None, max_tokens: int) -> Any:
        """``chat(messages) -> text`` on engine ``engine``'s deployment, for the sync guard and
        rewriter (the graph runs them in a worker thread, where waiting on a handle is allowed)."""
        from medgraph.llm.base import ChatParams

        if engine not in self.engines:
            raise ValueError(f"engine {engine!r} is not deployed; deployed: {sorted(self.engines)}")
        if engine in self.colocated_parts:  # only extractive engines are colocated
            raise ModelUnavailable(f"engine {engine!r} is extractive: it has no language model to chat with")
        handle, timeout = self.engines[engine], self.answer_timeout_s
        params = ChatParams(max_tokens=max_tokens, temperature=0.0)

        def chat(messages: list[dict[str, str]], p: Any = None) -> str:
            return str(handle.chat.remote(messages, p or params).result(timeout_s=timeout))

        return chat

    def _link(self, text: str) -> list[tuple[str, str]]:
        """The linked entities of ``text`` (analyzer deployment), for the rewriter's rules: earlier
        turns that carry no entities (history sent by an API caller)."""
        return list(self.analyzer.analyze.remote(text, None).result(timeout_s=self.timeout_s).linked)

    # --- calls to the other deployments (with timeouts; outages become AgentUnavailable) ---------

    async def _call(self, method: Any, *args: Any, timeout: float | None = None) -> Any:
        return await calls.call(method, *args, timeout=timeout or self.timeout_s, translate=_unavailable,
                                late=lambda: AgentUnavailable(LATE_BACKEND))

    async def _analyze(self, question: str, language: str | None) -> QueryAnalysis:
        return await self._call(self.analyzer.analyze, question, language)  # type: ignore[no-any-return]

    async def _route(self, analysis: QueryAnalysis, tier: str | None) -> Any:
        return await self._call(self.router.route, analysis, tier)

    async def _retrieve(self, analysis: QueryAnalysis) -> Any:
        return await self._call(self.retriever.retrieve, analysis)

    async def _bridges(self, chunk_ids: list[str], exclude: set[str], kind: str | None,
                       toward: Sequence[str] = ()) -> list[tuple[str, float]]:
        return await self._call(self.retriever.bridge_entities, chunk_ids, exclude, kind,  # type: ignore[no-any-return]
                                list(toward))

    async def _entity_name(self, mesh_id: str, language: str) -> str | None:
        return await self._call(self.retriever.entity_name, mesh_id, language)  # type: ignore[no-any-return]

    async def _mentions(self, chunk_ids: list[str]) -> dict[str, set[str]]:
        return await self._call(self.retriever.chunk_entities, chunk_ids)  # type: ignore[no-any-return]

    async def _rerank(self, question: str, candidates: list[Candidate]) -> list[Candidate]:
        return await self._call(self.reranker.rerank, question, candidates)  # type: ignore[no-any-return]

    async def _relational(self, analysis: QueryAnalysis) -> list[Candidate]:
        a = self.cfg.agent
        return await self._call(self.retriever.relational, analysis, a.relational_pairs,  # type: ignore[no-any-return]
                                a.relational_limit, timeout=self.cfg.serve.store_timeout_s)

    async def _find_gaps(self, analysis: QueryAnalysis, ranked: list[Candidate]) -> list[Any]:
        return await self._call(self.retriever.find_gaps, analysis, ranked,  # type: ignore[no-any-return]
                                self.cfg.gaps.noise_floor)

    async def _fetch(self, gap: Any) -> list[Any]:
        """The first source that has literature for the gap's entities (sources in config order),
        each search within the gap-completion time budget."""
        from medgraph.literature import fetch_first

        g = self.cfg.gaps
        terms = await self._call(self.analyzer.search_terms, gap)
        return await fetch_first(self.sources, terms, g.max_results, g.time_budget_s)

    async def _ingest(self, records: list[Any]) -> Any:
        return await self._call(self.retriever.ingest, records, timeout=self.cfg.gaps.time_budget_s)

    async def _generate(self, tier: str, question: str, analysis: QueryAnalysis, evidence: list[Candidate]
                        ) -> AsyncIterator[dict[str, Any]]:
        engine = self.engines[self.cfg.tiers.engine_for(tier)]
        gen = engine.options(stream=True).stream.remote(question, analysis, evidence)
        async for event in calls.stream(
            gen, first_timeout=self.answer_timeout_s, timeout=self.cfg.serve.answer_timeout_s,  # first: a wake
            late=lambda: AgentUnavailable(LATE_TIER),
            translate=_unavailable,
        ):
            yield event

    # --- entry points --------------------------------------------------------------------------

    async def run(self, request: AgentRequest) -> dict[str, Any]:
        return answer_body(await self.agent.run(request))

    async def stream(self, request: AgentRequest) -> AsyncIterator[dict[str, Any]]:
        async for event in self.agent.events(request):
            if "final" in event:
                yield {"done": answer_body(event["final"])}
            elif "node" in event:
                yield {"status": event["node"]}
            else:
                yield event


def _unavailable(exc: BaseException) -> Exception | None:
    reason = unavailable_reason(exc)
    return AgentUnavailable(reason) if reason is not None else None
