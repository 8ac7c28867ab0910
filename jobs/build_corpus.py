"""Corpus build job: files → parse → OCR → chunks → normalise → NER → link → embed → graph + vector stores.

    python -m jobs.build_corpus --config configs/local.yaml --input data/demo [--set a.b=c ...]
    ray job submit --working-dir . -- python -m jobs.build_corpus --config configs/cluster.yaml --input ...

Stages run on Ray Data actor pools sized in ``pipeline:`` of the config; chunking, extraction and
embedding are the steps of ``medgraph.index.pipeline``. Writes:

- with server stores (Neo4j and a Qdrant server) a pool of writer actors (``pipeline.write``,
  autoscaled between ``min_actors`` and ``max_actors``) writes directly; the driver only reads the
  writers' per-batch summaries;
- with an embedded store on either side (SQLite, Qdrant local mode: one owner process) the driver
  is the single writer and consumes the stream.

Re-running is idempotent: documents already complete with the same content are skipped, partial
ones are redone, and writes are upserts keyed by content hashes, so a batch retried after a lost
actor or node never duplicates. The run, its progress (every few seconds: documents done, failed,
skipped, chunks, chunks/s), its summary and every failure with its reason are recorded in the graph
store, where ``GET /health/ready`` reads them.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobs.cli import finish, job_parser, start_logging
from medgraph.config import MedGraphConfig, load_config
from medgraph.config.models import StageResources
from medgraph.index.writer import CorpusWriter, WriteStats
from medgraph.ingest.loaders import expand_inputs, plan_shards
from medgraph.observe import tracing
from medgraph.schemas import Failure

if TYPE_CHECKING:
    from jobs.stages import BuildTrace

log = logging.getLogger("medgraph.build_corpus")


def ensure_vocabulary(cfg: MedGraphConfig) -> Any:
    """Load the vocabulary, (re)building it first when it is missing or its sources changed."""
    from medgraph.ontology.build import load_or_build

    return load_or_build(cfg.vocabulary)


def pool_options(res: StageResources) -> dict[str, Any]:
    """Ray Data options of an actor-pool stage: its autoscaled pool, CPUs per actor and GPUs if any."""
    import ray.data

    pool: dict[str, Any] = {
        "compute": ray.data.ActorPoolStrategy(min_size=res.min_actors, max_size=res.max_actors),
        "num_cpus": res.num_cpus,
    }
    if res.num_gpus:
        pool["num_gpus"] = res.num_gpus
    return pool


def build_trace(cfg: MedGraphConfig) -> BuildTrace | None:
    """The current build span's context for the stage actors (None when tracing is off)."""
    from jobs.stages import BuildTrace

    return BuildTrace(cfg.tracing, tracing.carrier()) if cfg.tracing.enabled else None


def parsed_dataset(cfg: MedGraphConfig, shards: list[Any], complete: dict[str, str]) -> Any:
    """Shards → parse (the ``load`` pool) → OCR + chunk (the ``parse.ocr.pool``): chunk rows."""
    import ray

    from jobs.stages import OcrAndChunk, Parse

    items = [{"path": s.path, "start": s.start, "stop": -1 if s.stop is None else s.stop} for s in shards]
    ds = ray.data.from_items(items, override_num_blocks=max(1, len(items)))
    trace = build_trace(cfg)
    ds = ds.flat_map(Parse, fn_constructor_kwargs={"parse": cfg.parse, "trace": trace}, **pool_options(cfg.pipeline.load))
    return ds.flat_map(
        OcrAndChunk, fn_constructor_kwargs={"parse": cfg.parse, "chunking": cfg.chunking, "complete": complete,
                                            "trace": trace},
        **pool_options(cfg.parse.ocr.pool),
    )


def build_dataset(cfg: MedGraphConfig, shards: list[Any], complete: dict[str, str]) -> Any:
    from jobs.stages import Embed, Extract

    p = cfg.pipeline
    ds = parsed_dataset(cfg, shards, complete)
    ds = ds.map_batches(
        Extract, batch_size=p.extract.batch_size, batch_format="numpy", **pool_options(p.extract),
        fn_constructor_kwargs={"vocab_path": cfg.vocabulary.path, "ner": cfg.ner, "linking": cfg.linking,
                               "normalise_text": cfg.normalise.enabled, "trace": build_trace(cfg)},
    )
    return ds.map_batches(
        Embed, batch_size=p.embed.batch_size, batch_format="numpy", **pool_options(p.embed),
        fn_constructor_kwargs={"cfg": cfg.embedding, "trace": build_trace(cfg)},
    )


