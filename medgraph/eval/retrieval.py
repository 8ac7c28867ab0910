"""Retrieval benchmark: every retrieval path, the fused list and the reranked list vs a BM25 baseline.

    python -m medgraph.eval retrieval --corpus CORPUS.jsonl --queries QUERIES.jsonl \
        [--config configs/local.yaml] [--set a.b=c ...] [--limit-queries N] [--json]

Input: a corpus JSONL (``{doc_id, title, text | sections, language}``, read by the project's loader)
and a queries JSONL (``{query_id, text, language, relevant_doc_ids, graded?: {doc_id: grade}}``).
The corpus is indexed in-process with the project's stages (chunk, normalise, NER + linking, embed,
``CorpusWriter`` into embedded stores). The index is cached under
``$MEDGRAPH_HOME/eval-cache/<key>`` (key: corpus file hash + the config sections that shape the
index), so a re-run with other retrieval settings only queries.

Output (``--json``): ``n_queries``, ``n_docs``, ``n_chunks``, ``embedding``, ``bm25_stemmer``,
``index`` (cache path, build seconds) and ``methods``: ``bm25`` (bm25s over title + text),
``dense``, ``sparse``, ``feedback`` (sparse with pseudo-relevance feedback), ``vector`` (dense +
sparse fused in the store), ``ppr``, ``translate`` (sparse searches of the question's ontology
translations into the other corpus languages, fused), ``fused`` (RRF of ``retrieval.paths``) and
``reranked`` (``FeatureReranker`` over the fused list), each with ``recall@1/5/10``, ``mrr``,
``ndcg@10`` and ``latency_p50_ms``; ``by_language``: per question language, the query count and
each method's metrics.

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
import math
import os
import shutil
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medgraph.config import MedGraphConfig, load_config
from medgraph.retrieve.types import Candidate

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
KS = (1, 5, 10)
PATHS = ("dense", "sparse", "feedback", "vector", "ppr", "translate")
METHODS = ("bm25", *PATHS, "fused", "reranked")
BATCH_DOCS = 32

# --- metrics ----------------------------------------------------------------------------------


def doc_ranking(chunk_ids: Iterable[str], chunk_doc: dict[str, str]) -> list[str]:
    """Documents in the order of their best chunk; unknown chunks are skipped."""
    seen: dict[str, None] = {}
    for cid in chunk_ids:
        doc = chunk_doc.get(cid)
        if doc is not None:
            seen.setdefault(doc)
    return list(seen)


def recall_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: set[str]) -> float:
    return next((1.0 / i for i, d in enumerate(ranked, 1) if d in relevant), 0.0)


def ndcg_at(ranked: Sequence[str], grades: dict[str, float], k: int) -> float:
    """nDCG@k with linear gains (``grade / log2(rank + 1)``), ideal = best grades first."""
    dcg = sum(grades.get(d, 0.0) / math.log2(i + 1) for i, d in enumerate(ranked[:k], 1))
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    return dcg / idcg if idcg else 0.0


def score_ranking(ranked: Sequence[str], relevant: set[str], grades: dict[str, float]) -> dict[str, float]:
    out = {f"recall@{k}": recall_at(ranked, relevant, k) for k in KS}
    out["mrr"] = reciprocal_rank(ranked, relevant)
    out["ndcg@10"] = ndcg_at(ranked, grades, 10)
    return out


def summarise(scores: list[dict[str, float]], latencies_ms: list[float]) -> dict[str, float]:
    """Mean of each metric over queries, and the median latency."""
    keys = scores[0].keys() if scores else ()
    out = {k: round(float(np.mean([s[k] for s in scores])), 4) for k in keys}
    out["latency_p50_ms"] = round(float(np.median(latencies_ms)), 2) if latencies_ms else 0.0
    return out


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


def read_queries(path: Path, limit: int | None = None) -> list[EvalQuery]:
    out = []
    for rec in read_jsonl(path):
        relevant = frozenset(str(d) for d in rec.get("relevant_doc_ids") or [])
        graded = {str(d): float(g) for d, g in (rec.get("graded") or {}).items()}
        grades = graded or {d: 1.0 for d in relevant}
        out.append(EvalQuery(str(rec["query_id"]), str(rec["text"]), str(rec.get("language") or "en"),
                             relevant or frozenset(d for d, g in grades.items() if g > 0), grades))
    return out[:limit] if limit else out


def corpus_texts(path: Path) -> dict[str, str]:
    """doc_id → title + text (or the section texts) of each corpus record, for the baseline."""
    out = {}
    for rec in read_jsonl(path):
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


def cache_key(corpus: Path, cfg: MedGraphConfig) -> str:
    """Corpus file hash + the config sections that change what is indexed."""
    from medgraph.ontology.build import config_fingerprint

    digest = hashlib.sha256(corpus.read_bytes()).hexdigest()
    shaping = {
        "format": FORMAT_VERSION, "corpus": digest, "vocabulary": config_fingerprint(cfg.vocabulary),
        "chunking": cfg.chunking.model_dump(), "normalise": cfg.normalise.model_dump(),
        "ner": cfg.ner.model_dump(), "linking": cfg.linking.model_dump(),
        "embedding": cfg.embedding.model_dump(include={"dense", "sparse", "model_path"}),
    }
    return hashlib.sha256(json.dumps(shaping, sort_keys=True).encode()).hexdigest()[:16]


def _stores(path: Path) -> tuple[Any, Any]:
    from medgraph.config.models import EmbeddedGraphStoreConfig, QdrantLocalConfig
    from medgraph.stores import make_graph_store, make_vector_store

    graph = make_graph_store(EmbeddedGraphStoreConfig(path=str(path / "graph.sqlite")))
    return graph, make_vector_store(QdrantLocalConfig(path=str(path / "qdrant"), collection="chunks"))


def open_index(corpus: Path, cfg: MedGraphConfig, home: Path | None = None) -> EvalIndex:
    """The cached index of ``corpus`` under ``cfg``, built first when missing."""
    from medgraph.embed import make_embedder
    from medgraph.link import EntityExtractor
    from medgraph.ontology.build import load_or_build

    home = home or Path(os.environ.get("MEDGRAPH_HOME", ".medgraph"))
    path = home / "eval-cache" / cache_key(corpus, cfg)
    vocab = load_or_build(cfg.vocabulary)
    embedder = make_embedder(cfg.embedding)
    extractor = EntityExtractor(vocab, cfg.ner, cfg.linking)
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
    graph, vectors = _stores(path)
    return EvalIndex(path, graph, vectors, embedder, vocab, extractor, chunk_doc, manifest)


def build_index(corpus: Path, cfg: MedGraphConfig, dest: Path, models: tuple[Any, Any, Any]) -> None:
    """Load → chunk → normalise → NER + linking → embed → write, in batches of documents.

    ``models``: (vocabulary, ``EntityExtractor``, embedder).
    """
    from medgraph.index.writer import CorpusWriter
    from medgraph.ingest.chunking import Chunker
    from medgraph.ingest.loaders import load_shard, plan_shards
    from medgraph.schemas import Document

    vocab, extractor, embedder = models
    started = time.monotonic()
    items = list(load_shard(plan_shards([corpus], records_per_shard=1 << 30)[0]))
    docs = [d for d in items if isinstance(d, Document)]
    for failure in (f for f in items if not isinstance(f, Document)):
        log.warning("corpus record skipped: %s", failure)
    graph, vectors = _stores(dest)
    vectors.ensure_collection(embedder.dim, embedder.sparse_idf)
    writer = CorpusWriter(graph, vectors, vocab.get)
    stages = (Chunker(cfg.chunking), extractor, embedder)
    chunk_doc: dict[str, str] = {}
    try:
        for start in range(0, len(docs), BATCH_DOCS):
            written = _index_batch(docs[start:start + BATCH_DOCS], cfg.normalise.enabled, stages, writer)
            chunk_doc.update(written)
            done = min(start + BATCH_DOCS, len(docs))
            rate = done / max(time.monotonic() - started, 1e-9)
            log.info("indexed %d/%d documents, %d chunks (%.1f docs/s)", done, len(docs), len(chunk_doc), rate)
    finally:
        graph.close()
        vectors.close()
    manifest = {"corpus": str(corpus), "n_docs": len(docs), "n_chunks": len(chunk_doc),
                "embedding": embedder.name, "build_s": round(time.monotonic() - started, 1)}
    (dest / "chunk_docs.json").write_text(json.dumps(chunk_doc))
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2))


def _index_batch(docs: list[Any], normalise_text: bool, stages: tuple[Any, Any, Any], writer: Any) -> dict[str, str]:
    """One batch of documents through (chunker, entity extractor, embedder) into the writer."""
    from medgraph.extract.normalise import normalise
    from medgraph.index.writer import IndexedChunk

    chunker, extractor, embedder = stages
    pairs = [(c, d) for d in docs for c in chunker.chunk(d)]
    if not pairs:
        return {}
    for chunk, _ in pairs:
        if normalise_text:
            chunk.text = normalise(chunk.text).text
    texts = [c.text for c, _ in pairs]
    dense = embedder.embed_dense(texts) if embedder.has_dense else [None] * len(texts)
    sparse = embedder.embed_sparse(texts) if embedder.has_sparse else [None] * len(texts)
    items = [
        IndexedChunk(c, extractor.extract(c.text, c.language), dv, sv, d.source_id, d.source_path)
        for (c, d), dv, sv in zip(pairs, dense, sparse, strict=True)
    ]
    writer.write(items)
    return {c.chunk_id: c.doc_id for c, _ in pairs}


# --- the BM25 baseline ------------------------------------------------------------------------


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
        tokens = bm25s.tokenize(list(docs.values()), stopwords="en", stemmer=self._stemmer, show_progress=False)
        self.model = bm25s.BM25()
        self.model.index(tokens, show_progress=False)

    def search(self, text: str, k: int = 100) -> list[str]:
        query = self._bm25s.tokenize([text], stopwords="en", stemmer=self._stemmer,
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


def run_query(index: EvalIndex, cfg: MedGraphConfig, parts: Any, bm25: Bm25Baseline,
              q: EvalQuery) -> dict[str, tuple[list[str], float]]:
    """method → (ranked doc IDs, latency ms) for one query.

    A path the fused retrieval ran is read from its own per-path list (the same search, not
    repeated); the others are searched on their own.
    """
    from medgraph.retrieve.retriever import QueryVectors

    analyzer, retriever, reranker = parts
    emb, limit = index.embedder, cfg.retrieval.candidates
    bm25_docs, t_bm25 = _timed(lambda: bm25.search(q.text))
    analysis, t_an = _timed(lambda: analyzer.analyze(q.text, q.language))
    dense, t_qd = _timed(lambda: emb.embed_query_dense([q.text])[0] if emb.has_dense else None)
    sparse, t_qs = _timed(lambda: emb.embed_query_sparse([q.text])[0] if emb.has_sparse else None)
    qv = QueryVectors(dense, sparse)
    out: dict[str, tuple[list[str], float]] = {"bm25": (bm25_docs, t_bm25)}
    result, t_fused = _timed(lambda: retriever.retrieve(analysis))
    query_side = {"dense": t_qd, "sparse": t_qs, "feedback": t_qs, "vector": t_qd + t_qs, "ppr": t_an, "translate": t_an}
    for path in PATHS:
        hits = result.per_path.get(path)
        if hits is None:  # a path the fusion does not use (or splits per language): search it on its own
            hits, t = _timed(lambda p=path: retriever.search_path(p, analysis, limit, qv, result.per_path))
        else:
            t = result.timings_ms.get(path, 0.0)
        out[path] = (doc_ranking(_ids(hits), index.chunk_doc), query_side[path] + t)
    out["fused"] = (doc_ranking(_ids(result.candidates), index.chunk_doc), t_an + t_fused)
    reranked, t_rr = _timed(lambda: reranker.rerank(q.text, list(result.candidates)))
    out["reranked"] = (doc_ranking(_ids(reranked), index.chunk_doc), t_an + t_fused + t_rr)
    return out


def query_parts(index: EvalIndex, cfg: MedGraphConfig) -> tuple[Any, Any, Any]:
    """(QueryAnalyzer, Retriever, FeatureReranker) over the index, as the service builds them."""
    from medgraph.retrieve.query import QueryAnalyzer
    from medgraph.retrieve.rerank import FeatureReranker
    from medgraph.retrieve.retriever import Retriever

    analyzer = QueryAnalyzer(index.extractor, 0, cfg.retrieval.languages, cfg.retrieval.names_per_entity)
    retriever = Retriever(cfg.retrieval, index.graph, index.vectors, index.embedder)
    return analyzer, retriever, FeatureReranker(cfg.rerank.weights or None)


def evaluate(corpus: Path, queries_path: Path, cfg: MedGraphConfig, limit: int | None = None) -> dict[str, Any]:
    queries = read_queries(queries_path, limit)
    bm25, bm25_s = _timed(lambda: Bm25Baseline(corpus_texts(corpus)))
    index = open_index(corpus, cfg)
    try:
        parts = query_parts(index, cfg)
        scores: dict[str, list[dict[str, Any]]] = {m: [] for m in METHODS}
        latency: dict[str, list[float]] = {m: [] for m in METHODS}
        for i, q in enumerate(queries, 1):
            for method, (ranked, ms) in run_query(index, cfg, parts, bm25, q).items():
                scores[method].append({**score_ranking(ranked, set(q.relevant), q.grades), "language": q.language})
                latency[method].append(ms)
            if i % 100 == 0 or i == len(queries):
                log.info("queried %d/%d", i, len(queries))
    finally:
        index.close()
    r = cfg.retrieval
    return {
        "n_queries": len(queries), "n_docs": index.manifest["n_docs"], "n_chunks": index.manifest["n_chunks"],
        "embedding": index.manifest["embedding"], "bm25_stemmer": bm25.stemmer,
        "retrieval": {"paths": r.paths, "weights": r.weights, "rrf_k": r.rrf_k, "candidates": r.candidates,
                      "feedback": r.feedback.model_dump(), "language_weights": r.language_weights},
        "index": {"path": str(index.path), "build_s": index.manifest["build_s"], "bm25_build_s": round(bm25_s / 1000, 2)},
        "methods": {m: summarise(_metrics(scores[m]), latency[m]) for m in METHODS},
        "by_language": by_language(queries, scores),
    }


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


def print_table(result: dict[str, Any]) -> None:
    print(f"{result['n_queries']} queries over {result['n_docs']} documents ({result['n_chunks']} chunks), "
          f"embedding {result['embedding']}, bm25 stemmer: {result['bm25_stemmer']}")
    cols = [f"recall@{k}" for k in KS] + ["mrr", "ndcg@10", "latency_p50_ms"]
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
    ap.add_argument("--corpus", required=True, type=Path)
    ap.add_argument("--queries", required=True, type=Path)
    ap.add_argument("--config", default="configs/local.yaml")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="A.B=C")
    ap.add_argument("--limit-queries", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    cfg = load_config(args.config, args.overrides)
    result = evaluate(args.corpus, args.queries, cfg, args.limit_queries)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
