"""Synthetic QA job: questions in every language, with their gold passage, from a built store.

    python -m jobs.synthesise --config configs/local.yaml --out data/synthetic [--languages en de zh] \
        [--max-items N] [--adversarial-share 0.15] [--test-share 0.5] [--seed 0] [--actors 2] \
        [--engine gemma] [--limit-chunks N] [--json]
    ray job submit --working-dir . -- python -m jobs.synthesise --config configs/cluster.yaml --out /data/synthetic

Run it after a corpus build (``jobs.build_corpus``); it only reads the stores. The driver reads the
entity–chunk incidence (how many chunks mention each entity) and the corpus's entities; the chunks
are turned into items on a Ray Data actor pool (``Synthesise``: each actor reads its chunks and their
mentions from the graph store, takes their entities from the driver's read, and runs
``medgraph.synthetic.factory.chunk_items``);
with ``--engine`` each actor also runs the model tier (``medgraph.synthetic.writer``) on that
configured engine, which writes the answerable items' questions (the templates' stand where its
reply is unusable); the driver adds the adversarial items (``adversarial_items``; the vocabulary supplies drugs the
corpus never mentions), de-duplicates, caps and splits them (``finalise``) and writes

- ``<out>/synthetic.dev.jsonl`` and ``<out>/synthetic.test.jsonl``: one question per line, in the
  answer benchmark's format (``python -m medgraph.eval answers --dev <out>/synthetic.dev.jsonl``);
- ``<out>/manifest.json``: the settings, the store's counts, the counts per split, language and kind.

Files are written whole or not at all (a temporary file renamed). A chunk that fails is recorded
in the summary's ``failures`` with its reason; the job goes on. Progress is logged every 5 s.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from jobs.cli import finish, job_parser, start_logging
from medgraph.config import MedGraphConfig, load_config
from medgraph.graph.cooccurrence import Connections
from medgraph.schemas import Entity
from medgraph.synthetic.factory import (
    ChunkFacts,
    SynthItem,
    SynthSettings,
    adversarial_items,
    chunk_items,
    finalise,
    summary,
    template_languages,
)

log = logging.getLogger("medgraph.synthesise")
STAGE = "synthesise"
WRITER_TOKENS = 96  # the model tier's reply: one question in DSPy's chat format


class Synthesise:
    """Ray Data stage: chunk IDs → pickled (items, facts) per chunk, or the chunk's error."""

    def __init__(self, cfg: MedGraphConfig, chunk_counts: dict[str, int], n_chunks: int, settings: SynthSettings,
                 entities: dict[str, Entity], engine: str | None = None) -> None:
        from medgraph.stores import make_graph_store

        self.graph = make_graph_store(cfg.stores.graph)
        self.chunk_counts, self.n_chunks, self.settings = chunk_counts, n_chunks, settings
        self.entities = entities  # the corpus's entities, as the driver read them
        self.writer = None
        if engine:  # the model tier: one engine per actor, built here (a GGUF loads in the actor's process)
            from medgraph.assemble import LocalEngines
            from medgraph.llm.dspy_bridge import chat_lm
            from medgraph.synthetic.writer import ModelQuestions

            self.writer = ModelQuestions(chat_lm(LocalEngines(cfg).chat_for(engine, WRITER_TOKENS)))

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        chunk_ids = [str(c) for c in batch["chunk_id"]]
        out, errors = [], []
        before = (self.writer.written, self.writer.rejected) if self.writer is not None else (0, 0)
        chunks = {c.chunk_id: c for c in self.graph.get_chunks(chunk_ids)}
        for chunk_id in chunk_ids:
            try:
                chunk = chunks.get(chunk_id)
                if chunk is None:
                    raise LookupError("chunk not in the graph store")
                mentions = self.graph.chunk_mentions(chunk_id)
                entities = {m.mesh_id: self.entities[m.mesh_id] for m in mentions if m.mesh_id in self.entities}
                result = chunk_items(chunk, mentions, entities, self.chunk_counts, self.n_chunks, self.settings,
                                     self.writer)
                out.append(pickle.dumps(result))
                errors.append("")
            except Exception as exc:  # noqa: BLE001 - one chunk's failure is recorded, the job goes on
                out.append(pickle.dumps(([], ChunkFacts(chunk_id))))
                errors.append(f"{type(exc).__name__}: {exc}")
        # the model tier's replies used and rejected in this batch (on its first row)
        after = (self.writer.written, self.writer.rejected) if self.writer is not None else (0, 0)
        written, rejected = np.zeros(len(chunk_ids), dtype=np.int64), np.zeros(len(chunk_ids), dtype=np.int64)
        if chunk_ids:
            written[0], rejected[0] = after[0] - before[0], after[1] - before[1]
        return {"chunk_id": np.array(chunk_ids, dtype=object), "result": np.array(out, dtype=object),
                "error": np.array(errors, dtype=object), "written": written, "rejected": rejected}


