"""Delete documents from both stores: their chunks, mentions, vector points, and the entities
left with no mention.

    python -m jobs.delete_documents --config configs/local.yaml DOC_ID [DOC_ID ...]
"""

from __future__ import annotations

import json
import sys

from jobs.cli import job_parser, start_logging
from medgraph.config import load_config
from medgraph.index.writer import CorpusWriter
from medgraph.stores import make_graph_store, make_vector_store


def main(argv: list[str] | None = None) -> int:
    ap = job_parser("jobs.delete_documents", __doc__, with_run=False)
    ap.add_argument("doc_ids", nargs="+")
    args = ap.parse_args(argv)
    start_logging("%(levelname)s %(name)s: %(message)s")
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
