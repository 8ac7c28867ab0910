"""The community build without Ray: co-occurrence → Leiden → plan (what changed) → summaries.

Input: a graph store (embedded or Neo4j) and ``CommunitiesConfig``. Output: ``Detection`` (the
co-occurrence graph and the detected communities), a ``Plan`` (which communities need a new
summary, which keep theirs, which are gone) and ``SummaryInput`` records for the summariser.
``jobs/build_communities.py`` runs the summaries on a Ray actor pool and writes the results.

Incremental behaviour: the partition is recomputed from the whole graph (Leiden is global and
takes seconds), but summaries are not. A community's ID is a hash of its level and members, and
its ``key`` a hash of its members, its evidence chunks (content-hashed IDs) and the summary
settings: a community whose key is unchanged keeps its stored summary and vector, so new
documents only re-summarise the communities they changed. When the co-occurrence graph and the
settings are both unchanged since the last build (``community_meta``), nothing is recomputed.
``full=True`` (``--full``) re-summarises everything; a change of summariser or settings does so
by itself, because it changes every key.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace

from medgraph.community.summarise import (
    CentralEntity,
    Evidence,
    ExtractiveSummariser,
    LLMSummariser,
    Summariser,
    SummaryInput,
)
from medgraph.config.models import CommunitiesConfig, MedGraphConfig
from medgraph.graph.communities import Community
from medgraph.graph.cooccurrence import CooccurrenceGraph, build_cooccurrence, modularity
from medgraph.graph.leiden import LeidenParams, leiden_local, partition, to_communities
from medgraph.schemas import Mention, content_hash
from medgraph.stores.graph import CommunityStore, GraphReader


def leiden_params(cfg: CommunitiesConfig) -> LeidenParams:
    return LeidenParams(cfg.resolution, cfg.max_cluster_size, cfg.max_levels, cfg.seed, cfg.randomness,
                        cfg.iterations)


def settings_signature(cfg: CommunitiesConfig) -> str:
    """Hash of everything that shapes communities and summaries (not the search settings)."""
    shaping = cfg.model_dump(exclude={"pool", "search", "collection_suffix"})
    return content_hash(json.dumps(shaping, sort_keys=True))


@dataclass
class Detection:
    graph: CooccurrenceGraph
    communities: list[Community]
    backend: str  # "graspologic" or "gds"
    seconds: float
    modularity: float  # of level 0 on the co-occurrence graph


def cooccurrence(store: CommunityStore, cfg: CommunitiesConfig) -> CooccurrenceGraph:
    return build_cooccurrence(store.entity_chunk_pairs(), cfg.min_weight)


def detect(store: CommunityStore, cfg: CommunitiesConfig, graph: CooccurrenceGraph | None = None) -> Detection:
    """Leiden where the store's graph lives: GDS for Neo4j, graspologic-native otherwise."""
    graph = graph or cooccurrence(store, cfg)
    params = leiden_params(cfg)
    started = time.perf_counter()
    in_store = store.leiden(params, cfg.min_weight)
    assignments = in_store if in_store is not None else leiden_local(graph.edges, params)
    seconds = time.perf_counter() - started
    communities = [c for c in to_communities(assignments, params) if c.size >= cfg.min_size]
    top = partition(to_communities(assignments, params), 0)
    score = modularity(graph.edges, top, cfg.resolution) if top else 0.0
    return Detection(graph, communities, "gds" if in_store is not None else "graspologic", seconds, score)


def evidence_chunk_ids(community: Community, graph: CooccurrenceGraph, limit: int) -> list[str]:
    """Chunks naming the most distinct members (then the most member mentions), at most ``limit``."""
    by_chunk = graph.chunks_of(community.members)
    ranked = sorted(by_chunk, key=lambda c: (-len(by_chunk[c]), -sum(by_chunk[c].values()), c))
    return ranked[:limit]


@dataclass
class Plan:
    communities: list[Community]  # all, in store order; reused ones carry their summaries
    todo: list[Community] = field(default_factory=list)  # need a summary
    reused: list[Community] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # IDs stored before and gone now
    evidence: dict[str, list[str]] = field(default_factory=dict)  # community ID -> evidence chunk IDs


