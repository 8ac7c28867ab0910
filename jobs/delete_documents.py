"""Delete documents from both stores: their chunks, mentions, vector points, and the entities
left with no mention.

    python -m jobs.delete_documents --config configs/local.yaml DOC_ID [DOC_ID ...]
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from medgraph.config import load_config
from medgraph.index.writer import CorpusWriter
from medgraph.stores import make_graph_store, make_vector_store


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m jobs.delete_documents", description=__doc__.split("\n")[0])
    ap.add_argument("doc_ids", nargs="+")
    ap.add_argument("--config", default="configs/local.yaml")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="A.B=C")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    cfg = load_config(args.config, args.overrides)
    graph = make_graph_store(cfg.stores.graph)
    vectors = make_vector_store(cfg.stores.vector)
    try:
        result = CorpusWriter(graph, vectors, lambda _id: None).delete_documents(args.doc_ids)
        counts = graph.counts()
    finally:
        graph.close()
        vectors.close()
    print(json.dumps({"documents_deleted": result.documents, "chunks_deleted": len(result.chunk_ids),
                      "entities_removed": result.entities_removed, "store": counts}, indent=2))
    return 0 if result.documents == len(set(args.doc_ids)) else 1


if __name__ == "__main__":
    sys.exit(main())
