"""The Serve application's agent, built in one process (no Serve hops): for benchmarks and the
answer evaluation (``python -m medgraph.eval answers``).

Input: a ``MedGraphConfig`` (its stores must exist). Output: ``InProcessAgent`` — the LangGraph
``Agent`` wired to the same services the Serve deployments run (``serve.services``: analyzer,
retriever, reranker, router), with its own parts built by ``medgraph.assemble`` as the agent
deployment builds them (guard, rewriter, planner, session store and memory behind the store
time limit, literature sources), and the tiers' engines in this process (``LocalEngines``: each
tier answers with its own engine; the model tiers of the guard, rewriter, planner and router chat
with theirs). vLLM engines run only behind Serve. Call ``close()`` to release the stores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from medgraph.config import MedGraphConfig


@dataclass
class InProcessAgent:
    agent: Any  # medgraph.agent.graph.Agent
    analyzer: Any
    retriever: Any
    reranker: Any
    engines: Any  # medgraph.assemble.LocalEngines

    @property
    def engine(self) -> Any:
        """The small tier's engine (what a plain question is answered with)."""
        return self.engines.for_tier("small")

    def close(self) -> None:
        self.retriever.graph.close()
        self.retriever.vectors.close()


def build_agent(cfg: MedGraphConfig) -> InProcessAgent:
    """An in-process agent over the config's stores (gap completion and memory as configured)."""
    from medgraph.agent.graph import Agent, AgentDeps
    from medgraph.assemble import LocalEngines, build_agent_parts
    from medgraph.literature import fetch_first
    from serve.calls import BoundedStore, StatePool
    from serve.colocated import LocalHandle
    from serve.services import AnalyzerService, RerankerService, RetrieverService, RouterService

    analyzer = AnalyzerService(cfg)
    retriever = RetrieverService(cfg, extractor=analyzer.extractor)  # one vocabulary in this process
    reranker = RerankerService(cfg)
    # the extractive composer shares the retriever's embedder (one copy of the weights)
    engines = LocalEngines(cfg, embedder=retriever.retriever.embedder)
    r = cfg.router
    router = RouterService(cfg, LocalHandle(engines.get(r.engine)) if r.kind in ("llm", "dspy") and r.engine
                           else None)

    def link(text: str) -> list[tuple[str, str]]:
        return list(analyzer.analyze(text).linked)

    parts = build_agent_parts(cfg, engines.chat_for, link)
    g = cfg.gaps

    async def generate(tier: str, question: str, analysis: Any, evidence: list[Any]) -> Any:
        for event in engines.for_tier(tier).stream(question, analysis, evidence):
            yield {"delta": event} if isinstance(event, str) else {"answer": event}

    async def fetch(gap: Any) -> list[Any]:
        return await fetch_first(parts.sources, analyzer.search_terms(gap), g.max_results, g.time_budget_s)

    def sync(fn: Any) -> Any:
        async def call(*args: Any) -> Any:
            return fn(*args)
        return call

    state = StatePool(cfg.serve.store_timeout_s)
    gaps_on = bool(parts.sources)
    deps = AgentDeps(
        guard=parts.guard, rewriter=parts.rewriter,
        analyze=sync(analyzer.analyze), route=router.route, retrieve=sync(retriever.retrieve),
        rerank=sync(reranker.rerank),
        relational=sync(lambda a: retriever.relational(a, cfg.agent.relational_pairs, cfg.agent.relational_limit)),
        generate=generate,
        find_gaps=sync(lambda a, ranked: retriever.find_gaps(a, ranked, g.noise_floor)) if gaps_on else None,
        fetch=fetch if gaps_on else None, ingest=sync(retriever.ingest) if gaps_on else None,
        sessions=BoundedStore(parts.sessions, state), memory=BoundedStore(parts.memory, state),
        settings=parts.settings, planner=parts.planner, bridges=sync(retriever.bridge_entities),
        entity_name=sync(retriever.entity_name), mentions=sync(retriever.chunk_entities),
    )
    return InProcessAgent(Agent(deps), analyzer, retriever, reranker, engines)
