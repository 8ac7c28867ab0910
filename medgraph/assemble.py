"""Build the system's parts from the config, in one place.

Every place that runs the system builds its parts here: the Serve deployments (``serve/services.py``,
``serve/agent.py``, ``serve/app.py``), the in-process agent of the answer evaluation
(``serve/inprocess.py``), the retrieval evaluation (``medgraph/eval/retrieval.py``) and the
benchmarks. A benchmark therefore measures the parts that are served, built with the same
settings.

What differs between the callers is passed in, never rebuilt here:
- the stores: the Serve retriever opens ``cfg.stores``, the evaluation its cached index;
- the model tiers' chat: ``chat_for(engine, max_tokens)`` returns a blocking
  ``chat(messages, params=None) -> str`` on engine ``engine`` (a Serve handle in the app, the engine
  object in process: ``LocalEngines.chat_for``). ``chat_for=None`` builds the offline tiers only, and a
  configured model tier raises a ``ValueError`` that names the engine it needed;
- how earlier conversation turns are linked (``find_entities``: the analyzer deployment in the app,
  the analyzer object in process).

Nothing here imports Ray.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from medgraph.config import MedGraphConfig

if TYPE_CHECKING:
    from medgraph.agent.graph import AgentSettings
    from medgraph.embed.base import Embedder
    from medgraph.link import EntityExtractor
    from medgraph.literature.base import LiteratureSource
    from medgraph.literature.ingest import LiveIngestor
    from medgraph.retrieve.query import QueryAnalyzer
    from medgraph.retrieve.rerank import CandidateReranker
    from medgraph.retrieve.retriever import Retriever
    from medgraph.stores.graph import GraphStore
    from medgraph.stores.vector import VectorStore

log = logging.getLogger(__name__)

ChatFn = Callable[..., str]  # chat(messages, params=None) -> text
ChatFor = Callable[[str | None, int], ChatFn]  # (engine name, max_tokens) -> ChatFn
FindEntities = Callable[[str], list[tuple[str, str]]]  # text -> [(MeSH ID, surface)]

# the longest reply each model tier may write
GUARD_TOKENS = 16  # a verdict and its categories
REWRITER_TOKENS = 128  # one condensed question
PLANNER_TOKENS = 256  # a plan of up to four sub-queries


# --- engines ---------------------------------------------------------------------------------

def chat_engines(cfg: MedGraphConfig) -> list[str]:
    """The engines that the model tiers of the router, the guard, the rewriter and the planner
    chat with (each also needs a deployment in the Serve app)."""
    a = cfg.agent
    wanted = [cfg.router.engine if cfg.router.kind in ("llm", "dspy") else None,
              cfg.guard.engine if cfg.guard.kind == "llama_guard" else None,
              cfg.memory.rewriter.engine if cfg.memory.rewriter.kind == "dspy" else None,
              a.planner_engine if a.decompose == "dspy" else None]
    return list(dict.fromkeys(name for name in wanted if name))


class LocalEngines:
    """The config's engines as objects in this process, each built and woken on first use (no
    idle sleep here, unlike the tier deployments): the tiers' answers (``for_tier``) and the model
    tiers' chat (``chat_for``). vLLM engines run only behind Serve (``serve/vllm_engine.py``)."""

    def __init__(self, cfg: MedGraphConfig, embedder: Any = None) -> None:
        self.cfg, self.embedder = cfg, embedder  # the extractive composer's sentence embedder
        self._built: dict[str, Any] = {}
        self._lock = threading.Lock()  # the guard and rewriter chat from worker threads

    def get(self, name: str) -> Any:
        from medgraph.generate.engines import make_engine

        if name not in self.cfg.tiers.engines:
            raise ValueError(f"engine {name!r} is not configured; configured: {sorted(self.cfg.tiers.engines)}")
        with self._lock:
            if name not in self._built:
                engine = make_engine(self.cfg.tiers.engines[name], self.cfg.answer, embedder=self.embedder)
                engine.wake()
                self._built[name] = engine
            return self._built[name]

    def for_tier(self, tier: str) -> Any:
        return self.get(self.cfg.tiers.engine_for(tier))

    def chat_for(self, engine: str | None, max_tokens: int) -> ChatFn:
        from medgraph.llm.base import ChatParams

        if engine is None:
            raise ValueError("a model tier needs an engine name")
        model = self.get(engine)
        params = ChatParams(max_tokens=max_tokens, temperature=0.0)

        def chat(messages: list[dict[str, str]], p: Any = None) -> str:
            return str(model.chat(messages, p or params))

        return chat


