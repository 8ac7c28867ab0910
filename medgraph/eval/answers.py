"""End-to-end answer benchmark: the agent's answers, per language, against known answers.

    python -m medgraph.eval answers --corpus CORPUS [MORE ...] --dev DEV.jsonl [--dev-range A-B] \
        [--test TEST.jsonl] [--test-range A-B] [--config configs/local.yaml] [--set a.b=c ...] \
        [--limit N] [--runs-out runs.json] [--judge ENGINE] [--json]

Input: a corpus (JSONL records or document files such as PDFs, indexed as by ``medgraph.eval
retrieval`` and cached the same way) and question files, one JSON object per line:
- ``{query_id, text, language, answerable?: true, relevant_doc_ids?: [doc_id], doc?: file name,
  pages?: [1-based page], section?: section title, reference?: text, answer?: text}``.
  The gold documents are ``relevant_doc_ids`` or ``file:<doc>`` (an indexed file, ID
  ``file:<name>@<hash>``, matches by its name: ``gold_key``); ``pages`` and ``section`` say
  where in them the answer is; ``reference`` (or ``answer``) is a reference answer text.
  ``answerable: false`` marks questions the corpus cannot answer: they must be refused.
  PubMedQA in this format: ``convert-pubmedqa --hold-out-conclusion`` (its conclusion is the
  reference and is not indexed).

Every question is run through the Serve application's agent in process (``serve.inprocess``, built
by ``medgraph.assemble`` as the deployments are: guard, rewrite, analysis, retrieval, rerank, each
tier's engine), one question at a time, each
in a new session, with gap completion off (the corpus is fixed). The language is detected, as for
a user's request; the file's ``language`` groups the report.

Output (``--json``): per split (``dev``, ``test``): ``overall`` and ``by_language`` with
- ``answerable`` / ``unanswerable``: question counts;
- ``answered``: share of answerable questions answered (not refused);
- ``cited_gold``: share of answerable questions whose answer cites a gold passage (gold document,
  and one of ``pages`` when given); ``cited_gold_doc`` (document only), ``cited_gold_section``
  (gold passage whose section path names ``section``); ``cited_every_gold``: every gold document
  cited (a multi-hop question: a passage of every hop);
- ``refused_unanswerable``: share of unanswerable questions refused;
- ``supported_sentences``: mean share of an answer's sentences quoted from a gold passage
  (answered answerable questions: the answer's sentence-level relevance);
- RAGAS's reference-based forms, against the gold passages (``reference_scores``; no judge model):
  ``context_precision`` (rank-weighted) and ``context_recall`` of the top ``CONTEXT_K`` evidence
  passages, ``citation_precision`` (answered questions) and ``citation_recall`` of the answer;
- with ``--judge ENGINE``, RAGAS's judged forms (``medgraph.eval.judge``): ``faithfulness``,
  ``answer_relevancy``, ``judged_context_precision``; the output names the judge (``judge``) and
  counts the calls that gave no verdict (``judge_failures``);
- ``rougeL`` / ``rouge1`` (F-measure, stemmed; answerable questions with a reference, a refusal
  scoring 0) of the answer (markers and lead line removed), and ``lead_rougeL`` / ``lead_rouge1``
  of the lead-sentence baseline in the same run: as many sentences as the answer has (at least
  one) from the start of the top-ranked evidence passage;
- ``latency_ms``: p50 / p90 of the whole agent run.
``--runs-out`` writes every question's answer, citations and scores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medgraph import lang
from medgraph.eval.metrics import CONTEXT_K, rank_weighted_precision
from medgraph.eval.retrieval import open_index, parse_range, read_jsonl

log = logging.getLogger(__name__)
JUDGED = ("faithfulness", "answer_relevancy", "judged_context_precision")  # medgraph.eval.judge (--judge)
JUDGE_TOKENS = 64  # one verdict or one question in DSPy's chat format


@dataclass(frozen=True)
class AnswerQuery:
    query_id: str
    text: str
    language: str
    answerable: bool
    gold_docs: frozenset[str]
    pages: tuple[int, ...] = ()
    section: str | None = None
    reference: str | None = None


def read_answer_queries(path: Path, lines: tuple[int, int] | None = None, limit: int | None = None) -> list[AnswerQuery]:
    """The questions of ``path`` (lines ``lines[0]..lines[1]``, 1-based, when given; then the first ``limit``)."""
    records = list(read_jsonl(path))
    if lines is not None:
        if lines[1] > len(records):
            raise ValueError(f"{path} has {len(records)} questions; range {lines[0]}-{lines[1]} is past its end")
        records = records[lines[0] - 1:lines[1]]
    out = []
    for n, rec in enumerate(records, 1):
        if not rec.get("text"):
            raise ValueError(f"{path}: question {n} has no text")
        answerable = bool(rec.get("answerable", True))
        gold = [gold_key(str(d)) for d in rec.get("relevant_doc_ids") or []]
        if not gold and rec.get("doc"):
            gold = [f"file:{rec['doc']}"]
        if answerable and not gold:
            raise ValueError(f"{path}: answerable question {rec.get('query_id', n)} names no gold document")
        out.append(AnswerQuery(
            str(rec.get("query_id", n)), str(rec["text"]), str(rec.get("language") or lang.PIVOT), answerable,
            frozenset(gold), tuple(int(p) for p in rec.get("pages") or ()), rec.get("section") or None,
            rec.get("reference") or rec.get("answer") or None,
        ))
    return out[:limit] if limit else out


# --- scoring one answer -----------------------------------------------------------------------


def gold_key(doc_id: str) -> str:
    """What a document ID is compared by: a file document by its file name (``file:cdc.pdf@<hash>``
    → ``file:cdc.pdf``), since a question file names the PDF, not the folder it was indexed from;
    other IDs as they are."""
    from medgraph.ingest.storage import file_doc_name

    name = file_doc_name(doc_id)
    return f"file:{name}" if name is not None else doc_id


def is_gold(query: AnswerQuery, doc_id: str, page: int | None) -> bool:
    return gold_key(doc_id) in query.gold_docs and (not query.pages or page in query.pages)


def _section_hit(section: str | None, path: Sequence[str]) -> bool:
    if not section:
        return True
    wanted = section.casefold()
    return any(wanted in p.casefold() for p in path)


_rouge: Any = None


def rouge(candidate: str, reference: str) -> tuple[float, float]:
    """(ROUGE-L F, ROUGE-1 F) of ``candidate`` against ``reference`` (rouge-score, Porter-stemmed)."""
    global _rouge
    if _rouge is None:
        from rouge_score import rouge_scorer

        _rouge = rouge_scorer.RougeScorer(["rougeL", "rouge1"], use_stemmer=True)
    if not candidate.strip():
        return 0.0, 0.0
    scores = _rouge.score(reference, candidate)
    return scores["rougeL"].fmeasure, scores["rouge1"].fmeasure


def lead_baseline(evidence: Sequence[Any], n_sentences: int) -> str:
    """The first ``n_sentences`` sentences of the top-ranked evidence passage."""
    from medgraph.ingest.text import split_sentences

    top = next((c.chunk for c in evidence if getattr(c, "chunk", None) is not None), None)
    if top is None:
        return ""
    return " ".join(split_sentences(top.text)[:max(n_sentences, 1)])


def score_answer(query: AnswerQuery, answer: Any, evidence: Sequence[Any], latency_ms: float) -> dict[str, Any]:
    """One question's record: what was answered and cited, and how it compares with the gold."""
    cites = {c.number: c for c in answer.citations}
    gold_numbers = {n for n, c in cites.items() if is_gold(query, c.doc_id, c.page)}
    record: dict[str, Any] = {
        "query_id": query.query_id, "language": query.language, "answerable": query.answerable,
        "question": query.text, "refused": bool(answer.refused), "model_used": answer.model_used,
        "latency_ms": round(latency_ms, 1), "answer": answer.content,
        "citations": [{"number": c.number, "doc_id": c.doc_id, "page": c.page, "section": list(c.section_path),
                       "relevance": c.relevance} for c in answer.citations],
        # the evidence the answer was composed from: its best relevance (what refusal is decided on)
        # and whether a gold passage was among it (retrieval's share of a miss)
        "top_relevance": round(max((float(c.relevance) for c in evidence), default=0.0), 4),
        "gold_in_evidence": any(c.chunk is not None and is_gold(query, c.chunk.doc_id, c.chunk.page)
                                for c in evidence),
        "evidence": [{"relevance": round(float(c.relevance), 4), "features": {k: round(v, 4) for k, v in c.features.items()},
                      "gold": c.chunk is not None and is_gold(query, c.chunk.doc_id, c.chunk.page)}
                     for c in evidence[:8]],
    }
    if not query.answerable:
        return record
    answered = not answer.refused
    record.update({
        "cited_gold_doc": answered and any(gold_key(c.doc_id) in query.gold_docs for c in answer.citations),
        "cited_gold": answered and bool(gold_numbers),
        # every gold document cited: for a multi-hop question, a passage of every hop
        "cited_every_gold": answered and query.gold_docs <= {gold_key(c.doc_id) for c in answer.citations},
        "cited_gold_section": answered and any(_section_hit(query.section, cites[n].section_path) for n in gold_numbers),
        "supported_sentences": (sum(n in gold_numbers for _, n in answer.sentences) / len(answer.sentences)
                                if answered and answer.sentences else 0.0),
        **reference_scores(query, answer, evidence[:CONTEXT_K]),
    })
    if query.reference:
        text = " ".join(s for s, _ in answer.sentences) if answered else ""
        lead = lead_baseline(evidence, len(answer.sentences))
        record["rougeL"], record["rouge1"] = rouge(text, query.reference)
        record["lead_rougeL"], record["lead_rouge1"] = rouge(lead, query.reference)
    return record


