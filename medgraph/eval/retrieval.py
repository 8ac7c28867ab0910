"""Retrieval benchmark: every retrieval path, the fused list and the reranked list vs a BM25 baseline.

    python -m medgraph.eval retrieval --corpus CORPUS.jsonl [MORE.jsonl ...] --queries QUERIES.jsonl \
        [--config configs/local.yaml] [--set a.b=c ...] [--limit-queries N] [--json]
    python -m medgraph.eval retrieval --corpus ... --dev DEV.jsonl [--dev-range 1-500] \
        --test TEST.jsonl [--test-range 501-1000] [--tune ndcg@10] [--json]

Input: corpus JSONL files (``{doc_id, title, text | sections, language}``, read by the project's
loader; several files are one corpus, in order) and query JSONL files (``{query_id, text, language,
relevant_doc_ids, graded?: {doc_id: grade}}``). The corpus is indexed in-process with the
project's indexing pipeline (``medgraph.index.pipeline``: chunk, normalise, NER + linking, embed;
``CorpusWriter`` into embedded stores), the code the corpus job's stages run.
The index is cached under ``$MEDGRAPH_HOME/eval-cache/<key>`` (key: corpus file hashes + the
config sections that shape the index), so a re-run with other retrieval settings only queries.

Dev / test protocol: ``--dev`` and ``--test`` name the two query sets (``--dev-range`` /
``--test-range``: 1-based inclusive line ranges of a file, e.g. PubMedQA questions 1-500 as dev and
501-1000 as test). With ``--tune METRIC`` the fusion weights and ``rrf_k`` are chosen on dev alone
(``medgraph.eval.tuning``: coordinate ascent over the paths' stored lists), and the test split is
then run once with the chosen settings; the JSON has ``dev`` (base settings), ``tuning`` (chosen
settings, dev score before / after) and ``test``. Without ``--tune`` both splits are run with the
configured settings.

Output (``--json``; for one query set, or per split): ``n_queries``, ``n_docs``, ``n_chunks``,
``embedding``, ``bm25_stemmer``, ``index`` (cache path, build seconds) and ``methods``: ``bm25``
(bm25s over title + text), ``dense``, ``sparse``, ``feedback`` (sparse with pseudo-relevance
feedback), ``vector`` (dense + sparse fused in the store), ``ppr``, ``translate`` (sparse searches
of the question's ontology translations into the other corpus languages, fused), ``fused`` (RRF of
``retrieval.paths``) and ``reranked`` (the configured reranker over the fused list), each with
``recall@1/2/5/10``, ``all@5`` (every relevant document in the top 5), ``mrr``, ``ndcg@10`` and
``latency_p50_ms``; ``by_language``: per question
language, the query count and each method's metrics.

Rules: chunk hits map to documents (a document's rank is its best chunk's rank; duplicates
dropped). Each path returns ``retrieval.candidates`` chunks. nDCG uses the ``graded`` grades as
linear gains when present, else 1 per relevant document. A method that returns nothing for a
query scores 0 on it. Latency: query-side work of the method (NER + linking for ppr, the query
embedding for the vector paths, the whole ``Retriever.retrieve`` plus analysis for fused).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from medgraph import lang
from medgraph.config import MedGraphConfig, load_config
from medgraph.eval.metrics import (
    KS,
    doc_ranking,
    score_ranking,
    summarise,
)
from medgraph.eval.tuning import QueryRun
from medgraph.retrieve.types import Candidate

log = logging.getLogger(__name__)

FORMAT_VERSION = 2  # 2: chunks embedded with their title, Snowball-stemmed lexical terms
PATHS = ("dense", "sparse", "feedback", "vector", "ppr", "translate", "translate_dense", "translate_feedback", "hop")
METHODS = ("bm25", *PATHS, "fused", "decomposed", "reranked")
BATCH_DOCS = 32

# --- inputs -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalQuery:
    query_id: str
    text: str
    language: str
    relevant: frozenset[str]
    grades: dict[str, float] = field(default_factory=dict)


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def parse_range(text: str | None) -> tuple[int, int] | None:
    """``"501-1000"`` → (501, 1000): a 1-based inclusive range of query lines."""
    if not text:
        return None
    try:
        first, last = (int(x) for x in text.split("-", 1))
    except ValueError:
        raise ValueError(f"a query range is FIRST-LAST (1-based, inclusive), e.g. 1-500; got {text!r}") from None
    if not 1 <= first <= last:
        raise ValueError(f"a query range needs 1 <= FIRST <= LAST; got {text!r}")
    return first, last


def read_queries(path: Path, limit: int | None = None, lines: tuple[int, int] | None = None) -> list[EvalQuery]:
    """The queries of ``path`` (only lines ``lines[0]..lines[1]``, 1-based, when given; then
    the first ``limit``)."""
    out = []
    records = list(read_jsonl(path))
    if lines is not None:
        if lines[1] > len(records):
            raise ValueError(f"{path} has {len(records)} queries; range {lines[0]}-{lines[1]} is past its end")
        records = records[lines[0] - 1:lines[1]]
    for rec in records:
        relevant = frozenset(str(d) for d in rec.get("relevant_doc_ids") or [])
        graded = {str(d): float(g) for d, g in (rec.get("graded") or {}).items()}
        grades = graded or {d: 1.0 for d in relevant}
        out.append(EvalQuery(str(rec["query_id"]), str(rec["text"]), str(rec.get("language") or lang.PIVOT),
                             relevant or frozenset(d for d, g in grades.items() if g > 0), grades))
    return out[:limit] if limit else out


def corpus_texts(paths: Sequence[Path]) -> dict[str, str]:
    """doc_id → title + text (or the section texts) of each corpus record, for the baseline."""
    out = {}
    for rec in (r for path in paths for r in read_jsonl(path)):
        body = rec.get("text") or " ".join(str(s.get("text", "")) for s in rec.get("sections") or [])
        out[str(rec["doc_id"])] = f"{rec.get('title') or ''} {body}".strip()
    return out


# --- the index --------------------------------------------------------------------------------


@dataclass
class EvalIndex:
    """An indexed corpus opened for querying (embedded stores in ``path``)."""

    path: Path
    graph: Any
    vectors: Any
    embedder: Any
    vocab: Any
    extractor: Any  # EntityExtractor: NER + linking, shared by indexing and query analysis
    chunk_doc: dict[str, str]
    manifest: dict[str, Any]

    def close(self) -> None:
        self.graph.close()
        self.vectors.close()


def cache_key(corpus: Sequence[Path], cfg: MedGraphConfig) -> str:
    """Corpus file hashes + the config sections that change what is indexed."""
    from medgraph.ontology.build import config_fingerprint

    digest = hashlib.sha256(b"".join(hashlib.sha256(p.read_bytes()).digest() for p in corpus)).hexdigest()
    shaping = {
        "format": FORMAT_VERSION, "corpus": digest, "vocabulary": config_fingerprint(cfg.vocabulary),
        "chunking": cfg.chunking.model_dump(), "normalise": cfg.normalise.model_dump(),
        "ner": cfg.ner.model_dump(), "linking": cfg.linking.model_dump(),
        "embedding": cfg.embedding.model_dump(include={"dense", "sparse", "model_path"}),
    }
    return hashlib.sha256(json.dumps(shaping, sort_keys=True).encode()).hexdigest()[:16]


def index_stores(path: Path) -> tuple[Any, Any]:
    """(graph store, vector store) of the cached index at ``path``."""
    from medgraph.config.models import EmbeddedGraphStoreConfig, QdrantLocalConfig
    from medgraph.stores import make_graph_store, make_vector_store

    graph = make_graph_store(EmbeddedGraphStoreConfig(path=str(path / "graph.sqlite")))
    return graph, make_vector_store(QdrantLocalConfig(path=str(path / "qdrant"), collection="chunks"))


def open_index(corpus: Path | Sequence[Path], cfg: MedGraphConfig, home: Path | None = None) -> EvalIndex:
    """The cached index of ``corpus`` (one file, or several read as one corpus) under ``cfg``,
    built first when missing."""
    from medgraph.assemble import load_extractor
    from medgraph.embed import make_embedder
    from medgraph.ontology.build import load_or_build

    corpus = [corpus] if isinstance(corpus, Path) else list(corpus)
    home = home or Path(os.environ.get("MEDGRAPH_HOME", ".medgraph"))
    path = home / "eval-cache" / cache_key(corpus, cfg)
    vocab = load_or_build(cfg.vocabulary)
    embedder = make_embedder(cfg.embedding)
    extractor = load_extractor(cfg, vocab)
    if not (path / "manifest.json").is_file():
        partial = path.with_name(f"{path.name}.partial-{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        build_index(corpus, cfg, partial, (vocab, extractor, embedder))
        shutil.rmtree(path, ignore_errors=True)
        os.replace(partial, path)
    else:
        log.info("using the cached index %s", path)
    manifest = json.loads((path / "manifest.json").read_text())
    chunk_doc = json.loads((path / "chunk_docs.json").read_text())
    graph, vectors = index_stores(path)
    return EvalIndex(path, graph, vectors, embedder, vocab, extractor, chunk_doc, manifest)


def build_index(corpus: Path | Sequence[Path], cfg: MedGraphConfig, dest: Path, models: tuple[Any, Any, Any]) -> None:
    """Load → chunk → normalise → NER + linking → embed → write, in batches of documents.

    ``models``: (vocabulary, ``EntityExtractor``, embedder).
    """
    from medgraph.index.pipeline import IndexModels
    from medgraph.index.writer import CorpusWriter
    from medgraph.ingest.chunking import Chunker
    from medgraph.ingest.loaders import load_shard, plan_shards
    from medgraph.schemas import Document

    vocab, extractor, embedder = models
    corpus = [corpus] if isinstance(corpus, Path) else list(corpus)
    started = time.monotonic()
    items = [item for shard in plan_shards(list(corpus), records_per_shard=1 << 30) for item in load_shard(shard)]
    docs = [d for d in items if isinstance(d, Document)]
    for failure in (f for f in items if not isinstance(f, Document)):
        log.warning("corpus record skipped: %s", failure)
    graph, vectors = index_stores(dest)
    vectors.ensure_collection(embedder.dim, embedder.sparse_idf)
    writer = CorpusWriter(graph, vectors, vocab.get)
    pipeline = IndexModels(Chunker(cfg.chunking), extractor, embedder, cfg.normalise.enabled)
    chunk_doc: dict[str, str] = {}
    try:
        for start in range(0, len(docs), BATCH_DOCS):
            written = _index_batch(docs[start:start + BATCH_DOCS], pipeline, writer)
            chunk_doc.update(written)
            done = min(start + BATCH_DOCS, len(docs))
            rate = done / max(time.monotonic() - started, 1e-9)
            log.info("indexed %d/%d documents, %d chunks (%.1f docs/s)", done, len(docs), len(chunk_doc), rate)
    finally:
        graph.close()
        vectors.close()
    manifest = {"corpus": [str(p) for p in corpus], "n_docs": len(docs), "n_chunks": len(chunk_doc),
                "embedding": embedder.name, "build_s": round(time.monotonic() - started, 1)}
    (dest / "chunk_docs.json").write_text(json.dumps(chunk_doc))
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2))


def _index_batch(docs: list[Any], models: Any, writer: Any) -> dict[str, str]:
    """One batch of documents through the indexing pipeline into the writer: {chunk_id: doc_id}."""
    from medgraph.index.pipeline import index_documents

    batch = index_documents(docs, models)
    for failure in batch.failures:
        log.warning("document not indexed: %s", failure)
    writer.write(batch.items)
    return {it.chunk.chunk_id: it.chunk.doc_id for it in batch.items}


# --- the BM25 baseline ------------------------------------------------------------------------


# bm25s's own stop-word list of the baseline's language: the BM25 baseline is English (the pivot)
BM25_STOPWORDS = lang.PIVOT


class Bm25Baseline:
    """bm25s (Lucene BM25, English stop words; PyStemmer's English stemmer when installed)."""

    def __init__(self, docs: dict[str, str]) -> None:
        import bm25s

        try:
            import Stemmer

            self._stemmer: Any = Stemmer.Stemmer("english")
            self.stemmer = "PyStemmer english"
        except ImportError:
            self._stemmer, self.stemmer = None, "none (PyStemmer not installed)"
        self._bm25s = bm25s
        self.doc_ids = list(docs)
        tokens = bm25s.tokenize(list(docs.values()), stopwords=BM25_STOPWORDS, stemmer=self._stemmer, show_progress=False)
        self.model = bm25s.BM25()
        self.model.index(tokens, show_progress=False)

    def search(self, text: str, k: int = 100) -> list[str]:
        query = self._bm25s.tokenize([text], stopwords=BM25_STOPWORDS, stemmer=self._stemmer,
                                     return_ids=False, show_progress=False)
        if not query[0] or not self.doc_ids:
            return []
        ids, scores = self.model.retrieve(query, k=min(k, len(self.doc_ids)), show_progress=False)
        return [self.doc_ids[int(i)] for i, s in zip(ids[0], scores[0], strict=True) if s > 0]


# --- running the queries ----------------------------------------------------------------------


def _timed(fn: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - start) * 1000


def _ids(cands: list[Candidate]) -> list[str]:
    return [c.chunk_id for c in cands]


class QueryParts(NamedTuple):
    analyzer: Any
    retriever: Any
    reranker: Any
    planner: Any  # None: ``agent.decompose: off``


def run_query(index: EvalIndex, cfg: MedGraphConfig, parts: QueryParts, bm25: Bm25Baseline,
              q: EvalQuery) -> tuple[dict[str, tuple[list[str], float]], dict[str, list[str]], int]:
    """(method → (ranked doc IDs, latency ms), fused path → its ranked chunk IDs, number of the
    question's linked entities) for one query.

    A path the fused retrieval ran is read from its own per-path list (the same search, not
    repeated); the others are searched on their own.
    """
    from medgraph.retrieve.retriever import QueryVectors

    analyzer, retriever, reranker = parts.analyzer, parts.retriever, parts.reranker
    emb, limit = index.embedder, cfg.retrieval.candidates
    bm25_docs, t_bm25 = _timed(lambda: bm25.search(q.text))
    analysis, t_an = _timed(lambda: analyzer.analyze(q.text, q.language))
    dense, t_qd = _timed(lambda: emb.embed_query_dense([q.text])[0] if emb.has_dense else None)
    sparse, t_qs = _timed(lambda: emb.embed_query_sparse([q.text], [q.language])[0] if emb.has_sparse else None)
    qv = QueryVectors(dense, sparse)
    out: dict[str, tuple[list[str], float]] = {"bm25": (bm25_docs, t_bm25)}
    result, t_fused = _timed(lambda: retriever.retrieve(analysis))
    query_side = {"dense": t_qd, "sparse": t_qs, "feedback": t_qs, "vector": t_qd + t_qs, "ppr": t_an, "translate": t_an,
                  "translate_dense": t_an, "translate_feedback": t_an, "hop": t_an}
    for path in PATHS:
        hits = result.per_path.get(path)
        if hits is None:  # a path the fusion does not use (or splits per language): search it on its own
            hits, t = _timed(lambda p=path: retriever.search_path(p, analysis, limit, qv, result.per_path))
        else:
            t = result.timings_ms.get(path, 0.0)
        out[path] = (doc_ranking(_ids(hits), index.chunk_doc), query_side[path] + t)
    out["fused"] = (doc_ranking(_ids(result.candidates), index.chunk_doc), t_an + t_fused)
    hopped, t_hops = _timed(lambda: decomposed(parts, cfg, q, analysis, result.candidates))
    out["decomposed"] = (doc_ranking(_ids(hopped), index.chunk_doc), t_an + t_fused + t_hops)
    reranked, t_rr = _timed(lambda: reranker.rerank(q.text, list(result.candidates)))
    out["reranked"] = (doc_ranking(_ids(reranked), index.chunk_doc), t_an + t_fused + t_rr)
    return out, {path: _ids(hits) for path, hits in result.per_path.items()}, len(analysis.seeds)


def decomposed(parts: QueryParts, cfg: MedGraphConfig, q: EvalQuery, analysis: Any, fused: list[Candidate]) -> list[Candidate]:
    """The agent's ranking of a planned multi-hop question: the fused list merged with each hop's
    (``medgraph.agent.hops``, the same functions the agent runs; no reranking); a single-hop
    question's fused list as it is."""
    import asyncio

    from medgraph.agent.graph import hop_settings
    from medgraph.agent.hops import HopTools, merge, run_hops
    from medgraph.assemble import agent_settings

    if parts.planner is None:
        return fused
    plan = parts.planner.plan(q.text, q.language)
    if not plan.multi_hop:
        return fused
    hops = asyncio.run(run_hops(plan, q.language, analysis.named_ids, HopTools.local(parts.analyzer, parts.retriever),
                                hop_settings(agent_settings(cfg))))
    return merge(fused, hops, cfg.retrieval.rrf_k, cfg.agent.hop_weight)


def query_parts(index: EvalIndex, cfg: MedGraphConfig) -> QueryParts:
    """The analyzer, retriever, reranker and planner over the index, built as the services build
    them (``medgraph.assemble``); the analyzer without a cache, so that each question is timed
    whole; a DSPy planner chats with its engine in this process."""
    from medgraph.assemble import LocalEngines, build_analyzer, build_planner, build_reranker, build_retriever

    analyzer = build_analyzer(cfg, index.extractor, cache_size=0)
    retriever = build_retriever(cfg, index.graph, index.vectors, index.embedder)
    return QueryParts(analyzer, retriever, build_reranker(cfg), build_planner(cfg, LocalEngines(cfg).chat_for))


def run_split(index: EvalIndex, cfg: MedGraphConfig, bm25: Bm25Baseline,
              queries: list[EvalQuery]) -> tuple[dict[str, Any], list[QueryRun]]:
    """Every method's summary over ``queries`` and each query's per-path chunk lists (for tuning)."""
    parts = query_parts(index, cfg)
    scores: dict[str, list[dict[str, Any]]] = {m: [] for m in METHODS}
    latency: dict[str, list[float]] = {m: [] for m in METHODS}
    runs: list[QueryRun] = []
    for i, q in enumerate(queries, 1):
        ranked_by_method, per_path, n_entities = run_query(index, cfg, parts, bm25, q)
        for method, (ranked, ms) in ranked_by_method.items():
            scores[method].append({**score_ranking(ranked, set(q.relevant), q.grades), "language": q.language})
            latency[method].append(ms)
        runs.append(QueryRun(q.query_id, q.language, per_path, q.relevant, q.grades, n_entities))
        if i % 100 == 0 or i == len(queries):
            log.info("queried %d/%d", i, len(queries))
    r = cfg.retrieval
    result = {
        "n_queries": len(queries), "n_docs": index.manifest["n_docs"], "n_chunks": index.manifest["n_chunks"],
        "embedding": index.manifest["embedding"], "bm25_stemmer": bm25.stemmer,
        "retrieval": {"paths": r.paths, "weights": r.weights, "rrf_k": r.rrf_k, "candidates": r.candidates,
                      "ppr_min_entities": r.ppr_min_entities,
                      "feedback": r.feedback.model_dump(), "language_weights": r.language_weights},
        "rerank": cfg.rerank.model_dump(include={"kind", "order"}),
        "index": {"path": str(index.path), "build_s": index.manifest["build_s"]},
        "methods": {m: summarise(_metrics(scores[m]), latency[m]) for m in METHODS},
        "by_language": by_language(queries, scores),
    }
    return result, runs


def evaluate(corpus: Path | Sequence[Path], queries_path: Path, cfg: MedGraphConfig,
             limit: int | None = None, runs_out: Path | None = None) -> dict[str, Any]:
    """One query set over ``corpus`` with the configured settings (``runs_out``: its runs saved for
    ``python -m medgraph.eval tune``, when the set is a dev set)."""
    corpus = [corpus] if isinstance(corpus, Path) else list(corpus)
    queries = read_queries(queries_path, limit)
    bm25, bm25_ms = _timed(lambda: Bm25Baseline(corpus_texts(corpus)))
    index = open_index(corpus, cfg)
    try:
        result, runs = run_split(index, cfg, bm25, queries)
        if runs_out is not None:
            from medgraph.eval.tuning import save_runs

            save_runs(runs_out, runs, index.chunk_doc, {"corpus": [str(p) for p in corpus], "n_queries": len(queries)})
    finally:
        index.close()
    result["index"]["bm25_build_s"] = round(bm25_ms / 1000, 2)
    return result


def evaluate_dev_test(corpus: Sequence[Path], dev: list[EvalQuery], test: list[EvalQuery],
                      cfg: MedGraphConfig, tune_metric: str | None = None,
                      runs_out: Path | None = None) -> dict[str, Any]:
    """Dev with the configured settings; with ``tune_metric``, fusion settings chosen on dev
    alone (``tune_fusion``) and the test split run once with them; else test as configured.
    ``runs_out``: the dev runs saved for ``python -m medgraph.eval tune`` (several corpora)."""
    from medgraph.eval.tuning import TuningSet, save_runs, tune_fusion

    overlap = {q.query_id for q in dev} & {q.query_id for q in test}
    if overlap:
        raise ValueError(f"dev and test share {len(overlap)} query IDs (e.g. {sorted(overlap)[0]!r}): "
                         "choose disjoint files or ranges")
    bm25 = Bm25Baseline(corpus_texts(corpus))
    index = open_index(corpus, cfg)
    try:
        dev_result, runs = run_split(index, cfg, bm25, dev)
        if runs_out is not None:
            save_runs(runs_out, runs, index.chunk_doc, {"corpus": [str(p) for p in corpus], "n_queries": len(dev)})
        out: dict[str, Any] = {"dev": dev_result}
        test_cfg = cfg
        if tune_metric:
            r = cfg.retrieval
            dev_set = TuningSet("dev", runs, index.chunk_doc, tune_metric)
            tuned = tune_fusion([dev_set], r.weights, r.rrf_k, r.language_weights, r.candidates,
                                ppr_min_entities=r.ppr_min_entities)
            out["tuning"] = tuned.as_dict()
            test_cfg = cfg.model_copy(update={"retrieval": r.model_copy(update={
                "weights": tuned.weights, "rrf_k": tuned.rrf_k, "ppr_min_entities": tuned.ppr_min_entities})})
        out["test"], _ = run_split(index, test_cfg, bm25, test)
    finally:
        index.close()
    return out


def _metrics(scores: list[dict[str, Any]]) -> list[dict[str, float]]:
    return [{k: v for k, v in s.items() if k != "language"} for s in scores]


def by_language(queries: list[EvalQuery], scores: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per question language: its query count and each method's mean metrics (no latency)."""
    out: dict[str, Any] = {}
    for language in sorted({q.language for q in queries}):
        rows = {m: [s for s in per_query if s["language"] == language] for m, per_query in scores.items()}
        methods = {m: {k: v for k, v in summarise(_metrics(r), []).items() if k != "latency_p50_ms"}
                   for m, r in rows.items()}
        out[language] = {"n_queries": sum(1 for q in queries if q.language == language), "methods": methods}
    return out


def print_table(result: dict[str, Any], heading: str = "") -> None:
    if heading:
        print(f"\n== {heading} ==")
    print(f"{result['n_queries']} queries over {result['n_docs']} documents ({result['n_chunks']} chunks), "
          f"embedding {result['embedding']}, bm25 stemmer: {result['bm25_stemmer']}")
    cols = [f"recall@{k}" for k in KS] + ["all@5", "mrr", "ndcg@10", "latency_p50_ms"]
    print(f"{'method':10s}" + "".join(f"{c:>16s}" for c in cols))
    for method, row in result["methods"].items():
        print(f"{method:10s}" + "".join(f"{row[c]:16.4f}" for c in cols))
    if len(result.get("by_language", {})) > 1:
        for language, part in result["by_language"].items():
            print(f"\n{language}: {part['n_queries']} queries")
            for method, row in part["methods"].items():
                print(f"{method:10s}" + "".join(f"{row[c]:16.4f}" for c in cols[:-1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m medgraph.eval retrieval", description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True, type=Path, nargs="+", help="corpus JSONL file(s), one corpus")
    ap.add_argument("--queries", type=Path, help="one query set, run with the configured settings")
    ap.add_argument("--dev", type=Path, help="dev queries: settings are chosen on these")
    ap.add_argument("--dev-range", help="FIRST-LAST: only these lines of --dev (1-based, inclusive)")
    ap.add_argument("--test", type=Path, help="test queries: reported, never tuned on")
    ap.add_argument("--test-range", help="FIRST-LAST: only these lines of --test")
    ap.add_argument("--tune", metavar="METRIC", choices=["ndcg@10", "mrr", "all@5", *(f"recall@{k}" for k in KS)],
                    help="choose fusion weights and rrf_k on dev by this metric, then run test with them")
    ap.add_argument("--runs-out", type=Path, help="save the dev runs (--dev, or --queries when it is a dev set) "
                    "for `medgraph.eval tune`")
    ap.add_argument("--config", default="configs/local.yaml")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="A.B=C")
    ap.add_argument("--limit-queries", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if bool(args.queries) == bool(args.dev or args.test):
        ap.error("give either --queries, or --dev and --test")
    if (args.dev is None) != (args.test is None):
        ap.error("--dev and --test go together")
    if args.tune and not args.dev:
        ap.error("--tune needs --dev and --test")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    cfg = load_config(args.config, args.overrides)
    try:
        if args.queries:
            result = evaluate(args.corpus, args.queries, cfg, args.limit_queries, args.runs_out)
        else:
            dev = read_queries(args.dev, args.limit_queries, parse_range(args.dev_range))
            test = read_queries(args.test, args.limit_queries, parse_range(args.test_range))
            result = evaluate_dev_test(args.corpus, dev, test, cfg, args.tune, args.runs_out)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=2))
    elif args.queries:
        print_table(result)
    else:
        print_table(result["dev"], "dev (configured settings)")
        if "tuning" in result:
            t = result["tuning"]
            print(f"\ntuned on dev ({t['metric']}): {t['dev_before']:.4f} -> {t['dev_after']:.4f}; "
                  f"weights {t['weights']}, rrf_k {t['rrf_k']}")
        print_table(result["test"], "test" + (" (settings chosen on dev)" if "tuning" in result else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
