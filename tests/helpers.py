"""Helpers shared by test modules (plain functions, not fixtures).

``unavailable`` and ``require_module`` are the one way a test may be left out for a missing
dependency: it skips with the reason, unless the matching ``MEDGRAPH_REQUIRE_*`` variable is 1
(``.ci/run`` sets them all), where it fails. ``tests/unit/test_no_silent_skips.py`` keeps every
other skip out of the suite.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO = Path(__file__).resolve().parents[1]


# what each flag makes required: the services and data make test provides, and its Python extras
REQUIRE_FLAGS = {
    "MEDGRAPH_REQUIRE_SHARED": "../shared: data sets, Tesseract, the Qdrant server binary",
    "MEDGRAPH_REQUIRE_NEO4J": "the Neo4j + GDS server of cluster/neo4j",
    "MEDGRAPH_REQUIRE_LLM": "the llm-test extra: llama-cpp-python, litellm, dspy, the Gemma GGUF",
    "MEDGRAPH_REQUIRE_DEPS": "the dev and ml-test extras: torch, transformers, igraph, openai, ...",
    "MEDGRAPH_REQUIRE_POSTGRES": "the PostgreSQL server of cluster/postgres (app state)",
    "MEDGRAPH_REQUIRE_REDIS": "the Redis server of cluster/redis (quotas, concurrency, cache)",
    "MEDGRAPH_REQUIRE_BROWSER": "Debian's chromium, Playwright and the web interface's npm packages (make web)",
    "MEDGRAPH_REQUIRE_TRACING": "the Arize Phoenix tracing backend of cluster/phoenix (make tracing-start)",
}


def unavailable(reason: str, require: str) -> NoReturn:
    """Skip with ``reason``, or fail when the environment variable ``require`` is 1."""
    if require not in REQUIRE_FLAGS:
        raise ValueError(f"unknown flag {require!r}; one of {sorted(REQUIRE_FLAGS)}")
    if os.environ.get(require) == "1":
        pytest.fail(f"{reason} ({require}=1: {REQUIRE_FLAGS[require]} must be there)")
    pytest.skip(reason, allow_module_level=True)


def require_module(name: str, require: str = "MEDGRAPH_REQUIRE_DEPS", reason: str | None = None) -> ModuleType:
    """The imported module ``name``, or ``unavailable`` (skip, or fail under ``require``)."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        unavailable(reason or f"{name} is not installed ({exc})", require)


def require_disposable_neo4j(uri: str) -> None:
    """Go on only if the Neo4j at ``uri`` is a disposable dev server (``cluster/neo4j/neo4j-dev.sh``
    marks its database with a ``:MedGraphDisposable`` node when it comes up): the Neo4j tests
    delete the product's labels, and must never do that to a database someone else filled.
    Nothing answering, or an unmarked server, is ``unavailable`` (fails under MEDGRAPH_REQUIRE_NEO4J)."""
    from neo4j import GraphDatabase

    password = os.environ.get("NEO4J_DEV_PASSWORD")
    try:
        with GraphDatabase.driver(uri, auth=("neo4j", password) if password else None,
                                  connection_timeout=5) as driver, driver.session() as session:
            marked = session.run("MATCH (m:MedGraphDisposable) RETURN count(m) AS n").single()["n"]
    except Exception as exc:  # noqa: BLE001 - any failure means no usable server
        unavailable(f"no Neo4j answering at {uri} ({type(exc).__name__}: {exc}); start it with make neo4j-start",
                    "MEDGRAPH_REQUIRE_NEO4J")
    if not marked:
        unavailable(f"the Neo4j at {uri} is not a disposable dev server (no :MedGraphDisposable node; "
                    "cluster/neo4j/neo4j-dev.sh adds it): the tests will not delete its data", "MEDGRAPH_REQUIRE_NEO4J")


