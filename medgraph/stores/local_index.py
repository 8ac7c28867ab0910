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

Freshness: the owning ``QdrantVectorStore`` hands every write it makes to the index as well
(``upsert_rows``, ``delete_chunks``, ``delete_docs``), so the index follows the collection without
reading it again: appended rows go to a small row-major tail beside the column-major base, deleted
rows are masked, document frequencies (for IDF) are kept per term, and the whole is compacted in
memory once the tail or the deleted rows grow past a share of the base. A full scroll happens only
when the store has no index yet or a write failed half-way (the store then bumps its generation
past the index's). On a 100k-point collection a search after a 10-point write took 15.7 ms
instead of 24.3 s (``benchmarks/vector_search.py --rounds``, docs/scale.md). The store calls every method under its lock, so no read
sees a half-applied write.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse as sps

from medgraph.embed.base import SparseVector
from medgraph.gcpause import gc_paused

# qdrant-client's local mode sorts every point ID on each scroll call and walks to the offset, so
# paging through N points costs O(N² / batch): the whole collection is asked for in one call (a page
# at least this large): 160k points took 83 s, 22 s in one page, 13 s with the collector paused
SCROLL_BATCH = 1024
TAIL_SHARE = 8  # compact when the tail holds more than 1/8 of the base rows (and > MIN_COMPACT)
DEAD_SHARE = 4  # ... or a quarter of the rows are deleted
MIN_COMPACT = 256


@dataclass(frozen=True, slots=True)
class _Row:
    """One point's sparse vector as the index stores it (term indices, raw weights)."""

    indices: NDArray[np.int64]
    values: NDArray[np.float32]


def _normalise(rows: NDArray[np.float32]) -> None:
    """L2-normalise ``rows`` in place (zero rows stay zero)."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    rows /= np.where(norms > 0, norms, 1.0)


@dataclass
class _Tail:
    """Rows appended since the last compaction (rows ``n_base ..`` of the index): per row its term
    columns and raw weights."""

    cols: list[NDArray[np.int64]] = field(default_factory=list)
    values: list[NDArray[np.float32]] = field(default_factory=list)
    _matrix: sps.csr_matrix | None = None  # (len(self), n_terms), built on the first search after a change

    def __len__(self) -> int:
        return len(self.cols)

    def append(self, cols: NDArray[np.int64], values: NDArray[np.float32]) -> None:
        self.cols.append(cols)
        self.values.append(values)
        self._matrix = None

    def matrix(self, n_terms: int) -> sps.csr_matrix:
        if self._matrix is None or self._matrix.shape[1] != n_terms:
            lens = [len(c) for c in self.cols]
            indptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
            indices = np.concatenate(self.cols) if self.cols else np.zeros(0, dtype=np.int64)
            data = np.concatenate(self.values) if self.values else np.zeros(0, dtype=np.float32)
            self._matrix = sps.csr_matrix((data, indices, indptr), shape=(len(self), n_terms))
        return self._matrix


class LocalVectorIndex:
    """Exact dense + sparse search over a collection's points, updated in place by its writes.

    Rows are numbered in insertion order; a row replaced or deleted stays in the arrays, masked by
    ``alive``, until the next compaction renumbers the rows.
    """

    def __init__(self, chunk_ids: list[str], payloads: list[dict[str, Any]], dense: NDArray[np.float32] | None,
                 has_dense: NDArray[np.bool_], sparse: sps.csc_matrix, columns: dict[int, int], idf: bool,
                 generation: int = 0) -> None:
        n = len(chunk_ids)
        self.chunk_ids = chunk_ids
        self.payloads = payloads
        self.languages = np.array([str(p.get("language") or "") for p in payloads], dtype=np.str_)
        self.dense = dense  # (capacity, dim), rows L2-normalised; zero rows for points without one
        self.has_dense = has_dense
        self.alive = np.ones(n, dtype=bool)
        self.n_rows = n
        self.base = sparse  # (n_base, base columns), column j = term terms[j]
        self._base_rows = sparse.tocsr()  # row reads
        self.n_base = n
        self.columns = columns  # term index -> column
        self._terms: list[int] = [0] * len(columns)
        for term, col in columns.items():
            self._terms[col] = term
        self.idf = idf
        has_terms = np.diff(self._base_rows.indptr) > 0
        self.df = np.diff(sparse.indptr).astype(np.int64)  # per column: live rows holding the term
        self.with_sparse = int(has_terms.sum())  # live rows with at least one term
        self.generation = generation
        self.tail = _Tail()
        self._row = {cid: i for i, cid in enumerate(chunk_ids)}

    def __len__(self) -> int:
        return len(self._row)

    # --- building -------------------------------------------------------------------------

    @classmethod
    def from_collection(
        cls, client: Any, collection: str, dense_name: str, sparse_name: str, idf: bool, generation: int = 0
    ) -> LocalVectorIndex:
        """Scroll every point of ``collection`` into an index (in one page: see ``SCROLL_BATCH``)."""
        chunk_ids: list[str] = []
        payloads: list[dict[str, Any]] = []
        dense_rows: list[Any] = []
        sparse_rows: list[Any] = []
        offset = None
        page = max(SCROLL_BATCH, client.count(collection, exact=True).count)
        with gc_paused():  # a record object per point: see medgraph.gcpause
            while True:  # one page unless points arrive meanwhile
                points, offset = client.scroll(
                    collection, limit=page, offset=offset, with_payload=True, with_vectors=True
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
                del points
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
            _normalise(dense)
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
        return cls(list(chunk_ids), [dict(p) for p in payloads], dense, has_dense, matrix, columns, idf, generation)

    # --- writes ---------------------------------------------------------------------------

    def upsert_rows(self, chunk_ids: list[str], payloads: list[dict[str, Any]], dense_rows: list[Any],
                    sparse_rows: list[Any]) -> None:
        """Points written to the collection: new ones appended, existing ones replaced."""
        self.delete_chunks(chunk_ids)
        dim = next((len(v) for v in dense_rows if v is not None), 0)
        self._grow(self.n_rows + len(chunk_ids), dim)
        self._add_columns(int(t) for sv in sparse_rows if sv is not None for t in sv.indices)
        for cid, payload, dv, sv in zip(chunk_ids, payloads, dense_rows, sparse_rows, strict=True):
            row = self.n_rows
            self.n_rows += 1
            self._row[cid] = row
            self.chunk_ids.append(cid)
            self.payloads.append(dict(payload))
            self.alive[row] = True
            self.has_dense[row] = dv is not None
            if dv is not None and self.dense is not None:
                self.dense[row] = dv
                _normalise(self.dense[row : row + 1])
            by_col: dict[int, float] = {}
            if sv is not None:
                for term, value in zip(sv.indices, sv.values, strict=True):
                    col = self.columns[int(term)]
                    by_col[col] = by_col.get(col, 0.0) + float(value)
            cols = np.fromiter(sorted(by_col), dtype=np.int64, count=len(by_col))
            self.tail.append(cols, np.asarray([by_col[c] for c in cols.tolist()], dtype=np.float32))
            self._count(cols, +1)
        self.languages = np.concatenate([self.languages, np.array(
            [str(p.get("language") or "") for p in payloads], dtype=np.str_)]) if payloads else self.languages
        self._maybe_compact()

    def _add_columns(self, terms: Iterable[int]) -> None:
        """Columns for terms the index has not seen (document frequency 0)."""
        for term in terms:
            if term not in self.columns:
                self.columns[term] = len(self._terms)
                self._terms.append(term)
        if len(self._terms) > len(self.df):
            self.df = np.concatenate([self.df, np.zeros(len(self._terms) - len(self.df), dtype=np.int64)])

    def delete_chunks(self, chunk_ids: list[str]) -> None:
        """Points deleted from the collection by chunk ID (unknown IDs are ignored)."""
        for cid in chunk_ids:
            row = self._row.pop(cid, None)
            if row is not None:
                self.alive[row] = False
                self._count(self._row_entries(row)[0], -1)
        self._maybe_compact()

    def delete_docs(self, doc_ids: list[str]) -> None:
        """Points deleted from the collection by their payload ``doc_id``."""
        wanted = set(doc_ids)
        self.delete_chunks([cid for cid, row in self._row.items() if self.payloads[row].get("doc_id") in wanted])

    def _count(self, cols: NDArray[np.int64], sign: int) -> None:
        if len(cols):
            self.df[cols] += sign
            self.with_sparse += sign

    def _row_entries(self, row: int) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """A row's term columns and raw weights, from the base or the tail."""
        if row < self.n_base:
            start, stop = self._base_rows.indptr[row], self._base_rows.indptr[row + 1]
            return (np.asarray(self._base_rows.indices[start:stop], dtype=np.int64),
                    np.asarray(self._base_rows.data[start:stop], dtype=np.float32))
        return self.tail.cols[row - self.n_base], self.tail.values[row - self.n_base]

    def _grow(self, rows: int, dim: int) -> None:
        """Room for ``rows`` rows (capacity doubles) and a dense matrix once a dense vector arrives."""
        capacity = len(self.alive)
        if rows > capacity:
            capacity = max(rows, 2 * capacity, 16)
            self.alive = np.concatenate([self.alive, np.zeros(capacity - len(self.alive), dtype=bool)])
            self.has_dense = np.concatenate([self.has_dense, np.zeros(capacity - len(self.has_dense), dtype=bool)])
            if self.dense is not None:
                grown = np.zeros((capacity, self.dense.shape[1]), dtype=np.float32)
                grown[: self.n_rows] = self.dense[: self.n_rows]
                self.dense = grown
        if self.dense is None and dim:
            self.dense = np.zeros((len(self.alive), dim), dtype=np.float32)

    def _maybe_compact(self) -> None:
        tail, dead = len(self.tail), self.n_rows - len(self._row)
        if tail > max(MIN_COMPACT, self.n_base // TAIL_SHARE) or dead > max(MIN_COMPACT, self.n_rows // DEAD_SHARE):
            self._compact()

    def _compact(self) -> None:
        """Rebuild the base from the live rows in memory (no read from the collection)."""
        rows = sorted(self._row.values())
        dense_rows = [self.dense[r] if self.dense is not None and self.has_dense[r] else None for r in rows]
        terms = np.asarray(self._terms, dtype=np.int64)
        sparse_rows = [_Row(terms[cols], values) for cols, values in map(self._row_entries, rows)]
        fresh = LocalVectorIndex.from_rows([self.chunk_ids[r] for r in rows], [self.payloads[r] for r in rows],
                                           dense_rows, sparse_rows, self.idf, self.generation)
        self.__dict__.update(fresh.__dict__)

    def language_counts(self, languages: Sequence[str]) -> dict[str, int]:
        """How many live points each of ``languages`` has."""
        live = self.languages[self.alive[: self.n_rows]]
        return {language: int(np.count_nonzero(live == language)) for language in languages}

    # --- searching ------------------------------------------------------------------------

    def _keep(self, base: NDArray[np.bool_], language: str | list[str] | tuple[str, ...] | None) -> NDArray[np.bool_]:
        keep = base & self.alive[: self.n_rows]
        if language is not None:
            wanted = [language] if isinstance(language, str) else list(language)
            keep &= np.isin(self.languages, wanted)
        return keep

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
        scores = np.asarray(self.dense[: self.n_rows] @ (q / norm if norm > 0 else q), dtype=np.float32)
        return self._top(scores, limit, self._keep(self.has_dense[: self.n_rows], language))

    def search_sparse(self, vector: SparseVector, limit: int, language: Any = None) -> list[tuple[int, float]]:
        cols, weights = [], []
        for term, value in zip(vector.indices.tolist(), vector.values.tolist(), strict=True):
            col = self.columns.get(int(term))
            if col is not None:
                cols.append(col)
                weights.append(value * self._idf(col))
        if not cols or not len(self):
            return []
        w = np.asarray(weights, dtype=np.float32)
        in_base = np.asarray(cols) < self.base.shape[1]
        scores = np.zeros(self.n_rows, dtype=np.float32)
        if in_base.any():
            base_cols = np.asarray(cols)[in_base]
            scores[: self.n_base] = np.asarray(self.base[:, base_cols] @ w[in_base]).reshape(-1)
        if len(self.tail):
            query = np.zeros(len(self._terms), dtype=np.float32)
            np.add.at(query, np.asarray(cols), w)
            scores[self.n_base :] = self.tail.matrix(len(self._terms)) @ query
        return self._top(scores, limit, self._keep(scores > 0, language))

    def _idf(self, col: int) -> float:
        """Qdrant's IDF over the live points: ``ln(1 + (N - df + 0.5) / (df + 0.5))``; 1 without IDF."""
        if not self.idf:
            return 1.0
        df = float(self.df[col])
        return float(np.log((self.with_sparse - df + 0.5) / (df + 0.5) + 1.0))

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
        terms = np.asarray(self._terms, dtype=np.int64)
        out = {}
        for cid in chunk_ids:
            row = self._row.get(cid)
            if row is not None:
                cols, values = self._row_entries(row)
                if len(cols):
                    out[cid] = SparseVector.from_arrays(terms[cols], values)
        return out
