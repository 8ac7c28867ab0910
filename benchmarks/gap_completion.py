"""Added latency of one gap-completion round, against plain retrieval in the same run.

    python benchmarks/gap_completion.py [--corpus-docs 300] [--rounds 8] [--abstracts 5] \
        [--config configs/local.yaml] [--set a.b=c ...]

Setup: a corpus of the first ``--corpus-docs`` PubMedQA abstracts is indexed in process with the
configured stages (``medgraph.eval.retrieval.open_index``: chunk, NER + linking, embed, write;
cached under ``$MEDGRAPH_HOME/eval-cache``). The literature is real PubMed records too: BC5CDR
abstracts (none of them in the corpus), served by the local E-utilities server of
``medgraph/testing/eutils.py``. Each round takes one BC5CDR article: its title is the question, the
question's entities' English MeSH names (``search_terms``) are the search terms, and
``--abstracts`` matching records are the literature of the round.

Measured per round (median over rounds, ms):
- ``plain_retrieval``: ``Retriever.retrieve`` of the question (the baseline);
- ``round_fetch_excluded``: ``LiveIngestor.ingest`` of the round's records (fetched beforehand,
  untimed) + ``Retriever.refresh`` + the re-retrieval;
- ``round_fetch_included``: the same round on a fresh copy of the index, with the fetch timed too
  (``PubMedSource.search`` against the local server at NCBI's 3 requests/s: esearch + efetch);
and each round's ratio to the plain retrieval of its question (median of ratios); ``retrieve_again``:
a second retrieval after the round (the steady state, not part of it). Each pass runs on
its own copy of the index, so both ingest the same records into a store of the same size.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.assemble import build_analyzer  # noqa: E402
from medgraph.config import MedGraphConfig, load_config  # noqa: E402
from medgraph.literature.base import LiteratureRecord  # noqa: E402
from medgraph.literature.gaps import Gap, question_entities, search_terms  # noqa: E402
from medgraph.literature.pubmed import PubMedSource  # noqa: E402
from medgraph.retrieve.query import QueryAnalyzer  # noqa: E402
from medgraph.retrieve.types import QueryAnalysis  # noqa: E402
from medgraph.testing.eutils import EUtilsServer, load_bc5cdr  # noqa: E402

SHARED = REPO.parent / "shared" / "data"


def write_corpus(path: Path, n_docs: int) -> None:
    """The first ``n_docs`` PubMedQA abstracts as a corpus JSONL (the loader's record form)."""
    data = json.loads((SHARED / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8"))
    with path.open("w", encoding="utf-8") as fh:
        for pmid in list(data)[:n_docs]:
            item = data[pmid]
            sections = [{"title": str(lab).title(), "text": ctx} for lab, ctx in zip(item["LABELS"], item["CONTEXTS"],
                                                                                     strict=False)]
            fh.write(json.dumps({"doc_id": f"pmid-{pmid}", "title": item["QUESTION"], "language": "en",
                                 "sections": sections}, ensure_ascii=False) + "\n")


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


class Pass:
    """One copy of the index, opened with a retriever and a live ingestor."""

    def __init__(self, path: Path, cfg: MedGraphConfig, models: tuple[Any, Any]) -> None:
        from medgraph.assemble import build_ingestor, build_retriever
        from medgraph.eval.retrieval import index_stores

        extractor, embedder = models
        self.graph, self.vectors = index_stores(path)
        self.retriever = build_retriever(cfg, self.graph, self.vectors, embedder)
        self.ingestor = build_ingestor(cfg, self.graph, self.vectors, extractor, embedder)

    def round(self, analysis: QueryAnalysis, records: list[LiteratureRecord]) -> dict[str, float]:
        start = time.perf_counter()
        report = self.ingestor.ingest(records)
        t_ingest = ms(start)
        start = time.perf_counter()
        self.retriever.refresh()
        t_refresh = ms(start)
        start = time.perf_counter()
        self.retriever.retrieve(analysis)
        t_retrieve = ms(start)
        start = time.perf_counter()
        self.retriever.retrieve(analysis)  # not part of the round: the steady state after it
        return {"ingest": t_ingest, "refresh": t_refresh, "retrieve": t_retrieve, "again": ms(start),
                "chunks": float(len(report.chunk_ids)), "docs": float(len(report.doc_ids))}

    def close(self) -> None:
        self.graph.close()
        self.vectors.close()


def plan_rounds(articles: list[Any], analyzer: QueryAnalyzer, vocab: Any, server: EUtilsServer, n_rounds: int,
                n_abstracts: int) -> list[tuple[QueryAnalysis, list[str], list[LiteratureRecord]]]:
    """(analysis, search terms, records) per round: titles whose entities find ``n_abstracts`` records,
    each record used by one round only."""
    source = PubMedSource(base_url=server.base_url, rate_per_s=1000.0)
    used: set[str] = set()
    rounds = []
    for article in articles:
        analysis = analyzer.analyze(article.title, "en")
        entities = question_entities(analysis)
        if not entities:
            continue
        gap = Gap("weak", tuple(entities), tuple(entities.values()), "benchmark")
        terms = search_terms(gap, vocab)
        records = [r for r in source.search(terms, max_results=4 * n_abstracts) if r.doc_id not in used]
        if len(records) < n_abstracts:
            continue
        records = records[:n_abstracts]
        used.update(r.doc_id for r in records)
        rounds.append((analysis, terms, records))
        if len(rounds) == n_rounds:
            break
    return rounds


def run(args: argparse.Namespace) -> dict[str, Any]:
    from medgraph.eval.retrieval import open_index

    cfg = load_config(REPO / args.config, args.set)
    work = Path(tempfile.mkdtemp(prefix="gap-bench-"))
    try:
        corpus = work / "corpus.jsonl"
        write_corpus(corpus, args.corpus_docs)
        index = open_index(corpus, cfg)
        n_chunks, built = index.manifest["n_chunks"], index.path
        models = (index.extractor, index.embedder)
        analyzer = build_analyzer(cfg, index.extractor, cache_size=0)
        index.close()
        articles = load_bc5cdr(SHARED / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt")
        with EUtilsServer(articles) as server:
            rounds = plan_rounds(articles, analyzer, index.vocab, server, args.rounds, args.abstracts)
            excluded = _pass(built, work / "excluded", cfg, models, rounds, None)
            included = _pass(built, work / "included", cfg, models, rounds, server)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _summary(cfg, args, n_chunks, index.manifest, rounds, excluded, included)


def _pass(built: Path, path: Path, cfg: MedGraphConfig, models: tuple[Any, Any],
          rounds: list[tuple[QueryAnalysis, list[str], list[LiteratureRecord]]],
          server: EUtilsServer | None) -> list[dict[str, float]]:
    """One pass over the rounds on a fresh copy of the index; fetch timed when ``server`` is given."""
    shutil.copytree(built, path)
    p = Pass(path, cfg, models)
    source = PubMedSource(base_url=server.base_url) if server else None  # NCBI's 3 requests/s
    out = []
    try:
        for analysis, terms, records in rounds:
            start = time.perf_counter()
            p.retriever.retrieve(analysis)
            row = {"plain": ms(start), "fetch": 0.0}
            if source is not None:
                start = time.perf_counter()
                fetched = source.search(terms, max_results=4 * len(records))
                ids = {r.doc_id for r in records}
                records = [r for r in fetched if r.doc_id in ids]
                row["fetch"] = ms(start)
            row.update(p.round(analysis, records))
            row["round"] = row["fetch"] + row["ingest"] + row["refresh"] + row["retrieve"]
            out.append(row)
    finally:
        p.close()
    return out


def _median(rows: list[dict[str, float]], key: str) -> float:
    return round(statistics.median(r[key] for r in rows), 2) if rows else 0.0


def _summary(cfg: MedGraphConfig, args: argparse.Namespace, n_chunks: int, manifest: dict[str, Any],
             rounds: list[Any], excluded: list[dict[str, float]], included: list[dict[str, float]]) -> dict[str, Any]:
    def part(rows: list[dict[str, float]]) -> dict[str, Any]:
        return {
            "round_ms": _median(rows, "round"),
            "ratio_to_plain": round(statistics.median(r["round"] / r["plain"] for r in rows), 2) if rows else 0.0,
            "fetch_ms": _median(rows, "fetch"), "ingest_ms": _median(rows, "ingest"),
            "refresh_ms": _median(rows, "refresh"), "retrieve_after_ms": _median(rows, "retrieve"),
            "retrieve_again_ms": _median(rows, "again"),
            "chunks_ingested_per_round": _median(rows, "chunks"), "docs_ingested_per_round": _median(rows, "docs"),
        }

    return {
        "corpus": {"docs": args.corpus_docs, "chunks": n_chunks, "embedding": manifest["embedding"]},
        "rounds": len(rounds), "abstracts_per_round": args.abstracts,
        "retrieval_paths": list(cfg.retrieval.paths),
        "plain_retrieval_ms": _median(excluded + included, "plain"),
        "fetch_excluded": part(excluded),
        "fetch_included": {**part(included), "rate_per_s": 3.0},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus-docs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--abstracts", type=int, default=5)
    parser.add_argument("--config", default="configs/local.yaml")
    parser.add_argument("--set", action="append", default=[], help="config override a.b=c")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    print(json.dumps(run(args), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