def _on_ray(cfg: MedGraphConfig, chunk_ids: list[str], n_chunks: int, chunk_counts: dict[str, int],
            entities: dict[str, Entity], settings: SynthSettings, actors: int,
            engine: str | None) -> tuple[list[SynthItem], list[ChunkFacts], list[dict[str, str]], dict[str, int]]:
    import ray.data

    from jobs.ray_runtime import init_ray

    init_ray(cfg.ray)
    ds = ray.data.from_items([{"chunk_id": c} for c in chunk_ids],
                             override_num_blocks=max(1, min(len(chunk_ids), 4 * actors)))
    ds = ds.map_batches(
        Synthesise, fn_constructor_kwargs={"cfg": cfg, "chunk_counts": chunk_counts, "n_chunks": n_chunks,
                                           "settings": settings, "entities": entities, "engine": engine},
        batch_size=64, batch_format="numpy", compute=ray.data.ActorPoolStrategy(min_size=1, max_size=actors),
        num_cpus=1)
    items: list[SynthItem] = []
    facts: list[ChunkFacts] = []
    failures: list[dict[str, str]] = []
    model = {"written": 0, "rejected": 0}
    done, last = 0, time.monotonic()
    for batch in ds.iter_batches(batch_size=256, batch_format="numpy"):
        model["written"] += int(batch["written"].sum())
        model["rejected"] += int(batch["rejected"].sum())
        for chunk_id, blob, error in zip(batch["chunk_id"], batch["result"], batch["error"], strict=True):
            chunk_items_, chunk_facts = pickle.loads(blob)
            items += chunk_items_
            facts.append(chunk_facts)
            if error:
                failures.append({"source": str(chunk_id), "stage": STAGE, "reason": str(error)})
        done += len(batch["chunk_id"])
        if time.monotonic() - last >= 5.0:
            last = time.monotonic()
            log.info("read %d / %d chunks: %d questions", done, len(chunk_ids), len(items))
    return items, facts, failures, model


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def synthesise(cfg: MedGraphConfig, out: Path, settings: SynthSettings, max_items: int | None = None,
               actors: int = 2, engine: str | None = None, limit_chunks: int | None = None) -> dict[str, Any]:
    """Run the whole job; returns its summary (also written into the manifest). ``engine``: a
    configured engine (``tiers.engines``) for the model tier; ``limit_chunks``: read only this many
    chunks (a sample, by ``settings.seed``)."""
    from medgraph.ontology.build import load_or_build
    from medgraph.stores import make_graph_store

    if engine is not None and engine not in cfg.tiers.engines:
        raise ValueError(f"engine {engine!r} is not configured; configured: {', '.join(sorted(cfg.tiers.engines))}")
    started = time.time()
    result: dict[str, Any] = {"status": "failed", "out": str(out), "failures": []}
    graph = make_graph_store(cfg.stores.graph)
    try:
        incidence, mesh_ids, chunk_ids = graph.incidence()
        if not chunk_ids:
            raise ValueError("the graph store holds no chunks: build the corpus first (python -m jobs.build_corpus)")
        connections = Connections(incidence, mesh_ids, chunk_ids)
        chunk_counts = connections.chunk_counts()
        entities = {m: e for m in mesh_ids if (e := graph.get_entity(m)) is not None}
        store_counts = graph.counts()
    finally:
        graph.close()
    order = list(chunk_ids)
    random.Random(settings.seed).shuffle(order)  # a capped set samples the whole corpus, not its first documents
    order = order[:limit_chunks] if limit_chunks is not None else order
    log.info("%d chunks, %d entities: synthesising on %d actor(s)%s", len(order), len(entities), actors,
             f", questions by engine {engine}" if engine else "")
    # an entity's share of chunks is its share of the corpus's, also when only a sample is read
    items, facts, failures, model = _on_ray(cfg, order, len(chunk_ids), chunk_counts, entities, settings, actors,
                                            engine)
    # Ray Data returns the chunks in no fixed order: sorted, the same store and settings give the same files
    items.sort(key=lambda i: (i.item_id, settings.languages.index(i.language)))
    model["questions"] = len(items)  # the answerable questions asked, before the cap and de-duplication
    facts.sort(key=lambda f: f.chunk_id)
    answerable_ids = list(dict.fromkeys(i.item_id for i in items))
    if max_items is not None and len(answerable_ids) > max_items:
        keep = set(answerable_ids[:max_items])
        items = [i for i in items if i.item_id in keep]
        answerable_ids = answerable_ids[:max_items]
    share = settings.adversarial_share
    wanted = int(share * len(answerable_ids) / (1 - share)) + 1 if share < 1 else len(answerable_ids)
    vocabulary = load_or_build(cfg.vocabulary)
    adversarial = adversarial_items(connections, entities, vocabulary.entities.values(), facts, wanted, settings)
    final = finalise(items, adversarial, settings)
    out.mkdir(parents=True, exist_ok=True)
    for split in ("dev", "test"):
        lines = [json.dumps(i.record(), ensure_ascii=False) for i in final if i.split == split]
        _write(out / f"synthetic.{split}.jsonl", "".join(f"{line}\n" for line in lines))
    result.update(status="succeeded", chunks=len(order), entities=len(entities), store=store_counts, engine=engine,
                  model_questions=model if engine else None,
                  settings=settings.__dict__ | {"languages": list(settings.languages)}, failures=failures,
                  **summary(final), seconds=round(time.time() - started, 2))
    _write(out / "manifest.json", json.dumps(result, indent=2, ensure_ascii=False))
    return result