def server_services() -> dict[str, str]:
    """The URLs of the servers ``make test`` starts for the replicated app
    (``benchmarks.replicated``): ``qdrant``, ``redis`` and ``postgres`` from
    ``MEDGRAPH_QDRANT_URL``, ``MEDGRAPH_REDIS_URL`` and ``MEDGRAPH_APP_DB_URL``, after checking the
    disposable Neo4j dev server; a missing one is ``unavailable`` under its flag."""
    import httpx

    from benchmarks.replicated import NEO4J_URI

    require_disposable_neo4j(NEO4J_URI)

    def url(env: str, flag: str, what: str) -> str:
        value = os.environ.get(env, "").strip()
        if not value:
            unavailable(f"{env} is not set: start {what} (make test does)", flag)
        return value

    qdrant = url("MEDGRAPH_QDRANT_URL", "MEDGRAPH_REQUIRE_SHARED", "the Qdrant server (make qdrant-start)")
    redis_url = url("MEDGRAPH_REDIS_URL", "MEDGRAPH_REQUIRE_REDIS", "Redis (make redis-start)")
    pg = url("MEDGRAPH_APP_DB_URL", "MEDGRAPH_REQUIRE_POSTGRES", "PostgreSQL (make postgres-start)")
    try:
        httpx.get(f"{qdrant}/collections", timeout=5).raise_for_status()
    except httpx.HTTPError as exc:
        unavailable(f"no Qdrant server at {qdrant} ({exc})", "MEDGRAPH_REQUIRE_SHARED")
    return {"qdrant": qdrant, "redis": redis_url, "postgres": pg}


def store_counts(cfg: Any) -> dict[str, int]:
    """Graph-store counts plus the vector count, for the stores a config points at."""
    from medgraph.stores import make_graph_store, make_vector_store

    graph, vectors = make_graph_store(cfg.stores.graph), make_vector_store(cfg.stores.vector)
    try:
        return {**graph.counts(), "vectors": vectors.count()}
    finally:
        graph.close()
        vectors.close()


def index_tiny_corpus(
    tmp: Path, records: list[dict[str, Any]], vocab_sources: list[dict[str, str]], overrides: list[str] = ()
) -> tuple[Any, Any]:
    """(EvalIndex, config) of ``records`` indexed in ``tmp`` with the hashing embedder and a
    vocabulary built from ``vocab_sources``; the caller closes the index."""
    from medgraph.config import load_config
    from medgraph.eval.retrieval import open_index

    corpus = tmp / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    cfg = load_config(REPO / "configs" / "local.yaml", [
        "embedding.dense=hashing", f"vocabulary.path={tmp / 'vocab'}",
        f"vocabulary.sources={json.dumps(vocab_sources)}", *overrides,
    ])
    return open_index(corpus, cfg, home=tmp / "home"), cfg


def terms_vocabulary(tmp: Path, rows: list[tuple[str, str, str]]) -> Any:
    """A ``Vocabulary`` built from (mesh_id, lang, term) rows only (a ``multilingual_terms`` TSV in
    ``tmp``; English rows count as names, the others as synonyms)."""
    from medgraph.config.models import VocabularyConfig, VocabularySource
    from medgraph.ontology.build import build_vocabulary

    path = tmp / "terms.tsv"
    path.write_text("mesh_id\tlang\tterm\tsource\n" + "".join(
        f"{m}\t{lang}\t{t}\t{'x_name' if lang == 'en' else 'x'}\n" for m, lang, t in rows),
                    encoding="utf-8")
    return build_vocabulary(VocabularyConfig(sources=[VocabularySource(kind="multilingual_terms", path=str(path))]))


def save_tiny_xlmr(path: Path, texts: list[str], *, vocab_size: int, hidden: int, max_length: int,
                   max_positions: int) -> Any:
    """A tiny XLM-R encoder (2 layers, random weights) and a WordPiece tokenizer trained on
    ``texts``, saved as a Hugging Face model directory in ``path`` (nothing is downloaded).
    Returns the tokenizer."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast, XLMRobertaConfig, XLMRobertaModel

    tok = Tokenizer(models.WordPiece(unk_token="<unk>"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, handle_chinese_chars=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(texts * 3, trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=["<s>", "<pad>", "</s>", "<unk>"]))
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))]
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                        pad_token="<pad>", cls_token="<s>", sep_token="</s>",
                                        model_max_length=max_length)
    torch.manual_seed(0)
    config = XLMRobertaConfig(vocab_size=tokenizer.vocab_size, hidden_size=hidden, num_hidden_layers=2,
                              num_attention_heads=2, intermediate_size=64, max_position_embeddings=max_positions,
                              pad_token_id=tokenizer.pad_token_id, hidden_dropout_prob=0.0,
                              attention_probs_dropout_prob=0.0, initializer_range=0.5)  # distinct random vectors
    tokenizer.save_pretrained(str(path))
    XLMRobertaModel(config).save_pretrained(str(path))
    return tokenizer
