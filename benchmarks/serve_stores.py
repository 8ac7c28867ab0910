"""`/chat` latency on the Neo4j configuration against the embedded configuration, same corpus, same run.

    python benchmarks/serve_stores.py [--limit N] [--no-pdf] [--questions 30] [--config CFG] [--wait-quiet S]
                                      [--uri bolt://127.0.0.1:7687] [--qdrant-url URL] [--set a.b=c ...]

Input: the bundled demo corpus (``data/demo``: 150 PubMedQA abstracts, the CDC guide PDF, the
German and Chinese files; ``--limit N`` keeps the first N abstracts, ``--no-pdf`` leaves the PDF
out), built in this process with ``jobs.build_corpus.build_corpus`` twice from ``--config``
(``configs/local.yaml``): (a) *embedded*: SQLite graph + Qdrant local mode in a temporary
directory; (b) *neo4j*: the Neo4j at ``--uri`` (password from ``$NEO4J_DEV_PASSWORD``, unset: no
auth) + a fresh collection ``bench_<hex>`` on the Qdrant server at ``--qdrant-url`` (default: the
URL in ``.medgraph/qdrant-server/url``). Both have their own ``app.path`` (quota counts) with the
daily quotas lifted. Questions: PubMedQA ``QUESTION`` fields of the included abstracts, plus
German questions (the ``Fragestellung`` sections) and Chinese ones (``instruction``), 3 more
PubMedQA questions to warm up.

The Neo4j database is shared (other tests and benchmarks write it at the same time): nothing is
wiped. Only the documents this run wrote are deleted afterwards (``GraphStore.delete_documents``
on the demo document IDs that were not in Neo4j before the build), with this run's ``Run`` /
``Failure`` nodes, and the Qdrant collection is dropped. Demo documents already in Neo4j before
the build are left alone (and reported). Documents of others present during the run are
reported: they are part of the graph the Neo4j configuration serves (its in-process PPR index
reads the whole incidence, and rebuilds in the background when others write), so such a run does
not compare the same corpus. ``--wait-quiet S`` waits up to S seconds after the builds until the
database holds only this run's documents and chunks.

Output: JSON on stdout (the last thing printed; Ray's own log lines may come before it): the date, the command, CPU count, ``uptime`` load before and after, the
PPR engine (``retrieval.ppr_engine``), the Neo4j document count before the build, each build's
summary, our documents / chunks / mentions / entities in both graphs (``counts_match``), then per
serving run in order *embedded, neo4j, embedded* (the embedded stores served twice, so run-to-run
noise is visible): ``/health/ready`` store counts and PPR index stats, the whole Neo4j database's
document and chunk counts at start and end; the Neo4j run is ``invalid`` when our documents were
wiped (``wiped``) or others' nodes were in the graph or written during it (``others_in_graph``,
also a PPR index rebuilt during the run); and for the same questions asked one at a time via ``POST /chat`` with httpx:
p50 / p95 / mean / min / max wall latency (ms), refusals, errors; ``ratio_p50`` = neo4j p50 /
embedded p50 (each embedded run and their mean; goal ≤ 1.5).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.config import load_config  # noqa: E402

DEMO = REPO / "data" / "demo"
WARMUP = 3


def load_average() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def corpus(tmp: Path, limit: int | None, pdf: bool) -> tuple[list[str], list[str], list[str], list[str]]:
    """The input paths, the questions measured and the warm-up questions."""
    records = json.loads((DEMO / "pubmedqa_demo.json").read_text())
    keep = dict(list(records.items())[:limit]) if limit else records
    if limit:
        subset = tmp / "pubmedqa_demo.json"
        subset.write_text(json.dumps(keep))
        inputs = [str(subset)]
    else:
        inputs = [str(DEMO / "pubmedqa_demo.json")]
    inputs += [str(DEMO / "pubmedqa_de_demo.jsonl"), str(DEMO / "huatuo_zh_demo.jsonl")]
    if pdf:
        inputs.append(str(DEMO / "cdc_guide_infection_prevention_outpatient_2016.pdf"))
    english = [r["QUESTION"] for r in keep.values()]
    german = []
    for line in (DEMO / "pubmedqa_de_demo.jsonl").read_text().splitlines():
        rec = json.loads(line)
        german += [s["text"] for s in rec.get("sections", []) if s.get("title") == "Fragestellung"][:1]
    chinese = [json.loads(line)["instruction"] for line in (DEMO / "huatuo_zh_demo.jsonl").read_text().splitlines()]
    return inputs, english, german, chinese


def pick_questions(english: list[str], german: list[str], chinese: list[str], n: int) -> tuple[list[str], list[str]]:
    """``n`` questions: a tenth German, a tenth Chinese, the rest English; then the warm-up ones."""
    other = german[: n // 10] + chinese[: n // 10]
    measured_en = english[: n - len(other)]
    warmup = english[len(measured_en): len(measured_en) + WARMUP] or english[-WARMUP:]
    return measured_en + other, warmup


def stats(latencies: list[float]) -> dict[str, float]:
    xs = sorted(latencies)
    p95 = xs[min(len(xs) - 1, max(0, round(0.95 * len(xs)) - 1))]
    return {"n": len(xs), "p50_ms": round(statistics.median(xs), 1), "p95_ms": round(p95, 1),
            "mean_ms": round(statistics.fmean(xs), 1), "min_ms": round(xs[0], 1), "max_ms": round(xs[-1], 1)}


def our_neo4j_counts(store: Any, doc_ids: list[str]) -> dict[str, int]:
    """Documents, chunks, mentions and entities of ``doc_ids`` in the (shared) Neo4j database."""
    with store._driver.session(database=store.cfg.database) as session:
        row = session.run(
            "MATCH (d:Document) WHERE d.doc_id IN $ids "
            "OPTIONAL MATCH (c:Chunk)-[:FROM_DOC]->(d) "
            "OPTIONAL MATCH (e:Entity)-[m:MENTIONED_IN]->(c) "
            "RETURN count(DISTINCT d) AS documents, count(DISTINCT c) AS chunks, "
            "count(DISTINCT m) AS mentions, count(DISTINCT e) AS entities", ids=doc_ids).single()
    return dict(row)


def neo4j_documents(store: Any) -> int:
    with store._driver.session(database=store.cfg.database) as session:
        return int(session.run("MATCH (d:Document) RETURN count(d) AS n").single()["n"])


def neo4j_totals(store: Any) -> dict[str, int]:
    """Documents and chunks in the whole database (ours and everyone else's)."""
    with store._driver.session(database=store.cfg.database) as session:
        docs = session.run("MATCH (d:Document) RETURN count(d) AS n").single()["n"]
        chunks = session.run("MATCH (c:Chunk) RETURN count(c) AS n").single()["n"]
    return {"documents": int(docs), "chunks": int(chunks)}


def wait_quiet(store: Any, ours: dict[str, int], timeout: float) -> dict[str, Any]:
    """Wait (up to ``timeout`` s) until the database holds only our documents and chunks, twice in a row."""
    start, quiet, seen = time.monotonic(), 0, neo4j_totals(store)
    while timeout > 0 and time.monotonic() - start < timeout:
        seen = neo4j_totals(store)
        quiet = quiet + 1 if seen == {"documents": ours["documents"], "chunks": ours["chunks"]} else 0
        if quiet >= 2:
            break
        time.sleep(10)
    return {"waited_s": round(time.monotonic() - start), "totals": seen,
            "quiet": seen == {"documents": ours["documents"], "chunks": ours["chunks"]}}


def serve_run(label: str, cfg: Any, questions: list[str], warmup: list[str],
              neo: Any | None, ours: list[str]) -> dict[str, Any]:
    from ray import serve

    from serve.demo import start

    out: dict[str, Any] = {"config": label, "load_before": load_average()}
    if neo is not None:
        out["neo4j_totals_start"] = neo4j_totals(neo)
        out["our_documents_start"] = our_neo4j_counts(neo, ours)["documents"]
    t0 = time.perf_counter()
    url = start(cfg)
    out["start_s"] = round(time.perf_counter() - t0, 1)
    try:
        with httpx.Client(timeout=120) as client:
            ready = client.get(f"{url}/health/ready").json().get("stores", {})
            ready.pop("last_run", None)
            out["ready_before"] = ready
            for q in warmup:
                client.post(f"{url}/chat", json={"message": q})
            latencies: list[float] = []
            refused, errors = 0, []
            for q in questions:
                t = time.perf_counter()
                r = client.post(f"{url}/chat", json={"message": q})
                latencies.append((time.perf_counter() - t) * 1000)
                if r.status_code != 200:
                    errors.append(f"{r.status_code} {r.text[:120]}")
                elif r.json().get("refused"):
                    refused += 1
            out["latency"] = stats(latencies)
            out["latencies_ms"] = [round(x) for x in latencies]
            out["refused"] = refused
            out["errors"] = errors
            ready = client.get(f"{url}/health/ready").json().get("stores", {})
            ready.pop("last_run", None)
            out["ready_after"] = ready
    finally:
        serve.shutdown()
    if neo is not None:
        out["neo4j_totals_end"] = totals = neo4j_totals(neo)
        ours_now = our_neo4j_counts(neo, ours)
        out["our_documents_end"] = ours_now["documents"]
        # someone wiped our documents, or others' documents were in (or written to) the served graph
        # during the run: the Neo4j configuration then served another corpus than the embedded one
        out["wiped"] = ours_now["documents"] < len(ours) or out["our_documents_start"] < len(ours)
        gens = [(r.get("ppr_index") or {}).get("generation") for r in (out["ready_before"], out["ready_after"])]
        out["others_in_graph"] = (out["neo4j_totals_start"] != totals or totals["chunks"] != ours_now["chunks"]
                                  or out["ready_before"].get("chunks") != out["ready_after"].get("chunks")
                                  or gens[0] != gens[1])
        out["invalid"] = out["wiped"] or out["others_in_graph"]
    out["load_after"] = load_average()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="configs/local.yaml")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="A.B=C")
    ap.add_argument("--limit", type=int, default=None, help="PubMedQA abstracts kept (default: all 150)")
    ap.add_argument("--no-pdf", action="store_true", help="leave the CDC guide PDF out")
    ap.add_argument("--questions", type=int, default=30)
    ap.add_argument("--uri", default="bolt://127.0.0.1:7687")
    ap.add_argument("--password-env", default="NEO4J_DEV_PASSWORD")
    ap.add_argument("--qdrant-url", default=None)
    ap.add_argument("--wait-quiet", type=float, default=0.0, metavar="S",
                    help="before serving, wait up to S seconds until Neo4j holds only this run's documents")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    os.chdir(REPO)

    from jobs.build_corpus import build_corpus
    from medgraph.stores.factory import make_graph_store

    qdrant_url = args.qdrant_url or (REPO / ".medgraph" / "qdrant-server" / "url").read_text().strip()
    collection = f"bench_{uuid.uuid4().hex[:10]}"
    result: dict[str, Any] = {
        "benchmark": "serve_stores", "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python " + " ".join([f"benchmarks/{Path(__file__).name}", *sys.argv[1:]]),
        "cpus": os.cpu_count(), "nproc": subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip(),
        "load_before": load_average(), "order": ["embedded", "neo4j", "embedded"],
    }
    with tempfile.TemporaryDirectory(prefix="serve_stores_") as tmp_name:
        tmp = Path(tmp_name)
        inputs, english, german, chinese = corpus(tmp, args.limit, not args.no_pdf)
        questions, warmup = pick_questions(english, german, chinese, args.questions)
        common = [*args.overrides, f"auth.per_user_daily={100_000}", f"auth.global_daily={100_000}"]
        emb_sets = [*common, f"stores.graph.path={tmp / 'graph.sqlite'}", f"stores.vector.path={tmp / 'qdrant'}",
                    f"app.path={tmp / 'app-embedded.sqlite'}", f"serve.port={free_port()}"]
        neo_sets = [*common,
                    "stores.graph=" + json.dumps({"kind": "neo4j", "uri": args.uri, "password_env": args.password_env}),
                    "stores.vector=" + json.dumps({"kind": "qdrant_server", "url": qdrant_url, "collection": collection}),
                    f"app.path={tmp / 'app-neo4j.sqlite'}", f"serve.port={free_port()}"]
        emb_cfg = load_config(args.config, emb_sets)
        neo_cfg = load_config(args.config, neo_sets)
        result.update({"inputs": [str(Path(p).relative_to(REPO)) if p.startswith(str(REPO)) else Path(p).name
                                  for p in inputs],
                       "limit": args.limit, "ppr_engine": emb_cfg.retrieval.ppr_engine,
                       "ppr_engine_neo4j": neo_cfg.retrieval.ppr_engine, "qdrant_collection": collection,
                       "questions": len(questions), "warmup": len(warmup)})

        neo = make_graph_store(neo_cfg.stores.graph)
        before_ids = set(neo.document_hashes(complete_only=False))
        result["neo4j_documents_before_build"] = len(before_ids)
        ours: list[str] = []
        run_id = "serve-stores-" + uuid.uuid4().hex[:8]
        try:
            t = time.perf_counter()
            emb_summary = build_corpus(emb_cfg, inputs)
            result["build_embedded_s"] = round(time.perf_counter() - t, 1)
            result["build_embedded"] = emb_summary.get("counts", emb_summary)
            emb_store = make_graph_store(emb_cfg.stores.graph)
            emb_ids = sorted(emb_store.document_hashes(complete_only=True))
            emb_counts = emb_store.counts()
            emb_store.close()
            pre_existing = sorted(set(emb_ids) & before_ids)
            result["demo_documents_already_in_neo4j"] = len(pre_existing)

            t = time.perf_counter()
            neo_summary = build_corpus(neo_cfg, inputs, run_id=run_id)
            result["build_neo4j_s"] = round(time.perf_counter() - t, 1)
            result["build_neo4j"] = neo_summary.get("counts", neo_summary)
            after_ids = set(neo.document_hashes(complete_only=False))
            ours = sorted((after_ids - before_ids) & set(emb_ids))
            neo_counts = our_neo4j_counts(neo, emb_ids)
            emb_view = {k: emb_counts[k] for k in ("documents", "chunks", "mentions", "entities")}
            result["counts"] = {"embedded": emb_view, "neo4j_ours": neo_counts,
                                "neo4j_foreign_documents": neo4j_documents(neo) - neo_counts["documents"]}
            result["counts_match"] = emb_view == neo_counts

            if args.wait_quiet:
                result["wait_quiet"] = wait_quiet(neo, neo_counts, args.wait_quiet)
            runs = [serve_run("embedded", emb_cfg, questions, warmup, None, ours),
                    serve_run("neo4j", neo_cfg, questions, warmup, neo, emb_ids),
                    serve_run("embedded", emb_cfg, questions, warmup, None, ours)]
            result["runs"] = runs
            e1, n1, e2 = (r["latency"]["p50_ms"] for r in runs)
            result["p50_ms"] = {"embedded_1": e1, "neo4j": n1, "embedded_2": e2}
            result["ratio_p50"] = {"vs_embedded_1": round(n1 / e1, 2), "vs_embedded_2": round(n1 / e2, 2),
                                   "vs_embedded_mean": round(n1 / ((e1 + e2) / 2), 2), "goal": 1.5}
            result["valid"] = not runs[1]["invalid"] and result["counts_match"]
        finally:
            cleanup: dict[str, Any] = {}
            try:
                deleted = neo.delete_documents(ours)
                cleanup["documents_deleted"] = deleted.documents
                cleanup["chunks_deleted"] = len(deleted.chunk_ids)
                with neo._driver.session(database=neo.cfg.database) as session:
                    session.run("MATCH (n) WHERE (n:Run OR n:Failure) AND (n.run_id = $id) DETACH DELETE n",
                                id=run_id).consume()
                cleanup["neo4j_documents_after_cleanup"] = neo4j_documents(neo)
            finally:
                neo.close()
            for name in (collection, f"{collection}_communities"):
                r = httpx.delete(f"{qdrant_url}/collections/{name}", timeout=30)
                cleanup[f"qdrant_drop_{name}"] = r.status_code
            result["cleanup"] = cleanup
    import ray

    ray.shutdown()  # before printing: Ray's shutdown messages would land in the middle of the JSON
    result["load_after"] = load_average()
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