def plan(store: CommunityStore, detection: Detection, cfg: CommunitiesConfig, full: bool = False) -> Plan:
    """Which communities need a summary; see the module docstring."""
    previous = {c.community_id: c for c in store.communities()}
    signature = settings_signature(cfg)
    out = Plan([])
    for c in detection.communities:
        chunk_ids = evidence_chunk_ids(c, detection.graph, cfg.evidence_chunks)
        c = replace(c, key=content_hash(signature, *c.members, "|", *chunk_ids))
        out.evidence[c.community_id] = chunk_ids
        old = previous.get(c.community_id)
        if not full and old is not None and old.key == c.key and old.summary:
            c = replace(c, title=old.title, summary=old.summary, citations=old.citations,
                        top_entities=old.top_entities, summariser=old.summariser)
            out.reused.append(c)
        else:
            out.todo.append(c)
        out.communities.append(c)
    current = {c.community_id for c in out.communities}
    out.removed = sorted(set(previous) - current)
    return out


def central_weights(communities: list[Community], graph: CooccurrenceGraph) -> dict[str, dict[str, float]]:
    """Community ID → member → weighted degree inside the community."""
    where: dict[int, dict[str, str]] = defaultdict(dict)
    for c in communities:
        for m in c.members:
            where[c.level][m] = c.community_id
    out: dict[str, dict[str, float]] = {c.community_id: dict.fromkeys(c.members, 0.0) for c in communities}
    for a, b, w in graph.edges:
        for level_map in where.values():
            ca = level_map.get(a)
            if ca is not None and ca == level_map.get(b):
                out[ca][a] += w
                out[ca][b] += w
    return out


def summary_inputs(store: GraphReader, items: list[Community], graph: CooccurrenceGraph, evidence: dict[str, list[str]],
                   n_entities: int) -> list[SummaryInput]:
    """What the summariser reads: central entities with names, evidence chunks with member mentions."""
    weights = central_weights(items, graph)
    mentions: dict[str, list[Mention]] = {}
    out = []
    for c in items:
        ranked = sorted(c.members, key=lambda m: (-weights[c.community_id][m], m))[:n_entities]
        entities = []
        for mesh_id in ranked:
            e = store.get_entity(mesh_id)
            entities.append(CentralEntity(mesh_id, e.name if e else mesh_id, e.category if e else "",
                                          weights[c.community_id][mesh_id]))
        chunks = store.get_chunks(evidence.get(c.community_id, []))
        members = set(c.members)
        found = []
        for chunk in chunks:
            if chunk.chunk_id not in mentions:
                mentions[chunk.chunk_id] = store.chunk_mentions(chunk.chunk_id)
            found.append(Evidence(chunk, tuple(m for m in mentions[chunk.chunk_id] if m.mesh_id in members)))
        out.append(SummaryInput(c, entities, found))
    return out


def make_summariser(cfg: MedGraphConfig) -> Summariser:
    """The configured summariser: extractive, or the DSPy program on ``communities.engine``."""
    c = cfg.communities
    if c.summariser == "extractive":
        return ExtractiveSummariser(c.summary_entities, c.summary_sentences)
    assert c.engine is not None  # checked by MedGraphConfig
    from medgraph.config.llm import LlamaCppEngineConfig, OpenAIEngineConfig
    from medgraph.llm.base import ChatModel
    from medgraph.llm.dspy_bridge import chat_lm

    engine = cfg.tiers.engines[c.engine]
    model: ChatModel
    if isinstance(engine, LlamaCppEngineConfig):
        from medgraph.llm.llamacpp import LlamaCppModel

        model = LlamaCppModel(engine)
    elif isinstance(engine, OpenAIEngineConfig):
        from medgraph.llm.openai_compat import OpenAICompatModel

        model = OpenAICompatModel(engine)
    else:
        raise ValueError(f"communities.engine {c.engine!r} is a {engine.kind} engine; the summariser needs "
                         "a llamacpp or openai one")
    model.wake()  # load the weights / check the key once, in the process that summarises
    return LLMSummariser(chat_lm(model, name=c.engine), f"llm:{c.engine}", c.summary_entities,
                         max(c.summary_sentences, 6))