def reference_scores(query: AnswerQuery, answer: Any, contexts: Sequence[Any]) -> dict[str, float | None]:
    """The reference-based (gold-ID) forms of RAGAS's metrics for one answerable question:

    - ``context_precision``: rank-weighted precision of the contexts (RAGAS's ID-based context
      precision: the mean of precision@k over the ranks k that hold a gold passage; 0 when none does);
    - ``context_recall``: the share of gold documents with a passage among the contexts;
    - ``citation_precision``: the share of the answer's citations that are gold passages (None for a
      refusal: it cites nothing);
    - ``citation_recall``: the share of gold documents the answer cites (0 for a refusal)."""
    gold = [c.chunk is not None and is_gold(query, c.chunk.doc_id, c.chunk.page) for c in contexts]
    in_context = {gold_key(c.chunk.doc_id) for c, g in zip(contexts, gold, strict=True) if g}
    cited = list(answer.citations) if not answer.refused else []
    cited_gold = {gold_key(c.doc_id) for c in cited if is_gold(query, c.doc_id, c.page)}
    n_gold = max(1, len(query.gold_docs))
    return {
        "context_precision": rank_weighted_precision(gold),
        "context_recall": len(in_context & query.gold_docs) / n_gold,
        "citation_precision": (sum(is_gold(query, c.doc_id, c.page) for c in cited) / len(cited)) if cited else None,
        "citation_recall": len(cited_gold & query.gold_docs) / n_gold,
    }