def writer_pool(cfg: MedGraphConfig) -> bool:
    """Whether writer actors write (both stores are servers) or the driver does (an embedded store)."""
    return cfg.stores.graph.kind == "neo4j" and cfg.stores.vector.kind == "qdrant_server"


def write_dataset(cfg: MedGraphConfig, ds: Any, run_id: str) -> Any:
    """The writer pool's stage: embedded chunk rows in, one summary row per written batch out."""
    from jobs.stages import Write

    return ds.map_batches(
        Write, batch_size=cfg.pipeline.write.batch_size, batch_format="numpy", **pool_options(cfg.pipeline.write),
        fn_constructor_kwargs={"stores": cfg.stores, "vocab_path": cfg.vocabulary.path, "run_id": run_id,
                               "trace": build_trace(cfg)},
    )


class Progress:
    """The run's progress: logged, and recorded with the run in the graph store (``report_progress``),
    at most every ``every`` seconds."""

    def __init__(self, graph: Any, run_id: str, every: float = 5.0) -> None:
        self.graph, self.run_id = graph, run_id
        self.start = self.last = time.monotonic()
        self.every = every
        self.stats = WriteStats()
        self.skipped = 0
        self.failures: dict[tuple[str, str, str], Failure] = {}  # one per (document, source, stage)

    def add_failures(self, failures: list[Failure]) -> None:
        for f in failures:
            self.failures.setdefault((f.doc_id, f.source, f.stage), f)

    def snapshot(self) -> dict[str, Any]:
        elapsed = time.monotonic() - self.start
        return {"documents_done": len(set(self.stats.documents_completed)), "documents_skipped": self.skipped,
                "documents_failed": len(self.failures), "chunks": self.stats.chunks, "mentions": self.stats.mentions,
                "elapsed_s": round(elapsed, 1), "chunks_per_s": round(self.stats.chunks / max(elapsed, 1e-9), 1)}

    def tick(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last >= self.every:
            self.last = now
            snap = self.snapshot()
            log.info("written %d documents, %d chunks (%.1f chunks/s), %d skipped, %d failed", snap["documents_done"],
                     snap["chunks"], snap["chunks_per_s"], snap["documents_skipped"], snap["documents_failed"])
            try:
                self.graph.report_progress(self.run_id, snap)
            except Exception as exc:  # progress is informative; a store hiccup must not stop the build
                log.warning("could not record progress: %s", exc)


def consume(ds: Any, writer: CorpusWriter, run_id: str, batch_size: int, progress: Progress) -> None:
    """The single-writer path: the driver owns the embedded stores and writes every batch."""
    from jobs.stages import write_batch

    for batch in ds.iter_batches(batch_size=batch_size, batch_format="numpy"):
        with tracing.span("build.write", {"rows_in": len(batch["kind"])}) as span:
            stats, failed, skipped = write_batch(writer, run_id, batch)
            span.set_attributes({"chunks": stats.chunks, "mentions": stats.mentions, "failures": len(failed)})
        progress.add_failures(failed)
        progress.skipped += skipped
        progress.stats.add(stats)
        progress.tick()


def consume_summaries(ds: Any, progress: Progress) -> None:
    """The writer-pool path: the writers have written; the driver adds up their batch summaries."""
    for row in ds.iter_rows():
        progress.stats.add(WriteStats(int(row["chunks"]), int(row["mentions"]), json.loads(str(row["completed_json"]))))
        progress.skipped += int(row["skipped"])
        progress.add_failures([Failure(**f) for f in json.loads(str(row["failures_json"]))])
        progress.tick()


def open_writer(cfg: MedGraphConfig, vocab: Any, dense_dim: int, sparse_idf: bool) -> CorpusWriter:
    from medgraph.stores import make_graph_store, make_vector_store

    vectors = make_vector_store(cfg.stores.vector)
    vectors.ensure_collection(dense_dim, sparse_idf)
    return CorpusWriter(make_graph_store(cfg.stores.graph), vectors, vocab.get)


def build_corpus(cfg: MedGraphConfig, inputs: list[str], run_id: str | None = None) -> dict[str, Any]:
    """Run the whole build (one trace, ``corpus.build``, when tracing is on); returns the summary
    that is also recorded as the run's status."""
    tracing.setup_process(cfg.tracing, "medgraph-build")
    run_id = run_id or time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
    with tracing.span("corpus.build", {"run_id": run_id, "inputs": [str(i) for i in inputs]}) as span:
        summary = _build(cfg, inputs, run_id)
        span.set_attributes({"status": summary["status"], "documents": summary["documents_written"],
                             "chunks": summary["chunks_written"], "failures": len(summary["failures"])})
    tracing.flush()
    return summary


def _build(cfg: MedGraphConfig, inputs: list[str], run_id: str) -> dict[str, Any]:
    from jobs.ray_runtime import init_ray
    from medgraph.embed import make_embedder

    started = time.time()
    vocab = ensure_vocabulary(cfg)
    probe = make_embedder(cfg.embedding)
    writer = open_writer(cfg, vocab, probe.dim, cfg.embedding.sparse == "lexical")
    del probe
    files, input_failures = expand_inputs(inputs)
    # a JSON file parsed whole is counted under the parser's memory limit, not in the driver
    from jobs.stages import parser_sandbox

    planner = parser_sandbox(cfg.parse)
    try:
        shards = plan_shards(files, cfg.pipeline.records_per_shard, planner, cfg.parse.timeout_s)
    finally:
        if planner is not None:
            planner.close()
    pooled = writer_pool(cfg)
    writer.graph.start_run(run_id, {"inputs": [str(i) for i in inputs], "files": len(files), "shards": len(shards),
                                    "writers": "pool" if pooled else "driver"})
    progress = Progress(writer.graph, run_id)
    writer.record_failures(run_id, input_failures)
    progress.add_failures(input_failures)
    status = "failed"
    try:
        if shards:
            init_ray(cfg.ray)
            ds = build_dataset(cfg, shards, writer.graph.document_hashes(complete_only=True))
            if pooled:
                consume_summaries(write_dataset(cfg, ds, run_id), progress)
            else:
                consume(ds, writer, run_id, cfg.pipeline.write.batch_size, progress)
        status = "succeeded"
    finally:
        progress.tick(force=True)
        counts = {**writer.graph.counts(), "vectors": writer.vectors.count()}
        summary = _summary(run_id, started, files, progress, counts, status)
        writer.graph.finish_run(run_id, status, summary)
        writer.graph.close()
        writer.vectors.close()
    if cfg.frontier.enabled and status == "succeeded":
        summary["frontier"] = _frontier(cfg, run_id)
    return summary


def _frontier(cfg: MedGraphConfig, run_id: str) -> dict[str, Any]:
    """One round of frontier expansion (jobs/frontier.py); its failure is reported, the build stands."""
    from jobs.frontier import expand

    try:
        return expand(cfg, run_id, build_corpus)
    except Exception as exc:  # noqa: BLE001 - the build itself succeeded and is recorded
        log.exception("frontier expansion after run %s failed", run_id)
        return {"error": f"{type(exc).__name__}: {exc}"}


def _summary(run_id: str, started: float, files: list[Path], progress: Progress,
             counts: dict[str, int], status: str) -> dict[str, Any]:
    elapsed = time.time() - started
    return {
        "run_id": run_id,
        "status": status,
        "files": len(files),
        "documents_written": len(set(progress.stats.documents_completed)),
        "documents_skipped": progress.skipped,
        "chunks_written": progress.stats.chunks,
        "mentions_written": progress.stats.mentions,
        "failures": [{"source": f.source, "stage": f.stage, "reason": f.reason} for f in progress.failures.values()],
        "store": counts,
        "seconds": round(elapsed, 2),
        "chunks_per_s": round(progress.stats.chunks / elapsed, 2) if elapsed else 0.0,
    }


def summary_text(summary: dict[str, Any]) -> str:
    store = summary["store"]
    lines = [
        f"run {summary['run_id']}: {summary['status']} in {summary['seconds']} s",
        f"  this run: {summary['documents_written']} documents, {summary['chunks_written']} chunks, "
        f"{summary['mentions_written']} mentions written; {summary['documents_skipped']} documents unchanged",
        f"  store:    {store['documents']} documents, {store['chunks']} chunks, "
        f"{store['mentions']} mentions, {store['entities']} entities, {store['vectors']} vectors",
        f"  failures: {len(summary['failures'])}",
    ]
    lines += [f"    {f['source']} [{f['stage']}]: {f['reason']}" for f in summary["failures"]]
    front = summary.get("frontier")
    if front is not None:
        lines.append(f"  frontier: {front['error']}" if "error" in front else
                     f"  frontier: {len(front['entities'])} entities searched, {front['fetched']} new records, "
                     f"{front.get('documents_written', 0)} documents written (run {front.get('run_id', '-')}), "
                     f"{len(front['errors'])} search errors")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = job_parser("jobs.build_corpus", __doc__)
    ap.add_argument("--input", nargs="+", required=True, help="files, directories, globs or s3:// gs:// URIs")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start_logging()
    summary = build_corpus(load_config(args.config, args.overrides), args.input, args.run_id)
    return finish(summary, args, summary_text)


if __name__ == "__main__":
    sys.exit(main())
