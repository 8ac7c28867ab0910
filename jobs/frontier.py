"""Frontier expansion: after a corpus build, literature for the entities the corpus barely covers.

Optional (``frontier.enabled``, off by default). The entities mentioned in fewer than
``frontier.min_chunks`` chunks are the frontier of the graph: a question about one of them has
little to stand on, and no second passage for a hop to reach. For the ``frontier.max_entities``
least covered (fewest chunks, then MeSH ID: the same run picks the same ones), each is searched in
the configured literature sources (``gaps.sources``: PubMed E-utilities, a local folder) by its
English MeSH name and synonyms, ``frontier.per_entity`` records each, within ``frontier.timeout_s``
per search. Records already complete in the store are dropped; the rest are written to
``frontier.path/<run_id>.jsonl`` (kept: what was fetched, and why, can be read back) and built by
the same corpus job, as run ``<run_id>-frontier`` — chunked, linked, embedded and written like
every other document, each failing alone. The expansion is one round: the run it builds does not
expand again. A source that fails is recorded and the others go on.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from medgraph.config import MedGraphConfig

log = logging.getLogger(__name__)


def under_covered(pairs: Any, min_chunks: int, limit: int) -> list[tuple[str, int]]:
    """The ``limit`` entities mentioned in the fewest chunks, fewer than ``min_chunks``: (MeSH ID, chunks)."""
    chunks = Counter(mesh_id for mesh_id, _, _ in pairs)
    low = sorted((n, mesh_id) for mesh_id, n in chunks.items() if n < min_chunks)
    return [(mesh_id, n) for n, mesh_id in low[:limit]]


def expand(cfg: MedGraphConfig, run_id: str, build: Callable[..., dict[str, Any]],
           sources: list[Any] | None = None) -> dict[str, Any]:
    """One round of frontier expansion after build ``run_id``; its report. ``build``: the corpus
    job's ``build_corpus(cfg, inputs, run_id)``, which builds the fetched records as a run of their own."""
    from medgraph.literature import make_sources
    from medgraph.literature.gaps import Gap, search_terms
    from medgraph.ontology.build import load_or_build
    from medgraph.stores import make_graph_store

    f = cfg.frontier
    sources = make_sources(cfg) if sources is None else sources
    if not sources:
        raise ValueError("frontier.enabled needs a literature source in gaps.sources")
    graph = make_graph_store(cfg.stores.graph)
    try:
        entities = under_covered(graph.entity_chunk_pairs(), f.min_chunks, f.max_entities)
        known = set(graph.document_hashes(complete_only=True))
    finally:
        graph.close()
    vocab = load_or_build(cfg.vocabulary)
    fetched: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    for mesh_id, _ in entities:
        entity = vocab.get(mesh_id)
        terms = search_terms(Gap("weak", (mesh_id,), (entity.name if entity else mesh_id,), "frontier"), vocab.get)
        for source in sources:
            try:
                records = source.search(terms, f.per_entity, f.timeout_s)
            except Exception as exc:  # noqa: BLE001 - one source or entity failing does not stop the round
                errors.append(f"{source.name} {mesh_id}: {type(exc).__name__}: {exc}")
                continue
            for r in records:
                if r.doc_id not in known and r.doc_id not in fetched:
                    fetched[r.doc_id] = {"doc_id": r.doc_id, "title": r.title, "text": r.text, "language": r.language,
                                         "source_id": f"PMID:{r.pmid}" if r.pmid else r.url or r.doc_id,
                                         "metadata": {"frontier_entity": mesh_id, "source": r.source, "url": r.url}}
            if records:
                break  # the first source that has literature for it (as gap completion)
    report: dict[str, Any] = {"entities": [m for m, _ in entities], "fetched": len(fetched), "errors": errors}
    log.info("frontier of run %s: %d entities under %d chunks, %d new records, %d errors", run_id,
             len(entities), f.min_chunks, len(fetched), len(errors))
    if not fetched:
        return report
    out = Path(f.path) / f"{run_id}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in fetched.values()), encoding="utf-8")
    once = cfg.model_copy(update={"frontier": f.model_copy(update={"enabled": False})})
    built = build(once, [str(out)], run_id=f"{run_id}-frontier")
    report.update({"file": str(out), "run_id": built["run_id"], "status": built["status"],
                   "documents_written": built["documents_written"], "chunks_written": built["chunks_written"],
                   "failures": built["failures"]})
    return report