def _mean(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def summarise_answers(records: list[dict[str, Any]]) -> dict[str, Any]:
    answerable = [r for r in records if r["answerable"]]
    unanswerable = [r for r in records if not r["answerable"]]
    answered = [r for r in answerable if not r["refused"]]
    referenced = [r for r in answerable if "rougeL" in r]
    out: dict[str, Any] = {
        "answerable": len(answerable), "unanswerable": len(unanswerable),
        "answered": _mean([float(not r["refused"]) for r in answerable]),
        "cited_gold": _mean([float(r["cited_gold"]) for r in answerable]),
        "cited_gold_doc": _mean([float(r["cited_gold_doc"]) for r in answerable]),
        "cited_every_gold": _mean([float(r["cited_every_gold"]) for r in answerable]),
        "cited_gold_section": _mean([float(r["cited_gold_section"]) for r in answerable]),
        "refused_unanswerable": _mean([float(r["refused"]) for r in unanswerable]),
        "supported_sentences": _mean([r["supported_sentences"] for r in answered]),
        "context_precision": _mean([r["context_precision"] for r in answerable]),
        "context_recall": _mean([r["context_recall"] for r in answerable]),
        "citation_precision": _mean([r["citation_precision"] for r in answered if r["citation_precision"] is not None]),
        "citation_recall": _mean([r["citation_recall"] for r in answerable]),
        **{key: _mean([r[key] for r in records if r.get(key) is not None])
           for key in JUDGED if any(key in r for r in records)},
        "latency_ms": {"p50": _pct([r["latency_ms"] for r in records], 0.5),
                       "p90": _pct([r["latency_ms"] for r in records], 0.9)},
    }
    if referenced:
        for key in ("rougeL", "rouge1", "lead_rougeL", "lead_rouge1"):
            out[key] = _mean([r[key] for r in referenced])
    return out


def summarise_split(records: list[dict[str, Any]]) -> dict[str, Any]:
    languages = sorted({r["language"] for r in records})
    return {"overall": summarise_answers(records),
            "by_language": {lang: summarise_answers([r for r in records if r["language"] == lang]) for lang in languages}}


# --- running the agent ------------------------------------------------------------------------


def run_questions(agent: Any, queries: Sequence[AnswerQuery], judge: Any = None) -> list[dict[str, Any]]:
    """Every question through the agent, scored; with ``judge`` (``medgraph.eval.judge.Judge``) also
    RAGAS's judged metrics (not timed: the latency is the agent's)."""
    from medgraph.agent.graph import AgentRequest

    records = []
    for i, query in enumerate(queries, 1):
        start = time.perf_counter()
        state = asyncio.run(agent.run(AgentRequest(query.text)))
        latency = 1000 * (time.perf_counter() - start)
        evidence = state.get("evidence") or []
        record = score_answer(query, state["answer"], evidence, latency)
        if judge is not None:
            record.update(judge.score(query.text, state["answer"], evidence[:CONTEXT_K], query.reference or ""))
        records.append(record)
        if i % 50 == 0:
            log.info("answered %d/%d questions", i, len(queries))
    return records


@contextmanager
def corpus_agent(corpus: Sequence[Path], config: str, overrides: Sequence[str]) -> Iterator[tuple[Any, dict[str, Any], Any]]:
    """The Serve application's agent, in process, over ``corpus`` indexed as ``open_index`` indexes
    it (cached): yields (its config, the index's manifest, the agent); gap completion off, its
    sessions in a temporary app database."""
    from medgraph.config import load_config
    from serve.inprocess import build_agent

    index = open_index(list(corpus), load_config(config, list(overrides)))
    index_path, manifest = index.path, index.manifest
    index.close()  # the agent's services open the stores themselves
    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(config, [
            *overrides, f"stores.graph.path={index_path}/graph.sqlite", f"stores.vector.path={index_path}/qdrant",
            "stores.vector.collection=chunks", f"app.path={tmp}/app.sqlite", "gaps.enabled=false",
        ])
        built = build_agent(cfg)
        try:
            yield cfg, manifest, built.agent
        finally:
            built.close()


def make_judge(cfg: Any, engine: str) -> Any:
    """The judge (``medgraph.eval.judge.Judge``) on ``engine``, built in this process, with the
    configured dense embedder for answer relevancy; named by the engine and its model."""
    from medgraph.assemble import LocalEngines
    from medgraph.embed import make_embedder
    from medgraph.eval.judge import Judge
    from medgraph.llm.dspy_bridge import chat_lm

    spec = cfg.tiers.engines[engine]
    model = getattr(spec, "model_path", None) or getattr(spec, "model", None) or spec.kind
    embedder = make_embedder(cfg.embedding)
    return Judge(chat_lm(LocalEngines(cfg).chat_for(engine, JUDGE_TOKENS)), f"{engine} ({spec.kind}: {model})",
                 embed=embedder.embed_query_dense)


def main(argv: list[str] | None = None) -> int:
    from medgraph.config import load_config

    ap = argparse.ArgumentParser(prog="python -m medgraph.eval answers", description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True, nargs="+", type=Path, help="corpus files (JSONL records or documents)")
    ap.add_argument("--dev", required=True, type=Path, help="dev questions (JSONL)")
    ap.add_argument("--dev-range", help="1-based inclusive line range of --dev, e.g. 1-500")
    ap.add_argument("--test", type=Path, help="test questions (JSONL): run once, with the same settings")
    ap.add_argument("--test-range", help="1-based inclusive line range of --test")
    ap.add_argument("--config", default="configs/local.yaml")
    ap.add_argument("--set", dest="overrides", action="append", default=[], help="config override a.b=c")
    ap.add_argument("--limit", type=int, help="at most this many questions per split")
    ap.add_argument("--runs-out", type=Path, help="write every question's answer and scores here (JSON)")
    ap.add_argument("--judge", metavar="ENGINE", help="also RAGAS's judged metrics, judged by this engine of tiers.engines")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    missing = [p for p in [*args.corpus, args.dev, *([args.test] if args.test else [])] if not p.is_file()]
    if missing:
        ap.error(f"no such file: {', '.join(map(str, missing))}")
    try:  # a malformed question file or range is the caller's error, said in one line (as `retrieval` does)
        splits = {"dev": read_answer_queries(args.dev, parse_range(args.dev_range), args.limit)}
        if args.test:
            splits["test"] = read_answer_queries(args.test, parse_range(args.test_range), args.limit)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.test:
        overlap = {q.text for q in splits["dev"]} & {q.text for q in splits["test"]}
        if overlap:
            print(f"error: {len(overlap)} questions are in both dev and test; they must be different questions",
                  file=sys.stderr)
            return 2
    base = load_config(args.config, args.overrides)
    if args.judge and args.judge not in base.tiers.engines:
        print(f"error: --judge {args.judge}: no such engine; configured: {', '.join(sorted(base.tiers.engines))}",
              file=sys.stderr)
        return 2
    runs: dict[str, list[dict[str, Any]]] = {}
    with corpus_agent(args.corpus, args.config, args.overrides) as (cfg, manifest, agent):
        out: dict[str, Any] = {"corpus": [str(p) for p in args.corpus], "n_docs": manifest["n_docs"],
                               "n_chunks": manifest["n_chunks"], "embedding": manifest["embedding"],
                               "answer": base.answer.model_dump(), "splits": {}}
        judge = make_judge(cfg, args.judge) if args.judge else None
        if judge is not None:
            out["judge"] = judge.name
        for split, queries in splits.items():
            runs[split] = run_questions(agent, queries, judge)
            out["splits"][split] = summarise_split(runs[split])
        if judge is not None:
            out["judge_failures"] = judge.failures
    if args.runs_out:
        args.runs_out.parent.mkdir(parents=True, exist_ok=True)
        args.runs_out.write_text(json.dumps(runs, ensure_ascii=False, indent=1))
    print(json.dumps(out, indent=None if args.json else 2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
