"""In-process search index over a Qdrant local-mode collection (numpy dense matrix + scipy CSR).

Why: Qdrant's local mode (the embedded default) scores sparse queries in a Python loop over the
points and dense queries point by point; a hybrid query over ~4k chunks took 100–230 ms here. The
same exact scores from one matrix product take about a millisecond (``benchmarks/vector_search.py``).

Input: the collection's points (chunk_id payload, ``dense`` and ``sparse`` named vectors, the
``language`` payload), read once by a scroll. Output: the same ranked ``(point index, score)``
lists that Qdrant's exact search gives:
- dense: cosine = dot product of L2-normalised rows;
- sparse: dot product, with each query term multiplied by Qdrant's IDF
  ``ln(1 + (N - df + 0.5) / (df + 0.5))`` when the collection uses ``Modifier.IDF`` (N = points
  that have a sparse vector, df = those containing the term); only points with a positive score.

Freshness: the owning ``QdrantVectorStore`` bumps a generation counter on every write and the
index is rebuilt on the next read after one (a full scroll: cheap for the corpus sizes local mode
is meant for). The store calls it under its lock, so no read sees a half-built index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse as sps

from medgraph.embed.base import SparseVector

SCROLL_BATCH = 1024


@dataclass
class LocalVectorIndex:
    """Exact dense + sparse search over a snapshot of a collection."""

    chunk_ids: list[str]
    payloads: list[dict[str, Any]]
    languages: NDArray[np.str_]
    dense: NDArray[np.float32] | None  # (n, dim), rows L2-normalised; zero rows for points without one
    has_dense: NDArray[np.bool_]
    sparse: sps.csc_matrix  # (n, n_terms), column j = term terms[j]; a CSR copy serves row reads
    columns: dict[int, int]  # term index -> column
    idf: NDArray[np.float32] | None  # per column, when the collection applies IDF
    generation: int = 0
    _row: dict[str, int] = field(default_factory=dict)
    _rows: sps.csr_matrix | None = None
    _terms: NDArray[np.int64] | None = None

    def __post_init__(self) -> None:
        self._row = {cid: i for i, cid in enumerate(self.chunk_ids)}
        self._rows = self.sparse.tocsr()
        self._terms = np.fromiter(self.columns.keys(), dtype=np.int64, count=len(self.columns))

    def __len__(self) -> int:
        return len(self.chunk_ids)

    # --- building -------------------------------------------------------------------------

    @classmethod
    def from_collection(
        cls, client: Any, collection: str, dense_name: str, sparse_name: str, idf: bool, generation: int = 0
    ) -> LocalVectorIndex:
        """Scroll every point of ``collection`` into an index."""
        chunk_ids: list[str] = []
        payloads: list[dict[str, Any]] = []
        dense_rows: list[Any] = []
        sparse_rows: list[Any] = []
        offset = None
        while True:
            points, offset = client.scroll(
                collection, limit=SCROLL_BATCH, offset=offset, with_payload=True, with_vectors=True
            )
            for p in points:
                vectors = p.vector if isinstance(p.vector, dict) else {}
                payload = dict(p.payload or {})
                chunk_ids.append(str(payload.get("chunk_id", "")))
                payloads.append(payload)
                dense_rows.append(vectors.get(dense_name))
                sparse_rows.append(vectors.get(sparse_name))
            if offset is None:
                break
        return cls.from_rows(chunk_ids, payloads, dense_rows, sparse_rows, idf, generation)

    @classmethod
    def from_rows(
        cls,
        chunk_ids: list[str],
        payloads: list[dict[str, Any]],
        dense_rows: list[Any],
        sparse_rows: list[Any],
        idf: bool,
        generation: int = 0,
    ) -> LocalVectorIndex:
        """An index over rows: dense lists/arrays (or None), sparse objects with ``indices``/``values`` (or None)."""
        n = len(chunk_ids)
        dim = next((len(v) for v in dense_rows if v is not None), 0)
        has_dense = np.array([v is not None for v in dense_rows], dtype=bool)
        dense = None
        if dim:
            dense = np.zeros((n, dim), dtype=np.float32)
            for i, v in enumerate(dense_rows):
                if v is not None:
                    dense[i] = v
            norms = np.linalg.norm(dense, axis=1, keepdims=True)
            dense /= np.where(norms > 0, norms, 1.0)
        columns: dict[int, int] = {}
        rows, cols, vals = [], [], []
        for i, sv in enumerate(sparse_rows):
            if sv is None:
                continue
            for term, value in zip(sv.indices, sv.values, strict=True):
                rows.append(i)
                cols.append(columns.setdefault(int(term), len(columns)))
                vals.append(value)
        matrix = sps.csc_matrix(
            (np.asarray(vals, dtype=np.float32), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
            shape=(n, len(columns)),
        )
        matrix.sum_duplicates()
        weights = None
        if idf:
            with_sparse = sum(1 for sv in sparse_rows if sv is not None and len(sv.indices))
            df = np.diff(matrix.indptr).astype(np.float64)
            weights = np.log((with_sparse - df + 0.5) / (df + 0.5) + 1.0).astype(np.float32)
        languages = np.array([str(p.get("language") or "") for p in payloads], dtype=np.str_)
        return cls(chunk_ids, payloads, languages, dense, has_dense, matrix, columns, weights, generation)

    # --- searching ------------------------------------------------------------------------

    def _mask(self, language: str | list[str] | tuple[str, ...] | None) -> NDArray[np.bool_] | None:
        if language is None:
            return None
        wanted = [language] if isinstance(language, str) else list(language)
        return np.isin(self.languages, wanted)

    @staticmethod
    def _top(scores: NDArray[np.floating[Any]], limit: int, keep: NDArray[np.bool_]) -> list[tuple[int, float]]:
        candidates = np.flatnonzero(keep)
        if limit <= 0 or not len(candidates):
            return []
        if len(candidates) > limit:
            part = np.argpartition(-scores[candidates], limit - 1)[:limit]
            candidates = candidates[part]
        # best first; ties by row order (stable), as an exact scan would list them
        order = np.lexsort((candidates, -scores[candidates]))
        return [(int(candidates[i]), float(scores[candidates[i]])) for i in order]

    def search_dense(self, vector: Any, limit: int, language: Any = None) -> list[tuple[int, float]]:
        if self.dense is None or not len(self):
            return []
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        norm = float(np.linalg.norm(q))
        scores = np.asarray(self.dense @ (q / norm if norm > 0 else q), dtype=np.float32)
        keep = self.has_dense.copy()
        mask = self._mask(language)
        if mask is not None:
            keep &= mask
        return self._top(scores, limit, keep)

    def search_sparse(self, vector: SparseVector, limit: int, language: Any = None) -> list[tuple[int, float]]:
        cols, weights = [], []
        for term, value in zip(vector.indices.tolist(), vector.values.tolist(), strict=True):
            col = self.columns.get(int(term))
            if col is not None:
                cols.append(col)
                weights.append(value * (float(self.idf[col]) if self.idf is not None else 1.0))
        if not cols or not len(self):
            return []
        scores = np.asarray(self.sparse[:, cols] @ np.asarray(weights, dtype=np.float32)).reshape(-1)
        keep = scores > 0
        mask = self._mask(language)
        if mask is not None:
            keep &= mask
        return self._top(scores, limit, keep)

    # --- reading stored vectors -----------------------------------------------------------

    def dense_of(self, chunk_ids: list[str]) -> dict[str, NDArray[np.float32]]:
        out = {}
        for cid in chunk_ids:
            row = self._row.get(cid)
            if row is not None and self.dense is not None and self.has_dense[row]:
                out[cid] = self.dense[row].copy()
        return out

    def sparse_of(self, chunk_ids: list[str]) -> dict[str, SparseVector]:
        """The stored sparse vectors (raw weights, before IDF) of the given chunks."""
        rows = [(cid, self._row[cid]) for cid in chunk_ids if cid in self._row]
        if not rows:
            return {}
        assert self._rows is not None and self._terms is not None
        out = {}
        for cid, row in rows:
            start, stop = self._rows.indptr[row], self._rows.indptr[row + 1]
            if stop > start:
                cols = self._rows.indices[start:stop]
                out[cid] = SparseVector.from_arrays(self._terms[cols], self._rows.data[start:stop])
        return out