# --- the query side: analysis, retrieval, reranking --------------------------------------------

def load_extractor(cfg: MedGraphConfig, vocab: Any = None) -> EntityExtractor:
    """NER + linking over the configured vocabulary (loaded, or built, when not given)."""
    from medgraph.link import EntityExtractor
    from medgraph.ontology.build import load_or_build

    return EntityExtractor(vocab if vocab is not None else load_or_build(cfg.vocabulary), cfg.ner, cfg.linking)


def build_analyzer(cfg: MedGraphConfig, extractor: EntityExtractor, *, cache: Any = None,
                   cache_size: int | None = None) -> QueryAnalyzer:
    """The question analyzer (NER, linking, translations) with the configured languages and
    glosses. ``cache_size`` defaults to ``retrieval.analysis_cache`` (0: no cache, as an evaluation
    that times each question wants); ``cache``: a shared cache in front (``make_analysis_cache``)."""
    from medgraph.retrieve.query import QueryAnalyzer

    r = cfg.retrieval
    return QueryAnalyzer(extractor, r.analysis_cache if cache_size is None else cache_size, r.languages,
                         r.names_per_entity, cache=cache, glosses_per_word=r.glosses_per_word)


def community_search(cfg: MedGraphConfig, graph: Any, vectors: Any) -> Any:
    """The ``community`` path's searcher when ``retrieval.paths`` has it, else None. With no
    communities in the store the path finds nothing; that is logged once here, not hidden."""
    if "community" not in cfg.retrieval.paths:
        return None
    from medgraph.community.index import CommunitySearch, summary_store

    try:
        built = sum(graph.community_levels().values())
    except Exception:  # noqa: BLE001 - a store that cannot answer now is reported by its own calls
        built = None
    if built == 0:
        log.warning("retrieval.paths has 'community' but the graph store has no communities "
                    "(python -m jobs.build_communities builds them): the path will find nothing")
    return CommunitySearch(cfg.communities, graph, summary_store(vectors, cfg.communities))


def build_retriever(cfg: MedGraphConfig, graph: Any, vectors: Any, embedder: Any = None) -> Retriever:
    """The fused retriever over ``graph`` and ``vectors`` with every configured path (the community
    index included), its graph index built (``warm_up``). ``embedder``: the query embedder
    (default: ``embedding`` as configured)."""
    from medgraph.embed import make_embedder
    from medgraph.retrieve.retriever import Retriever

    if embedder is None:  # its dense vectors kept by text (serve.embedding_cache): translations, hops
        embedder = make_embedder(cfg.embedding, cfg.serve.embedding_cache)
    retriever = Retriever(cfg.retrieval, graph, vectors, embedder, community_search(cfg, graph, vectors))
    retriever.warm_up()
    return retriever


def build_reranker(cfg: MedGraphConfig) -> CandidateReranker:
    from medgraph.retrieve.rerank import make_reranker

    return make_reranker(cfg.rerank)


def build_ingestor(cfg: MedGraphConfig, graph: GraphStore, vectors: VectorStore, extractor: EntityExtractor | None,
                   embedder: Embedder) -> LiveIngestor:
    """Live ingestion of fetched literature into ``graph`` and ``vectors`` (gap completion)."""
    from medgraph.literature.ingest import LiveIngestor

    return LiveIngestor(cfg, graph, vectors, extractor if extractor is not None else load_extractor(cfg), embedder)


# --- literature sources ------------------------------------------------------------------------

def build_sources(cfg: MedGraphConfig) -> list[LiteratureSource]:
    """The literature sources of gap completion; none when ``gaps.enabled`` is false."""
    from medgraph.literature import make_sources

    return make_sources(cfg.gaps) if cfg.gaps.enabled else []


# --- the agent's own parts -------------------------------------------------------------------

