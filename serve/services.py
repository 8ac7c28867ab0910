"""The Serve deployments as plain classes: each takes the config and builds what it owns with
``medgraph.assemble`` (the builders the evaluation and the benchmarks use too).

``serve/app.py`` turns them into deployments (``serve.deployment(...).bind(...)``); tests build
them directly. Inputs and outputs are the records of ``medgraph.retrieve`` and
``medgraph.generate``.

- ``AnalyzerService``: NER + linking of questions (cached in the replica, and in Redis when
  ``redis.url`` is set) and of entity names.
- ``RetrieverService``: owns the stores (with embedded stores: the single owner process), the
  query embedder and the PPR index (built at start-up from the graph store's incidence for
  ``retrieval.ppr_engine: process``, whatever the store; it follows the store's graph signature
  and is rebuilt in the background, and at once after a live ingest); retrieval and the agent's
  graph calls, readiness; by role, the explorer's reads (``GraphExplorer``: entity neighbourhoods,
  the chunks two entities share, stored passages, communities, the corpus builds) and gap
  completion (``LiveIngestion``: evidence gaps, fetched literature indexed live).
- ``RerankerService``: calibrated relevance of each candidate.
- ``RouterService``: the tier of each question (``medgraph.route``: rules, or an LLM classifier
  calling one engine's ``TierService.chat``, falling back to the rules).

The Serve app answers through the agent (serve/agent.py) and the per-engine ``TierService``
(serve/tiers.py).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from medgraph import lang
from medgraph.config import MedGraphConfig
from medgraph.llm.base import ChatParams
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.route.types import RouteDecision
from medgraph.stores.graph import CommunityStore, GraphReader, GraphStore, RunLog

if TYPE_CHECKING:
    from medgraph.link import EntityExtractor
    from medgraph.literature.base import LiteratureRecord
    from medgraph.literature.gaps import Gap
    from medgraph.literature.ingest import IngestReport, LiveIngestor
    from medgraph.retrieve.retriever import RetrievalResult, Retriever
    from medgraph.schemas import Chunk
    from medgraph.stores.vector import VectorStore

log = logging.getLogger(__name__)


class AnalyzerService:
    def __init__(self, cfg: MedGraphConfig) -> None:
        from medgraph.assemble import build_analyzer, load_extractor
        from medgraph.retrieve.analysis_cache import analysis_version, make_analysis_cache

        self.extractor = load_extractor(cfg)
        vocab = self.extractor.vocab
        # LRU in the replica, in front of Redis when redis.url is set (shared by every analyzer replica)
        self.analyzer = build_analyzer(cfg, self.extractor, cache=make_analysis_cache(cfg, analysis_version(cfg, vocab)))
        if cfg.linking.compose:  # built here, not on the first German or Chinese question (~2 s)
            self.extractor.linker.composer  # noqa: B018
        if cfg.linking.tfidf:  # the fuzzy name index (explorer lookups), built beside the first requests
            threading.Thread(target=lambda: self.extractor.linker.tfidf, name="tfidf-warm-up", daemon=True).start()
        # the glossary and its tables for translating into German and Chinese, read before the
        # replica takes requests (saved with the vocabulary; a vocabulary saved before they were
        # builds them here, ~5-9 s, rather than while the first questions wait for their analysis)
        glossary = vocab.glossary
        for language in glossary.languages():
            glossary.from_english("warm-up", language)

    def analyze(self, question: str, language: str | None = None) -> QueryAnalysis:
        return self.analyzer.analyze(question, language)

    def link_name(self, name: str, language: str | None = None) -> str | None:
        """The MeSH ID of an entity name in any language (dictionary, then fuzzy), or None."""
        result = self.extractor.linker.link(name, language or lang.PIVOT)
        return result.mesh_id

    def search_terms(self, gap: Gap) -> list[str]:
        """A gap's entities' English MeSH names and synonyms (the vocabulary knows entities the
        corpus never mentions), for the literature sources."""
        from medgraph.literature.gaps import search_terms

        return search_terms(gap, self.extractor.vocab.get)

    def stats(self) -> dict[str, int]:
        return {"analysis_cache_hits": self.analyzer.hits, "analysis_cache_misses": self.analyzer.misses}


class ExplorerStore(GraphReader, CommunityStore, RunLog, Protocol):
    """What the explorer reads of the graph store: the graph, its communities and the build log."""


class GraphExplorer:
    """The explorer's and the corpus page's reads (no retrieval, no writes): an entity's
    neighbourhood, the chunks two entities share, one passage, the communities, the builds."""

    def __init__(self, graph: ExplorerStore) -> None:
        self.graph = graph

    def entity(self, mesh_id: str, hops: int = 1, limit: int = 25) -> dict[str, Any] | None:
        entity = self.graph.get_entity(mesh_id)
        if entity is None:
            return None
        edges = self.graph.neighbourhood(mesh_id, hops=hops, limit=limit)
        ids = {t for _, t, _ in edges} | {s for s, _, _ in edges}
        nodes = {i: self.graph.get_entity(i) for i in ids}
        return {"entity": entity, "edges": edges, "nodes": {i: e for i, e in nodes.items() if e is not None},
                "communities": self.entity_communities(mesh_id)}

    def edge(self, source: str, target: str, limit: int = 20) -> dict[str, Any]:
        """The co-occurrence edge of two entities: up to ``limit`` chunks that mention both (by
        chunk ID), as passages; ``unknown`` lists the IDs the graph does not hold (then no chunks)."""
        unknown = [m for m in dict.fromkeys((source, target)) if self.graph.get_entity(m) is None]
        if unknown:
            return {"unknown": unknown, "chunks": []}
        ids = self.graph.connecting_evidence(source, target, limit).chunk_ids
        return {"unknown": [], "chunks": [passage(c) for c in self.graph.get_chunks(ids)]}

    def chunk(self, chunk_id: str) -> dict[str, Any] | None:
        """One stored chunk as a passage (with its language), or None."""
        found = self.graph.get_chunks([chunk_id])
        return {**passage(found[0]), "language": found[0].language} if found else None

    def runs(self, limit: int = 20, failures: int = 50) -> list[dict[str, Any]]:
        """The ``limit`` latest builds, newest first, each with its failure count and first
        ``failures`` failures (as the store holds them: a failure that recurs is kept under the
        latest run that recorded it)."""
        runs = []
        for run in self.graph.runs(limit):  # each run's failures read up to ``failures``, counted in the store
            found = self.graph.failures(run["run_id"], limit=failures)
            runs.append({**run, "failure_count": self.graph.failure_count(run["run_id"]),
                         "failures": [{"source": f.source, "stage": f.stage, "reason": f.reason, "doc_id": f.doc_id}
                                      for f in found]})
        return runs

    def communities(self, level: int | None = None, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        """One page of the stored communities (one level or all), by level then largest first, with
        sizes and summaries; ``levels``: how many each level has, so one call draws a view."""
        levels = self.graph.community_levels()
        page = self.graph.communities(level=level, limit=limit, offset=offset)
        return {"total": levels.get(level, 0) if level is not None else sum(levels.values()),
                "levels": {str(k): n for k, n in levels.items()}, "meta": self.graph.community_meta(),
                "communities": [c.public() for c in page]}

    def entity_communities(self, mesh_id: str) -> list[dict[str, Any]]:
        """The communities an entity belongs to, coarsest first (ID, level, parent, size, title)."""
        ids = self.graph.entity_communities([mesh_id]).get(mesh_id, [])
        by_id = {c.community_id: c for c in self.graph.communities(ids=ids)} if ids else {}
        return [{"community_id": c.community_id, "level": c.level, "parent_id": c.parent_id, "size": c.size,
                 "title": c.title} for c in (by_id[i] for i in ids if i in by_id)]


class LiveIngestion:
    """Gap completion's side of the stores: the question's evidence gaps, and fetched literature
    indexed into the live stores (then the retriever's graph index refreshed)."""

    def __init__(self, cfg: MedGraphConfig, graph: GraphStore, vectors: VectorStore, retriever: Retriever,
                 extractor: EntityExtractor | None = None) -> None:
        self.cfg, self.graph, self.vectors, self.retriever = cfg, graph, vectors, retriever
        self.extractor = extractor  # None: loaded by build_ingestor on first use
        self._lock = threading.Lock()
        self._ingestor: LiveIngestor | None = None

    def ingest(self, records: list[LiteratureRecord]) -> IngestReport:
        """Index ``LiteratureRecord`` documents into the live stores (this replica owns them), then
        refresh the graph index; returns the ``IngestReport``."""
        report = self.ingestor().ingest(records)
        if report.chunk_ids:
            self.retriever.refresh()
        return report

    def find_gaps(self, analysis: QueryAnalysis, ranked: list[Candidate], noise_floor: float | None = None) -> list[Gap]:
        """The question's evidence gaps in this replica's graph (``medgraph.literature.gaps``)."""
        from medgraph.literature.gaps import find_gaps

        floor = self.cfg.gaps.noise_floor if noise_floor is None else noise_floor
        gaps = find_gaps(analysis, ranked, self.retriever.served_graph, floor, self.cfg.gaps.max_pairs)
        # a gap in the served index may be evidence another replica ingested since its last poll:
        # follow the store first rather than fetch that literature again
        if any(g.kind == "unconnected" for g in gaps) and self.retriever.follow_store():
            gaps = find_gaps(analysis, ranked, self.retriever.served_graph, floor, self.cfg.gaps.max_pairs)
        return gaps

    def ingestor(self) -> LiveIngestor:
        """The live ingestor, built once on first use (it loads the vocabulary for NER + linking)."""
        with self._lock:
            if self._ingestor is None:
                from medgraph.assemble import build_ingestor

                self._ingestor = build_ingestor(self.cfg, self.graph, self.vectors, self.extractor,
                                                self.retriever.embedder)
            return self._ingestor


class RetrieverService:
    """The retriever deployment: it owns the stores and serves every role that reads or writes them
    (retrieval and the agent's graph calls here; the explorer's reads in ``GraphExplorer``; gap
    completion's in ``LiveIngestion``), each method one line to the role that implements it."""

    def __init__(self, cfg: MedGraphConfig, extractor: EntityExtractor | None = None) -> None:
        """``extractor``: NER + linking for live ingestion, when the caller has one loaded (the
        in-process agent shares its analyzer's); else loaded here on first use."""
        from medgraph.assemble import build_retriever
        from medgraph.stores import make_graph_store, make_vector_store

        self.cfg = cfg
        self.graph = make_graph_store(cfg.stores.graph)
        self.vectors = make_vector_store(cfg.stores.vector)
        self.retriever = build_retriever(cfg, self.graph, self.vectors)
        self.explorer = GraphExplorer(self.graph)
        self.live = LiveIngestion(cfg, self.graph, self.vectors, self.retriever, extractor)
        if cfg.gaps.enabled and cfg.gaps.sources:
            # gap completion ingests in this replica: load its NER + linking now, in the background,
            # rather than inside the first gap's time budget
            threading.Thread(target=self.live.ingestor, name="ingestor-warm-up", daemon=True).start()

    # --- retrieval and the agent's graph calls ------------------------------------------------

    def retrieve(self, analysis: QueryAnalysis) -> RetrievalResult:
        return self.retriever.retrieve(analysis)

    def bridge_entities(self, chunk_ids: list[str], exclude: set[str], kind: str | None = None,
                        toward: Sequence[str] = ()) -> list[tuple[str, float]]:
        """A hop's candidate sub-answers: the entities joining its passages to others (``Retriever``)."""
        return self.retriever.bridge_entities(chunk_ids, exclude, kind, toward)

    def chunk_entities(self, chunk_ids: list[str]) -> dict[str, set[str]]:
        return self.graph.chunk_entities(chunk_ids)

    def entity_name(self, mesh_id: str, language: str) -> str | None:
        from medgraph.agent.hops import entity_name

        return entity_name(self.graph.get_entity(mesh_id), language)

    def relational(self, analysis: QueryAnalysis, max_pairs: int = 6, limit: int = 10) -> list[Candidate]:
        """The agent's relational channel: chunks on co-occurrence paths between the question's
        entities, with reranker features."""
        from medgraph.agent.relational import relational_evidence

        cands = relational_evidence(self.retriever.served_graph, analysis.entity_ids, max_pairs, limit)
        if cands:
            self.retriever.featurise(analysis, cands)
        return cands

    # --- the explorer (GraphExplorer) ------------------------------------------------------------

    def entity(self, mesh_id: str, hops: int = 1, limit: int = 25) -> dict[str, Any] | None:
        return self.explorer.entity(mesh_id, hops, limit)

    def edge(self, source: str, target: str, limit: int = 20) -> dict[str, Any]:
        return self.explorer.edge(source, target, limit)

    def chunk(self, chunk_id: str) -> dict[str, Any] | None:
        return self.explorer.chunk(chunk_id)

    def communities(self, level: int | None = None, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        return self.explorer.communities(level, limit, offset)

    def entity_communities(self, mesh_id: str) -> list[dict[str, Any]]:
        return self.explorer.entity_communities(mesh_id)

    def corpus(self, limit: int = 20, failures: int = 50) -> dict[str, Any]:
        """Store counts (``ready`` without ``last_run``) and the ``limit`` latest builds
        (``GraphExplorer.runs``)."""
        return {"stores": self._counts(), "runs": self.explorer.runs(limit, failures)}

    # --- gap completion (LiveIngestion) ----------------------------------------------------------

    def ingest(self, records: list[LiteratureRecord]) -> IngestReport:
        return self.live.ingest(records)

    def find_gaps(self, analysis: QueryAnalysis, ranked: list[Candidate], noise_floor: float | None = None) -> list[Gap]:
        return self.live.find_gaps(analysis, ranked, noise_floor)

    # --- readiness ----------------------------------------------------------------------------

    def ready(self) -> dict[str, Any]:
        """Store counts and the in-process PPR index's generation and build times (``ppr_index``,
        absent with ``retrieval.ppr_engine: store``); raises ``StoreUnavailable`` when a store
        cannot answer."""
        return {**self._counts(), "last_run": self.graph.last_run()}

    def _counts(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.graph.counts(), "vectors": self.vectors.count()}
        if self.retriever.ppr_index is not None:
            out["ppr_index"] = self.retriever.ppr_index.stats()
        return out


def passage(chunk: Chunk) -> dict[str, Any]:
    """A stored chunk as the API shows a passage: where it is from and its text."""
    return {"chunk_id": chunk.chunk_id, "doc_id": chunk.doc_id, "title": chunk.title, "source_id": chunk.source_id,
            "section_path": list(chunk.section_path), "page": chunk.page, "text": chunk.text}


class RerankerService:
    def __init__(self, cfg: MedGraphConfig) -> None:
        from medgraph.assemble import build_reranker

        self.reranker = build_reranker(cfg)

    def rerank(self, question: str, candidates: list[Candidate]) -> list[Candidate]:
        return self.reranker.rerank(question, candidates)


class ChatCall(Protocol):
    def remote(self, messages: list[dict[str, str]], params: ChatParams) -> Awaitable[str]: ...


class ClassifierHandle(Protocol):
    """The router's classifier engine: a ``TierService`` handle (``await handle.chat.remote(...)``),
    or an engine in this process behind a ``serve.colocated.LocalHandle``."""

    @property
    def chat(self) -> ChatCall: ...


class RouterService:
    """Routes a question to a tier. ``classifier``: the handle of the engine the LLM router uses.

    ``router.kind: dspy`` runs the DSPy router program (``medgraph.route.dspy_router``) with its
    one LM call awaited on the classifier handle (``TierService.chat``) through the DSPy bridge.
    """

    def __init__(self, cfg: MedGraphConfig, classifier: ClassifierHandle | None = None) -> None:
        from medgraph.route import RuleRouter
        from medgraph.route.llm import LLMRouter

        r = cfg.router
        self.rules = RuleRouter(r.small_max, r.medium_max)
        self.llm = LLMRouter(None, r.small_max, r.medium_max) if r.kind == "llm" else None
        self.classifier = classifier
        self.timeout_s = cfg.serve.request_timeout_s / 2
        self.dspy: Any = None
        self.dspy_lm: Any = None
        if r.kind == "dspy":
            self._build_dspy(cfg)
            if classifier is None:
                log.warning("router.kind dspy without a handle of engine %r: routing by rules", r.engine)

    def _build_dspy(self, cfg: MedGraphConfig) -> None:
        from medgraph.llm.dspy_bridge import chat_lm
        from medgraph.route.dspy_router import PARAMS, DSPyRouter, load_program

        r = cfg.router
        program = load_program(r.program, r.reasoning) if r.program else None
        self.dspy = DSPyRouter(None, r.small_max, r.medium_max, program=program, reasoning=r.reasoning,
                               history=False)
        self.dspy_lm = chat_lm(achat=self._classifier_chat, name=f"router-{r.engine}", params=PARAMS)

    async def _classifier_chat(self, messages: list[dict[str, str]], params: ChatParams) -> str:
        if self.classifier is None:
            raise RuntimeError("router.kind dspy: no classifier engine handle was given")
        return str(await asyncio.wait_for(self.classifier.chat.remote(messages, params), self.timeout_s))

    async def route(self, analysis: QueryAnalysis, tier: str | None = None) -> RouteDecision:
        if tier is not None:  # the caller chose the tier: keep the rules' explanation, mark it forced
            decision = self.rules.route(analysis)
            return RouteDecision(**{**decision.__dict__, "tier": tier, "method": "forced"})
        if self.dspy is not None and self.classifier is not None:
            decision: RouteDecision = await self.dspy.aroute(analysis, self.dspy_lm)
            return decision
        if self.llm is None or self.classifier is None:
            return self.rules.route(analysis)
        try:
            from medgraph.route.llm import PARAMS

            raw = await asyncio.wait_for(self.classifier.chat.remote(self.llm.messages(analysis), PARAMS),
                                         self.timeout_s)
        except Exception as exc:  # noqa: BLE001 - an unavailable classifier falls back to the rules
            return self.llm.decide(analysis, None, f"{type(exc).__name__}: {exc}")
        return self.llm.decide(analysis, str(raw))
