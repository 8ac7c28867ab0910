"""Community summaries in their own vector collection, and the ``community`` retrieval path.

Input: summarised ``Community`` records and the chunk collection's store and embedder. Output:
points in ``<collection><communities.collection_suffix>`` (one per community, id from the
community ID, text = title + summary, dense and sparse vectors from the chunk embedder so the
question's vectors search both), and, at query time, chunk ``Candidate`` lists.

``CommunitySearch.candidates``: the question's communities, ranked by reciprocal-rank fusion of
(a) a hybrid search over the summaries and (b) membership of the question's MeSH entities
(communities holding more of them first, coarser first); the chunks each of the best
communities' summaries cite become the candidates, the best community's first. With
``communities.search.when: overview`` the path answers only overview and cross-corpus questions
(``medgraph.route.rules.wants_overview``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from medgraph.config.models import CommunitiesConfig
from medgraph.embed.base import Embedder, SparseVector
from medgraph.graph.communities import Community
from medgraph.retrieve.types import Candidate, QueryAnalysis
from medgraph.schemas import Chunk

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)
PATH = "community"
_RRF_K = 10


def summary_store(vectors: Any, cfg: CommunitiesConfig) -> Any:
    """The summaries' store: the chunk store's client, collection ``<collection><suffix>``."""
    return vectors.sibling(f"{vectors.collection}{cfg.collection_suffix}")


def summary_text(c: Community) -> str:
    return f"{c.title}. {c.summary}" if c.title else c.summary


def summary_record(c: Community) -> Chunk:
    """A community as the vector store's record (its ``chunk_id`` is the community ID)."""
    return Chunk(chunk_id=c.community_id, doc_id=f"community:L{c.level}", index=c.level, text=summary_text(c),
                 section_path=[c.title], parent_id=c.parent_id or "", parent_text="", token_count=0,
                 language="", title=c.title)


def index_summaries(store: Any, embedder: Embedder, communities: list[Community], removed: list[str],
                    batch_size: int = 64) -> int:
    """Embed and upsert the summaries of ``communities``; delete the points of ``removed`` IDs."""
    store.ensure_collection(embedder.dim, embedder.sparse_idf)
    store.delete_chunks(removed)
    for start in range(0, len(communities), batch_size):
        batch = communities[start:start + batch_size]
        texts = [summary_text(c) for c in batch]
        dense = embedder.embed_dense(texts) if embedder.has_dense else None
        sparse = embedder.embed_sparse(texts) if embedder.has_sparse else None
        store.upsert([summary_record(c) for c in batch], dense, sparse)
    return len(communities)


class CommunitySearch:
    """The ``community`` retrieval path; see the module docstring."""

    def __init__(self, cfg: CommunitiesConfig, graph: Any, summaries: Any | None) -> None:
        self.cfg, self.graph, self.summaries = cfg, graph, summaries

    def wanted(self, analysis: QueryAnalysis) -> bool:
        from medgraph.route.rules import wants_overview

        return self.cfg.search.when == "always" or wants_overview(analysis)

    def by_summary(self, dense: Any, sparse: SparseVector | None, limit: int) -> list[str]:
        store = self.summaries
        if store is None or not store.client.collection_exists(store.collection):
            return []
        return [h.chunk_id for h in store.hybrid_search(dense, sparse, limit)]

    def by_membership(self, analysis: QueryAnalysis) -> list[str]:
        found = self.graph.entity_communities(sorted(analysis.seeds))
        count: dict[str, int] = {}
        first: dict[str, int] = {}  # listing order: coarsest level first
        for ids in found.values():
            for i, cid in enumerate(ids):
                count[cid] = count.get(cid, 0) + 1
                first[cid] = min(first.get(cid, i), i)
        return sorted(count, key=lambda c: (-count[c], first[c], c))

    def rank(self, analysis: QueryAnalysis, dense: Any, sparse: SparseVector | None) -> list[tuple[str, float]]:
        """(community ID, fused score) best first, at most ``search.communities``."""
        n = self.cfg.search.communities
        fused: dict[str, float] = {}
        for ranked in (self.by_summary(dense, sparse, 4 * n), self.by_membership(analysis)):
            for rank, cid in enumerate(ranked, 1):
                fused[cid] = fused.get(cid, 0.0) + 1.0 / (_RRF_K + rank)
        return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:n]

    def candidates(self, analysis: QueryAnalysis, dense: np.ndarray | None, sparse: SparseVector | None,
                   limit: int) -> list[Candidate]:
        if not self.wanted(analysis):
            return []
        ranked = self.rank(analysis, dense, sparse)
        stored = {c.community_id: c for c in self.graph.communities(ids=[cid for cid, _ in ranked])}
        lists = [(score, stored[cid].chunk_ids[: self.cfg.search.chunks_per_community])
                 for cid, score in ranked if cid in stored]
        out: list[Candidate] = []
        seen: set[str] = set()
        for score, chunk_ids in lists:
            for chunk_id in chunk_ids:
                if chunk_id not in seen:
                    seen.add(chunk_id)
                    out.append(Candidate(chunk_id, score, {PATH: score}))
        return out[:limit]
