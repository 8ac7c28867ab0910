"""Configuration schema: frozen pydantic models, one section per stage.

Input: the dict produced by ``medgraph.config.loader`` from YAML. Output: ``MedGraphConfig``.
Backends are tagged unions on ``kind``; each backend validates only its own fields. The corpus
build's sections live in ``pipeline.py``, the stores' in ``stores.py``, the LLM tiers' in
``llm.py``; this module holds the query-side sections and ``MedGraphConfig``, and every section
can be imported from here.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from medgraph import lang
from medgraph.config.base import _Model
from medgraph.config.llm import RouterConfig, TiersConfig
from medgraph.config.observe import TracingConfig
from medgraph.config.pipeline import (  # the corpus build's sections
    ChunkingConfig,
    EmbeddingConfig,
    LinkingConfig,
    NerConfig,
    NormaliseConfig,
    OcrConfig,
    OcrEngineName,
    ParseConfig,
    ParseEngine,
    PipelineConfig,
    RayConfig,
    StageResources,
    VocabularyConfig,
    VocabularySource,
)
from medgraph.config.stores import (  # the stores' sections
    EmbeddedGraphStoreConfig,
    GraphStoreConfig,
    Neo4jGraphStoreConfig,
    QdrantLocalConfig,
    QdrantServerConfig,
    StoresConfig,
    VectorStoreConfig,
)


def yaml_off(value: object) -> object:
    """YAML reads an unquoted ``off`` (``decompose: off``, ``--set a.b=off``) as false: the option ``"off"``."""
    return "off" if value is False else value


class FeedbackConfig(_Model):
    """Pseudo-relevance feedback of the ``feedback`` path (RM3-style expansion of the sparse query)."""

    docs: int = Field(default=3, ge=1)  # top chunks of the first sparse search read as feedback
    terms: int = Field(default=10, ge=1)  # expansion terms added to the query
    weight: float = Field(default=0.5, gt=0.0)  # weight of the strongest expansion term (query terms: 1)


class HopConfig(_Model):
    """The ``hop`` path: a second retrieval hop from the entities of the first hop's best passages."""

    passages: int = Field(default=3, ge=1)  # top chunks of the other paths' fused list read for entities
    max_chunks: int = Field(default=50, ge=1)  # an entity in more chunks than this is too common to bridge