def summary_text(result: dict[str, Any]) -> str:
    if result["status"] != "succeeded":
        return f"synthesise: {result['status']}"
    return (f"synthesise: {result['items']} items, {result['questions']} questions "
            f"(dev {result['dev']['questions']}, test {result['test']['questions']}; adversarial "
            f"{result['adversarial_share']:.0%}) from {result['chunks']} chunks in {result['seconds']} s "
            f"-> {result['out']}; {len(result['failures'])} failures")


def main(argv: list[str] | None = None) -> int:
    ap = job_parser("jobs.synthesise", __doc__, with_run=False)
    ap.add_argument("--out", required=True, type=Path, help="folder for synthetic.{dev,test}.jsonl and manifest.json")
    ap.add_argument("--languages", nargs="+", help="default: every language whose pack has question templates")
    ap.add_argument("--max-items", type=int, help="at most this many answerable items (each in every language; "
                    "a sample by item ID)")
    ap.add_argument("--adversarial-share", type=float, default=SynthSettings.adversarial_share)
    ap.add_argument("--test-share", type=float, default=SynthSettings.test_share)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--actors", type=int, default=2, help="Ray Data actors reading the chunks")
    ap.add_argument("--engine", help="model tier: a configured engine (tiers.engines) writes the questions")
    ap.add_argument("--limit-chunks", type=int, help="read only this many chunks (a seeded sample)")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = ap.parse_args(argv)
    for name in ("adversarial_share", "test_share"):
        if not 0.0 <= getattr(args, name) < 1.0:
            ap.error(f"--{name.replace('_', '-')} must be in [0, 1)")

    languages = tuple(args.languages or template_languages())
    unknown = [code for code in languages if code not in template_languages()]
    if unknown:
        ap.error(f"unknown languages {unknown}; with question templates: {', '.join(template_languages())}")
    start_logging()
    settings = SynthSettings(languages=languages, adversarial_share=args.adversarial_share,
                             test_share=args.test_share, seed=args.seed)
    try:
        result = synthesise(load_config(args.config, args.overrides), args.out, settings, args.max_items, args.actors,
                            args.engine, args.limit_chunks)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return finish(result, args, summary_text)


if __name__ == "__main__":
    sys.exit(main())
