"""The Serve application's agent, built in one process (no Serve hops): for benchmarks and the
answer evaluation (``python -m medgraph.eval answers``).

Input: a ``MedGraphConfig`` (its stores must exist). Output: ``InProcessAgent`` — the LangGraph
``Agent`` wired to the same services the Serve deployments run (``serve.services``: analyzer,
retriever, reranker, router) and the small tier's engine, plus those services for callers that
time the plain query path. Call ``close()`` to release the stores.
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
    engine: Any

    def close(self) -> None:
        self.retriever.graph.close()
        self.retriever.vectors.close()


def build_agent(cfg: MedGraphConfig) -> InProcessAgent:
    """An in-process agent over the config's stores (gap completion and memory as configured)."""
    from medgraph.agent.graph import Agent, AgentDeps
    from medgraph.agent.guard import make_guard
    from medgraph.agent.rewrite import make_rewriter
    from medgraph.generate.engines import make_engine
    from medgraph.literature import make_sources
    from medgraph.memory.longterm import LongTermMemory
    from medgraph.memory.sessions import SessionStore
    from serve.agent import make_planner, settings_from
    from serve.services import AnalyzerService, RerankerService, RetrieverService, RouterService

    analyzer, retriever, reranker = AnalyzerService(cfg), RetrieverService(cfg), RerankerService(cfg)
    router = RouterService(cfg)
    # the extractive composer shares the retriever's embedder (one copy of the weights)
    engine = make_engine(cfg.tiers.engines[cfg.tiers.engine_for("small")], cfg.answer,
                         embedder=retriever.retriever.embedder)
    sources = make_sources(cfg.gaps)

    async def generate(tier: str, question: str, analysis: Any, evidence: list[Any]) -> Any:
        for event in engine.stream(question, analysis, evidence):
            yield {"delta": event} if isinstance(event, str) else {"answer": event}

    async def fetch(gap: Any) -> list[Any]:
        terms = analyzer.search_terms(gap)
        for source in sources:
            records = source.search(terms, cfg.gaps.max_results, cfg.gaps.time_budget_s)
            if records:
                return list(records)
        return []

    def sync(fn: Any) -> Any:
        async def call(*args: Any) -> Any:
            return fn(*args)
        return call

    deps = AgentDeps(
        guard=make_guard(cfg.guard), rewriter=make_rewriter(cfg.memory.rewriter),
        analyze=sync(analyzer.analyze), route=router.route, retrieve=sync(retriever.retrieve),
        rerank=sync(reranker.rerank),
        relational=sync(lambda a: retriever.relational(a, cfg.agent.relational_pairs, cfg.agent.relational_limit)),
        generate=generate, find_gaps=sync(lambda a, r: retriever.find_gaps(a, r, cfg.gaps.noise_floor)),
        fetch=fetch, ingest=sync(retriever.ingest),
        sessions=SessionStore(cfg.app.path), memory=LongTermMemory(cfg.app.path), settings=settings_from(cfg),
        planner=make_planner(cfg), bridges=sync(retriever.bridge_entities), entity_name=sync(retriever.entity_name),
        mentions=sync(retriever.chunk_entities),
    )
    return InProcessAgent(Agent(deps), analyzer, retriever, reranker, engine)