class RetrievalConfig(_Model):
    """The query path: which retrieval paths run, how many candidates, how they are fused."""

    # names in the path registry (medgraph/retrieve/paths.py; the retriever refuses an unknown one)
    paths: tuple[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")], ...] = ("vector", "ppr")
    candidates: int = Field(default=40, ge=1)  # per path
    top_k: int = Field(default=8, ge=1)  # evidence handed to the answerer
    damping: float = Field(default=0.5, gt=0.0, lt=1.0)  # PPR: probability of following an edge
    # the ppr path runs only for questions with at least this many seeds: MeSH entities they link
    # (plus a signed-in user's interest seeds); 1 runs it whenever there is a seed
    ppr_min_entities: int = Field(default=1, ge=1)
    # each seed's weight × (chunks that mention it)^-ppr_specificity: 0 weighs seeds by their
    # linking score alone; 1 is HippoRAG's node specificity (a rare entity outweighs a common one).
    # Measured on the multi-hop dev set: no gain (docs/retrieval.md). ppr_engine: process only
    ppr_specificity: float = Field(default=0.0, ge=0.0, le=2.0)
    # where the ppr path runs: ``process``: an in-process PPR index (medgraph.retrieve.ppr) built from
    # the graph store's incidence, whatever the store (Neo4j included); ``store``: the store's own
    # ``ppr`` (GDS PageRank on Neo4j)
    ppr_engine: Literal["process", "store"] = "process"
    # process engine: the store's graph signature is checked at most this often (seconds, in the
    # background, when questions come); a change rebuilds the index in the background
    ppr_refresh_s: float = Field(default=5.0, ge=0.0)
    rrf_k: int = Field(default=60, ge=1)
    weights: dict[str, float] = Field(default_factory=lambda: {"vector": 1.0, "ppr": 0.5})
    language_filter: bool = False  # restrict vector search to the question's language
    # ``sparse`` / ``feedback`` (the question's own words) search only passages in its language; the
    # translate paths search the others (false: every passage, as before)
    lexical_own_language: bool = True
    # ``dense``: one search per corpus language (``languages``), merged by each score minus its
    # language's mean for this question (removes the language-pair bias of a multilingual model)
    dense_balance: bool = True
    feedback: FeedbackConfig = Field(default_factory=FeedbackConfig)
    hop: HopConfig = Field(default_factory=HopConfig)
    # ``translate``: the question is translated (ontology term substitution) into each of these
    # corpus languages other than its own, and each translation gets a sparse search of its own
    # (language pack codes; default: every registered pack)
    languages: tuple[str, ...] = Field(default_factory=lang.codes)
    names_per_entity: int = Field(default=2, ge=1)  # target-language names substituted per entity
    glosses_per_word: int = Field(default=4, ge=1)  # dictionary glosses of one German / Chinese word
    # ``translate_dense``: the translations into these languages are also searched by the dense path
    # (the glossary translates German and Chinese words into English; other translations substitute
    # entity names only, which the multilingual dense path gains little from)
    dense_translate: tuple[str, ...] = (lang.PIVOT,)
    analysis_cache: int = Field(default=1024, ge=0)  # questions whose NER + linking is cached
    # per question language, a factor per path multiplied into ``weights`` (``translate`` also scales
    # ``translate:<lang>``); e.g. ``{de: {sparse: 0.3}}``: German questions over an English corpus
    language_weights: dict[str, dict[str, Annotated[float, Field(ge=0.0)]]] = Field(default_factory=dict)

    @field_validator("languages", "dense_translate")
    @classmethod
    def _known_languages(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(lang.get(code).code for code in value)  # UnknownLanguage names the registered ones

    @field_validator("language_weights")
    @classmethod
    def _known_weight_languages(
        cls, value: dict[str, dict[str, float]]
    ) -> dict[str, dict[str, float]]:
        return {lang.get(code).code: weights for code, weights in value.items()}

    @model_validator(mode="after")
    def _in_process_graph(self) -> RetrievalConfig:
        # the hop path and seed specificity read the in-process index's chunk counts
        if self.ppr_engine == "store" and ("hop" in self.paths or self.ppr_specificity):
            raise ValueError("retrieval.paths 'hop' and retrieval.ppr_specificity need ppr_engine: process "
                             "(the in-process PPR index, whatever the graph store)")
        return self


class RerankConfig(_Model):
    """``features``: offline, a logistic model over retrieval features; ``cross_encoder``: model tier.

    ``order``: how the reranked list is ordered. ``relevance``: by the reranker's calibrated
    relevance; ``fused``: the fused order is kept and the relevance only decides refusal (what
    evidence is usable). The feature reranker's weights are set for refusal, not ranking, so the
    shipped configs use ``fused`` with it (chosen on the dev queries, docs/retrieval.md); a
    cross-encoder is a ranker, for which ``relevance`` is the natural order.
    """

    kind: Literal["features", "cross_encoder"] = "features"
    order: Literal["relevance", "fused"] = "relevance"
    model_path: str | None = None
    device: str = "cpu"
    batch_size: int = 16
    # logistic weights of the feature reranker (see medgraph/retrieve/rerank.py)
    weights: dict[str, float] = Field(default_factory=dict)
    # ... for a passage in another language than the question (overrides of ``weights``): term
    # overlap is weak evidence across languages, the multilingual dense similarity carries more
    cross_lingual_weights: dict[str, float] = Field(default_factory=dict)


# the extractive composer's sentence features (medgraph/generate/sentences.py) and their default weights
DEFAULT_SENTENCE_WEIGHTS = {"relevance": 1.0, "lexical": 1.0, "entity": 0.3, "type": 0.3, "role": 0.2, "dense": 1.0}


class AnswerConfig(_Model):
    kind: Literal["extractive"] = "extractive"
    max_sentences: int = Field(default=4, ge=1)
    max_per_chunk: int = Field(default=2, ge=1)
    min_relevance: float = Field(default=0.2, ge=0.0, le=1.0)  # refuse when no evidence reaches it
    # sentence selection (medgraph/generate/sentences.py): score = Σ weight · feature
    sentence_weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_SENTENCE_WEIGHTS))
    min_sentence_score: float = 0.5  # a sentence below this is not quoted; none left -> refuse
    relative_floor: float = Field(default=0.6, ge=0.0, le=1.0)  # ... nor one below this share of the best score
    findings_first: bool = True  # a document's aims / methods only when no finding or neutral sentence of it is left
    # question-sentence dense similarity (the embedding config's dense model, loaded by the engine):
    # off | cross_lingual (sentences in another language than the question) | all
    sentence_dense: Literal["off", "cross_lingual", "all"] = "cross_lingual"
    dense_passages: int = Field(default=5, ge=1)  # ... for the sentences of the top passages only
    dense_max_sentences: int = Field(default=8, ge=1)  # ... and at most this many (~30 ms each with e5)

    @field_validator("sentence_dense", mode="before")
    @classmethod
    def _sentence_dense_off(cls, value: object) -> object:
        return yaml_off(value)

    @field_validator("sentence_weights")
    @classmethod
    def _known_sentence_features(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = set(value) - set(DEFAULT_SENTENCE_WEIGHTS)
        if unknown:
            raise ValueError(f"unknown sentence features {sorted(unknown)}; known: {', '.join(DEFAULT_SENTENCE_WEIGHTS)}")
        return {**DEFAULT_SENTENCE_WEIGHTS, **value}


class DeploymentConfig(_Model):
    """One Serve deployment: replicas (fixed or autoscaled) and per-replica resources."""

    num_replicas: int = Field(default=1, ge=1)
    autoscaling: dict[str, float] | None = None  # min_replicas, max_replicas, target_ongoing_requests
    num_cpus: float = 0.25
    num_gpus: float = 0.0
    max_ongoing_requests: int = Field(default=32, ge=1)


class ServeConfig(_Model):
    """The Serve application. With embedded stores the retriever owns them: keep it at 1 replica."""

    host: str = "127.0.0.1"
    port: int = 8000
    request_timeout_s: float = Field(default=30.0, gt=0)
    # an answer from an LLM tier (generation, plus a wake when the tier sleeps: tiers.wake_timeout_s)
    answer_timeout_s: float = Field(default=120.0, gt=0)
    tier_admin: bool = True  # POST /tiers/{engine}/sleep and /wake (operators, benchmarks)
    store_timeout_s: float = Field(default=5.0, gt=0)  # readiness / store calls answer 503 after this
    max_body_bytes: int = Field(default=1 << 20, ge=1024)  # a larger request body is a 413
    # while keys are off (auth.required false): the host names a request may name (another is a 421:
    # a page that rebinds its own name to this address), and a POST from another site's page (its
    # Origin) is a 403; [] accepts any host. With keys on, the key is the check.
    allowed_hosts: list[str] = ["127.0.0.1", "localhost", "::1"]
    # Serve's per-call access log lines (one per deployment call: five per question). Off by
    # default: on a small machine writing and shipping them costs more CPU than answering.
    access_log: bool = False
    log_level: str = "INFO"
    # dense vectors kept by text in the retriever and the extractive tier (medgraph/embed/cache.py):
    # a sentence or translation already embedded is not run through the model again; 0: off
    embedding_cache: int = Field(default=4096, ge=0)
    # parts run inside the agent's replica instead of as deployments of their own (serve/colocated.py):
    # any of analyzer, reranker, router, extractive (the extractive tiers' engines). Saves the Serve
    # round trips between them (a small machine's CPU); [] scales each on its own (clusters)
    colocate: list[Literal["analyzer", "reranker", "router", "extractive"]] = []
    ingress: DeploymentConfig = DeploymentConfig()
    analyzer: DeploymentConfig = DeploymentConfig()
    retriever: DeploymentConfig = DeploymentConfig()
    reranker: DeploymentConfig = DeploymentConfig()
    router: DeploymentConfig = DeploymentConfig(num_cpus=0.05)  # routing rules; LLM tiers: tiers.engines.*.deployment
    # the LangGraph agent; with a SQLite app.path it owns the file and runs 1 replica (PostgreSQL: any number)
    agent: DeploymentConfig = DeploymentConfig(num_cpus=0.1)


class AgentConfig(_Model):
    """The agent's graph (medgraph/agent/graph.py): the relational channel and memory in context."""

    relational_weight: float = Field(default=0.5, ge=0.0)  # RRF weight of the relational channel (semantic 1)
    relational_pairs: int = Field(default=6, ge=1)  # question entity pairs searched for co-occurrence paths
    relational_limit: int = Field(default=10, ge=1)  # evidence chunks of the relational channel
    memories: int = Field(default=2, ge=0)  # the user's conversation memories recalled into the context
    interest_seed_weight: float = Field(default=0.3, ge=0.0, le=1.0)  # PPR seed weight of the top interest
    # multi-hop questions (medgraph/agent/plan.py, hops.py): rules: the offline planner; dspy: a DSPy
    # program on planner_engine (one of tiers.engines), the rules as its fallback; off: one hop
    decompose: Literal["rules", "dspy", "off"] = "rules"
    planner_engine: str | None = None
    hop_weight: float = Field(default=2.0, ge=0.0)  # RRF weight of each hop's list (the whole question's: 1)
    hop_passages: int = Field(default=3, ge=1)  # a hop's best passages that name its sub-answer
    bridge_seeds: int = Field(default=1, ge=1)  # bridge candidates seeding the next hop's PPR
    # sub-answer candidates that share a passage with the asking hop's entities come first
    bridge_connect: bool = True
    hop_retries: int = Field(default=0, ge=0)  # an unsupported hop re-run with the next bridge entity

    @field_validator("decompose", mode="before")
    @classmethod
    def _decompose_off(cls, value: object) -> object:
        return yaml_off(value)


# --- Gap completion: literature for missing evidence (medgraph/literature) ---------------------


class PubMedSourceConfig(_Model):
    """NCBI E-utilities; the API key is read from the environment variable ``api_key_env``."""

    kind: Literal["pubmed"]
    base_url: str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    api_key_env: str = "NCBI_API_KEY"
    email: str | None = None
    tool: str = "medgraph"
    rate_per_s: float | None = Field(default=None, gt=0)  # None: NCBI's 3/s, 10/s with an API key
    retries: int = Field(default=3, ge=0)
    timeout_s: float = Field(default=10.0, gt=0)  # per request


class LocalSourceConfig(_Model):
    """A directory of .txt / .md / .jsonl documents not yet in the stores."""

    kind: Literal["local"]
    path: str


LiteratureSourceConfig = Annotated[PubMedSourceConfig | LocalSourceConfig, Field(discriminator="kind")]


def _default_literature_sources() -> list[LiteratureSourceConfig]:
    return [LocalSourceConfig(kind="local", path="./.medgraph/literature")]


class FrontierConfig(_Model):
    """Frontier expansion after a corpus build (jobs/frontier.py): literature for the entities the
    corpus barely covers, fetched from ``gaps.sources`` and built by the same job. Off by default."""

    enabled: bool = False
    min_chunks: int = Field(default=2, ge=1)  # an entity in fewer chunks is on the frontier
    max_entities: int = Field(default=20, ge=1)  # the least covered searched per build
    per_entity: int = Field(default=3, ge=1)  # records fetched per entity
    timeout_s: float = Field(default=10.0, gt=0)  # per search
    path: str = ".medgraph/frontier"  # where the fetched records are written (<run_id>.jsonl)


class GapsConfig(_Model):
    """When retrieved evidence has gaps, fetch literature for the missing entities and ingest it live.

    Triggers (``medgraph.literature.gaps``): two question entities with no connecting evidence in
    the graph, or a single-entity question whose best evidence is below ``noise_floor``.
    """

    enabled: bool = True
    noise_floor: float = Field(default=0.3, ge=0.0, le=1.0)  # calibrated relevance of "weak" evidence
    max_tool_calls: int = Field(default=2, ge=0)  # literature searches per question
    time_budget_s: float = Field(default=20.0, gt=0)  # all fetching and ingesting of one question
    max_results: int = Field(default=5, ge=1)  # records per search
    max_pairs: int = Field(default=6, ge=1)  # entity pairs checked for connecting evidence
    sources: list[LiteratureSourceConfig] = Field(default_factory=lambda: _default_literature_sources())


# --- App state: sessions, long-term memory, API keys and quotas (medgraph/memory, medgraph/auth) ---


class AppConfig(_Model):
    """The app's own state (sessions, memories, users, keys, quota counts).

    ``path`` is a SQLite file (one machine) or a ``postgresql://`` URL (a server every replica
    reaches; the password comes from libpq's ``PGPASSWORD``, never from the config).
    """

    path: str = "./.medgraph/app.sqlite"


class RedisConfig(_Model):
    """Redis shared by every ingress and analyzer replica: daily quotas, the global concurrency
    cap with its queue, and the query-analysis cache. ``url`` None keeps them in each process
    (one machine). The password comes from the variable ``password_env`` names."""

    url: str | None = None  # redis://host:6379/0
    password_env: str = "REDIS_PASSWORD"
    prefix: str = "medgraph"  # every key starts with "<prefix>:"
    timeout_s: float = Field(default=0.5, gt=0)  # per command; a slower Redis counts as down
    cache_ttl_s: int = Field(default=86400, ge=0)  # query-analysis entries (0: no cache)
    slot_lease_s: float = Field(default=60.0, gt=0)  # a held slot not renewed in this time is freed


class RewriterConfig(_Model):
    """Short-term memory: the follow-up question rewriter (medgraph/agent/rewrite.py).

    ``rules``: offline pronoun / ellipsis resolution from the last ``window`` turns (each
    language pack's rewrite cues).
    ``dspy``: a DSPy program on ``engine`` (one of tiers.engines), falling back to the rules.
    """

    kind: Literal["rules", "dspy"] = "rules"
    engine: str | None = None
    window: int = Field(default=5, ge=1, le=20)  # turns of history the rewriter reads


class MemoryConfig(_Model):
    """Short-term (session turns) and long-term (per-user, decaying) memory of the agent."""

    half_life_days: float = Field(default=30.0, gt=0)  # interests and memories halve in weight in this time
    capacity_per_entity: int = Field(default=5, ge=1)  # memories kept per (user, MeSH entity)
    history_turns: int = Field(default=5, ge=0)  # last messages of the session given to the agent
    top_interests: int = Field(default=5, ge=0)  # strongest interests of a signed-in user used as context
    session_max_age_days: float = Field(default=30.0, gt=0)  # idle sessions older than this are deleted
    rewriter: RewriterConfig = RewriterConfig()  # follow-up questions made standalone (short-term memory)


class AuthConfig(_Model):
    """API keys, daily quotas and the concurrency gate of the HTTP API.

    ``required: false`` lets anonymous callers in (they share one quota bucket and get no
    long-term memory). Secrets never live in the config: ``admin_key_env`` and ``pepper_env``
    name the environment variables that hold them.
    """

    required: bool = False
    admin_key_env: str = "MEDGRAPH_ADMIN_KEY"  # a key (mgk_...) installed for the "admin" user on start
    pepper_env: str = "MEDGRAPH_KEY_PEPPER"  # HMAC key for stored key hashes (unset: plain SHA-256)
    per_user_daily: int = Field(default=200, ge=1)  # questions per user (anonymous: all together) a day
    global_daily: int = Field(default=5000, ge=1)  # questions per UTC day in total
    max_concurrent: int = Field(default=4, ge=1)  # questions answered at once; the rest wait in line
    max_queue: int | None = Field(default=64, ge=0)  # a longer line is refused at once (None: unbounded)
    # who may choose the answer tier (ChatRequest.tier, model medgraph-small|medium|large) instead of
    # the router: "admin" keeps an expensive sleeping tier from being woken by any caller
    force_tier: Literal["anyone", "admin"] = "anyone"


class CommunitySearchConfig(_Model):
    """The ``community`` retrieval path (add ``community`` to ``retrieval.paths`` to use it)."""

    when: Literal["overview", "always"] = "overview"  # overview: only overview / cross-corpus questions
    communities: int = Field(default=3, ge=1)  # best communities (summary search + entity membership)
    chunks_per_community: int = Field(default=4, ge=1)  # their cited chunks offered as candidates


class CommunitiesConfig(_Model):
    """Communities of the entity co-occurrence graph (medgraph/community, jobs/build_communities.py).

    Leiden: seeded, so reruns on the same graph give the same partition; level 0 is the coarsest,
    a community with more than ``max_cluster_size`` members is split at the next level.
    Summaries: ``extractive`` (offline) or ``llm`` (a DSPy program over ``engine`` of tiers.engines).
    """

    min_weight: int = Field(default=1, ge=1)  # co-occurrence edges need at least this many shared chunks
    resolution: float = Field(default=1.0, gt=0.0)
    max_cluster_size: int = Field(default=50, ge=2)
    max_levels: int = Field(default=3, ge=1)
    seed: int = 42
    randomness: float = Field(default=0.001, gt=0.0)
    iterations: int = Field(default=2, ge=1)
    min_size: int = Field(default=2, ge=1)  # smaller communities are not summarised or indexed
    summariser: Literal["extractive", "llm"] = "extractive"
    engine: str | None = None  # summariser llm: the engine of tiers.engines (openai kind) it calls
    summary_entities: int = Field(default=8, ge=1)  # central entities named in a summary
    summary_sentences: int = Field(default=4, ge=1)  # representative sentences cited
    evidence_chunks: int = Field(default=12, ge=1)  # chunks read per community to pick them from
    collection_suffix: str = Field(default="_communities", min_length=1)  # summaries: <collection><suffix>
    pool: StageResources = StageResources(num_cpus=0.5, min_actors=1, max_actors=2, batch_size=16)
    search: CommunitySearchConfig = CommunitySearchConfig()

class GuardConfig(_Model):
    """Guardrails (medgraph/agent/guard.py): hazard categories S1-S14 on questions and answers.

    ``rules``: the offline rule table (medgraph/agent/guard_rules.py, with each language pack's cues). ``llama_guard``:
    Llama Guard 3 on ``engine`` (one of tiers.engines), falling back to the rules when the call
    fails or the reply does not parse.
    """

    kind: Literal["rules", "llama_guard"] = "rules"
    engine: str | None = None
    require_disclaimer: bool = True  # output check reports a medical answer without the disclaimer


class MedGraphConfig(_Model):
    ray: RayConfig = RayConfig()
    pipeline: PipelineConfig = PipelineConfig()
    parse: ParseConfig = ParseConfig()
    vocabulary: VocabularyConfig = VocabularyConfig()
    chunking: ChunkingConfig = ChunkingConfig()
    normalise: NormaliseConfig = NormaliseConfig()
    ner: NerConfig = NerConfig()
    linking: LinkingConfig = LinkingConfig()
    embedding: EmbeddingConfig = EmbeddingConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    rerank: RerankConfig = RerankConfig()
    answer: AnswerConfig = AnswerConfig()
    serve: ServeConfig = ServeConfig()
    stores: StoresConfig = StoresConfig()
    router: RouterConfig = RouterConfig()  # medgraph/config/llm.py
    tiers: TiersConfig = TiersConfig()
    app: AppConfig = AppConfig()
    redis: RedisConfig = RedisConfig()  # shared quotas, concurrency and cache (None url: in process)
    memory: MemoryConfig = MemoryConfig()
    auth: AuthConfig = AuthConfig()
    gaps: GapsConfig = GapsConfig()  # gap completion (medgraph/literature)
    frontier: FrontierConfig = FrontierConfig()  # literature for under-covered entities after a build (jobs/frontier.py)
    communities: CommunitiesConfig = CommunitiesConfig()  # medgraph/community
    agent: AgentConfig = AgentConfig()  # the agent graph (medgraph/agent/graph.py)
    guard: GuardConfig = GuardConfig()  # medgraph/agent/guard.py
    tracing: TracingConfig = TracingConfig()  # OpenTelemetry traces (medgraph/observe/tracing.py)

    @model_validator(mode="after")
    def _communities_engine(self) -> MedGraphConfig:
        c = self.communities
        if c.summariser == "llm" and (c.engine is None or c.engine not in self.tiers.engines):
            raise ValueError(f"communities.summariser llm needs communities.engine in tiers.engines "
                             f"{sorted(self.tiers.engines)}, got {c.engine!r}")
        return self

    @model_validator(mode="after")
    def _agent_engines(self) -> MedGraphConfig:
        for key, kind, engine in (("guard", self.guard.kind, self.guard.engine),
                                  ("memory.rewriter", self.memory.rewriter.kind, self.memory.rewriter.engine)):
            if kind != "rules" and (engine is None or engine not in self.tiers.engines):
                raise ValueError(f"{key}.kind {kind} needs {key}.engine in tiers.engines "
                                 f"{sorted(self.tiers.engines)}, got {engine!r}")
        engine = self.agent.planner_engine
        if self.agent.decompose == "dspy" and (engine is None or engine not in self.tiers.engines):
            raise ValueError(f"agent.decompose dspy needs agent.planner_engine in tiers.engines "
                             f"{sorted(self.tiers.engines)}, got {engine!r}")
        return self

    @model_validator(mode="after")
    def _router_engine(self) -> MedGraphConfig:
        if self.router.engine is not None and self.router.engine not in self.tiers.engines:
            raise ValueError(f"router.engine {self.router.engine!r} is not in tiers.engines {sorted(self.tiers.engines)}")
        return self


__all__ = [
    "AgentConfig",
    "FrontierConfig",
    "AnswerConfig",
    "AppConfig",
    "AuthConfig",
    "ChunkingConfig",
    "CommunitiesConfig",
    "CommunitySearchConfig",
    "DEFAULT_SENTENCE_WEIGHTS",
    "DeploymentConfig",
    "EmbeddedGraphStoreConfig",
    "EmbeddingConfig",
    "FeedbackConfig",
    "GapsConfig",
    "GraphStoreConfig",
    "GuardConfig",
    "LinkingConfig",
    "LiteratureSourceConfig",
    "LocalSourceConfig",
    "MedGraphConfig",
    "MemoryConfig",
    "Neo4jGraphStoreConfig",
    "NerConfig",
    "NormaliseConfig",
    "OcrConfig",
    "OcrEngineName",
    "ParseConfig",
    "ParseEngine",
    "PipelineConfig",
    "PubMedSourceConfig",
    "QdrantLocalConfig",
    "QdrantServerConfig",
    "RayConfig",
    "RedisConfig",
    "RerankConfig",
    "RetrievalConfig",
    "RewriterConfig",
    "ServeConfig",
    "StageResources",
    "StoresConfig",
    "VectorStoreConfig",
    "VocabularyConfig",
    "VocabularySource",
]