def agent_settings(cfg: MedGraphConfig) -> AgentSettings:
    from medgraph.agent.graph import AgentSettings

    a, m, g = cfg.agent, cfg.memory, cfg.gaps
    return AgentSettings(
        top_k=cfg.retrieval.top_k, history_turns=m.history_turns, top_interests=m.top_interests,
        interest_seed_weight=a.interest_seed_weight, memories=a.memories, relational_weight=a.relational_weight,
        relational_pairs=a.relational_pairs, rrf_k=cfg.retrieval.rrf_k, gaps_enabled=g.enabled,
        max_tool_calls=g.max_tool_calls, time_budget_s=g.time_budget_s, min_relevance=cfg.answer.min_relevance,
        decompose=a.decompose != "off", hop_weight=a.hop_weight, hop_passages=a.hop_passages,
        bridge_seeds=a.bridge_seeds, bridge_connect=a.bridge_connect, hop_retries=a.hop_retries,
    )


def _chat(chat_for: ChatFor | None, engine: str | None, max_tokens: int, what: str) -> ChatFn:
    if chat_for is None:
        raise ValueError(f"{what} needs the model tier of engine {engine!r}, and no chat was given "
                         "(build the parts with a chat_for, e.g. LocalEngines(cfg).chat_for)")
    return chat_for(engine, max_tokens)


def build_guard(cfg: MedGraphConfig, chat_for: ChatFor | None = None) -> Any:
    from medgraph.agent.guard import make_guard

    g = cfg.guard
    chat = _chat(chat_for, g.engine, GUARD_TOKENS, "guard.kind llama_guard") if g.kind == "llama_guard" else None
    return make_guard(g, chat)


def build_rewriter(cfg: MedGraphConfig, chat_for: ChatFor | None = None,
                   find_entities: FindEntities | None = None) -> Any:
    """The configured rewriter; its rules link earlier turns that carry no entities (history sent
    by an API caller) with ``find_entities``."""
    from medgraph.agent.rewrite import make_rewriter

    r = cfg.memory.rewriter
    if r.kind != "dspy":
        return make_rewriter(r, find_entities=find_entities)
    from medgraph.llm.dspy_bridge import chat_lm

    return make_rewriter(r, chat_lm(_chat(chat_for, r.engine, REWRITER_TOKENS, "memory.rewriter.kind dspy")),
                         find_entities=find_entities)


def build_planner(cfg: MedGraphConfig, chat_for: ChatFor | None = None) -> Any:
    """The configured question planner (``agent.decompose``), or None: every question one hop."""
    from medgraph.agent.plan import DSPyPlanner, RulePlanner

    a = cfg.agent
    if a.decompose == "off":
        return None
    if a.decompose == "rules":
        return RulePlanner()
    from medgraph.llm.dspy_bridge import chat_lm

    return DSPyPlanner(chat_lm(_chat(chat_for, a.planner_engine, PLANNER_TOKENS, "agent.decompose dspy")))


def open_memory(cfg: MedGraphConfig) -> tuple[Any, Any]:
    """(session store, long-term memory) at ``app.path``, with the configured ages and sizes."""
    from medgraph.memory.longterm import LongTermMemory
    from medgraph.memory.sessions import SessionStore

    m = cfg.memory
    return (SessionStore(cfg.app.path, max_age_s=m.session_max_age_days * 86400),
            LongTermMemory(cfg.app.path, m.half_life_days, m.capacity_per_entity))


@dataclass
class AgentParts:
    """What the agent owns between questions (the rest it calls: the analyzer, retriever, ...)."""

    guard: Any
    rewriter: Any
    planner: Any
    sessions: Any
    memory: Any
    settings: AgentSettings
    sources: list[Any]


def build_agent_parts(cfg: MedGraphConfig, chat_for: ChatFor | None = None,
                      find_entities: FindEntities | None = None) -> AgentParts:
    guard, rewriter, planner = build_guard(cfg, chat_for), build_rewriter(cfg, chat_for, find_entities), \
        build_planner(cfg, chat_for)  # a missing model tier fails here, before a store is opened
    sessions, memory = open_memory(cfg)
    return AgentParts(guard=guard, rewriter=rewriter, planner=planner, sessions=sessions, memory=memory,
                      settings=agent_settings(cfg), sources=build_sources(cfg))
