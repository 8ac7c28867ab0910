"""Personalized PageRank over the relation-free Entity—Chunk graph.

Input: the entity × chunk incidence matrix (mention counts), its entity IDs (MeSH) and chunk IDs,
usually from ``GraphStore.incidence()``; per query, seed MeSH IDs with weights (linking scores).
Output: ``PPRHit`` per chunk (stationary probability, best first) with the entities that explain
why the chunk was reached.

Model. The graph is undirected and bipartite; edge weight = mention count; the walk moves to a
neighbour with probability weight / weighted degree (column-stochastic ``P``). At each step it
follows an edge with probability ``d = damping`` (GDS ``dampingFactor``; HippoRAG 2 uses 0.5) and
otherwise restarts at the seeds (normalised seed weights ``s``): ``x = (1-d)·s + d·P·x``. Seeds
without edges cannot reach a chunk and are dropped before normalising.

Algorithm (chosen by measurement, ``benchmarks/ppr.py``). Chunks never restart, so the entity side
solves on its own, ``x_E = (1-d)·s + d²·M·x_E`` with ``M = P_EC·P_CE`` the two-step entity →
chunk → entity walk (precomputed, self-loops kept apart and resolved in closed form), and then
``x_C = d·P_CE·x_E``. A query runs Andersen–Chung–Lang forward push on ``M`` with the degree-
normalised threshold ``eps = tol``: every entity whose residual is ``≥ eps·deg`` is pushed, all at
once per round (vectorised gathers of contiguous rows and one scatter-add), so the work depends on
what the seeds reach, not on the graph size. Chunk scores are then one scatter from the entities
whose estimated mass per unit degree is ``≥ eps``. On the 1M-mention benchmark (2 shared CPUs)
this takes ~4 ms per query at ``tol = 1e-6`` (top-10 overlap with the exact result 0.95–0.98),
~200× less than igraph's PRPACK solve and ~40× less than a full power iteration to 1e-6; at 10M
mentions ~15 ms at the size-scaled default ``tol = 1e-7`` (overlap 0.97–0.99, index 0.8 GB). A push
that alternates over the bipartite graph itself (kept as the fallback when ``M`` could exceed
``max_pairs`` entries, bounded by the sum over chunks of (entities per chunk)²: ~39M at 10M
mentions of the benchmark's shape; the build peaks at ~24 bytes per pair) spends 2–3× longer in
thousands of tiny chunk rows; a power iteration restricted to the reachable part
degenerates into a full one, since one hop to a popular entity reaches almost every chunk.

Error bound. ``M·D`` is symmetric (``D`` = entity degrees), so ``deg(u)·G(v,u) = deg(v)·G(u,v)``
for ``G = (I − d²M)⁻¹``; when every residual is below ``eps·deg``, the estimate ``x̂ = p + r``
satisfies ``0 ≤ x(e) − x̂(e) ≤ eps·deg(e)/(1−d²)``. Hence every chunk score is a lower bound with
``0 ≤ π(c) − score(c) ≤ tol·deg(c)·d·(2−d²)/(1−d²)`` (≈ 1.17·tol·deg(c) at d = 0.5, where
``deg(c)`` is the chunk's mention count); the bipartite fallback guarantees ``tol·deg(c)``.

Chunk scores. When the push reaches few chunks (fewer than 1/16 of them, as at 10M mentions), they
are summed in a zeroed chunk-length vector kept per thread and read back at the reached chunks
only, and the top-k is chosen among those; allocating and scanning a fresh vector of millions of
chunks per query had cost more than the push itself.

The index is immutable after construction; a query allocates its own arrays (and uses its
thread's score vector), so concurrent queries from several threads are safe.

Serving the index next to a changing store: ``medgraph.retrieve.ppr.ProcessPPR``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

logger = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_MAX_PATH = 3
_EXACT_MAX_ITER = 1000
DEFAULT_MAX_PAIRS = 100_000_000  # two-step build: ~24 bytes per pair at its peak (2.4 GB), docs/scale.md
DEFAULT_TOL = 1e-6  # the tolerance up to 1M mentions; larger graphs get 1 / mentions (``tolerance_for``)
_SAMPLE_STRIDE = 16


@dataclass(frozen=True, slots=True)
class PPRHit:
    """One ranked chunk: its PPR score and the entities (strongest first) that reached it."""

    chunk_id: str
    score: float
    entity_path: list[str] = field(default_factory=list)


class IncidenceSource(Protocol):
    """Anything that hands out the entity × chunk incidence (the graph stores)."""

    def incidence(self) -> tuple[sp.csr_matrix, list[str], list[str]]: ...


Incidence = tuple[sp.csr_matrix, list[str], list[str]]


def incidence_from_pairs(pairs: Iterable[tuple[str, str, int]]) -> Incidence:
    """Entity × chunk matrix (mention counts), sorted entity IDs and sorted chunk IDs from
    ``(mesh_id, chunk_id, count)`` rows (``GraphStore.entity_chunk_pairs()``); repeated pairs add up."""
    ent_index: dict[str, int] = {}
    chunk_index: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    data: list[float] = []
    for mesh_id, chunk_id, n in pairs:
        rows.append(ent_index.setdefault(mesh_id, len(ent_index)))
        cols.append(chunk_index.setdefault(chunk_id, len(chunk_index)))
        data.append(float(n))
    return _sorted_incidence(ent_index, chunk_index, np.asarray(rows, dtype=np.int64),
                             np.asarray(cols, dtype=np.int64), np.asarray(data, dtype=np.float64))


def _sorted_incidence(ent_index: dict[str, int], chunk_index: dict[str, int], rows: IntArray,
                      cols: IntArray, data: FloatArray) -> Incidence:
    """CSR matrix with rows and columns reordered so that the entity and chunk IDs are sorted."""
    entities = sorted(ent_index)
    chunks = sorted(chunk_index)
    ent_rank = np.empty(len(entities), dtype=np.int64)
    ent_rank[[ent_index[e] for e in entities]] = np.arange(len(entities))
    chunk_rank = np.empty(len(chunks), dtype=np.int64)
    chunk_rank[[chunk_index[c] for c in chunks]] = np.arange(len(chunks))
    matrix = sp.csr_matrix((data, (ent_rank[rows], chunk_rank[cols])), shape=(len(entities), len(chunks)))
    matrix.sum_duplicates()
    return matrix, entities, chunks


class _Scratch(threading.local):
    """Per-thread working memory of a query: a chunk-length score vector kept zeroed between uses."""

    scores: FloatArray | None = None


@dataclass(frozen=True, slots=True)
class _Rows:
    """A sparse operator stored by *source* node: row ``u`` lists the targets of ``u``'s edges."""

    indptr: IntArray
    indices: IntArray
    values: FloatArray

    @classmethod
    def from_csr(cls, m: sp.csr_matrix) -> _Rows:
        m = sp.csr_matrix(m, dtype=np.float64)
        m.sort_indices()
        return cls(m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data)

    def gather(self, nodes: IntArray) -> tuple[IntArray, IntArray]:
        """Edge positions of the rows ``nodes`` (concatenated) and each row's edge count."""
        starts = self.indptr[nodes]
        lens = self.indptr[nodes + 1] - starts
        total = int(lens.sum())
        if len(nodes) == 1:
            return np.arange(starts[0], starts[0] + total, dtype=np.int64), lens
        shift = np.repeat(starts - (np.cumsum(lens) - lens), lens)
        return np.arange(total, dtype=np.int64) + shift, lens

    def spread(self, nodes: IntArray, mass: FloatArray) -> tuple[IntArray, FloatArray]:
        """Targets and amounts when each of ``nodes`` sends ``mass`` along its row."""
        pos, lens = self.gather(nodes)
        return self.indices[pos], self.values[pos] * np.repeat(mass, lens)


class PPRIndex:
    """Precomputed transition structure of the Entity—Chunk graph; ``query`` runs a local push."""

    def __init__(
        self,
        incidence: sp.spmatrix,
        entity_ids: list[str],
        chunk_ids: list[str],
        max_pairs: int = DEFAULT_MAX_PAIRS,
    ) -> None:
        if incidence.shape != (len(entity_ids), len(chunk_ids)):
            raise ValueError(f"incidence shape {incidence.shape} does not match the ID lists")
        b = sp.csr_matrix(incidence, dtype=np.float64)
        b.sum_duplicates()
        if b.nnz and float(b.data.min()) < 0:
            raise ValueError("mention counts must be non-negative")
        b.eliminate_zeros()
        self.entity_ids = list(entity_ids)
        self.chunk_ids = list(chunk_ids)
        self._entity_index = {e: i for i, e in enumerate(self.entity_ids)}
        self._scratch = _Scratch()
        self.ent_degree: FloatArray = np.asarray(b.sum(axis=1)).ravel()
        self.ent_chunks: IntArray = np.diff(b.indptr)  # chunks that mention each entity
        self.chunk_degree: FloatArray = np.asarray(b.sum(axis=0)).ravel()
        self.default_tol = tolerance_for(float(self.ent_degree.sum()))
        inv_e, inv_c = _inverse(self.ent_degree), _inverse(self.chunk_degree)
        self._inv_ent_degree = inv_e
        self._ent_rows = _Rows.from_csr(sp.diags(inv_e) @ b)  # P_CE by source entity
        self._chunk_rows = _Rows.from_csr(sp.diags(inv_c) @ b.T.tocsr())  # P_EC by source chunk
        self._weights = _Rows.from_csr(b)  # raw mention counts, entity → chunk
        pairs = int((np.diff(self._chunk_rows.indptr) ** 2).sum())
        self._two_step = self._build_two_step(b, inv_e, inv_c) if pairs <= max_pairs else None
        logger.debug(
            "PPR index: %d entities, %d chunks, %d edges, two-step %s",
            len(entity_ids),
            len(chunk_ids),
            b.nnz,
            self._two_step is not None,
        )

    @classmethod
    def from_store(cls, store: IncidenceSource, max_pairs: int = DEFAULT_MAX_PAIRS) -> PPRIndex:
        incidence, entity_ids, chunk_ids = store.incidence()
        return cls(incidence, entity_ids, chunk_ids, max_pairs=max_pairs)

    @staticmethod
    def _build_two_step(b: sp.csr_matrix, inv_e: FloatArray, inv_c: FloatArray) -> tuple[_Rows, FloatArray]:
        """``M`` by source entity without its diagonal, and the diagonal (return probabilities)."""
        m = (sp.diags(inv_e) @ (b @ sp.diags(inv_c) @ b.T)).tocsr()  # row e: M[·, e]
        diagonal = m.diagonal().astype(np.float64)
        m.setdiag(0.0)
        m.eliminate_zeros()
        return _Rows.from_csr(m), diagonal

    @property
    def method(self) -> str:
        """``two-step`` (push on the entity graph ``M``) or ``bipartite`` (the fallback)."""
        return "two-step" if self._two_step is not None else "bipartite"

    # --- queries ------------------------------------------------------------------------

    def chunk_counts(self, mesh_ids: list[str]) -> dict[str, int]:
        """How many chunks mention each of ``mesh_ids`` (0 for an entity the graph lacks)."""
        return {m: int(self.ent_chunks[i]) if (i := self._entity_index.get(m)) is not None else 0 for m in mesh_ids}

    def query(
        self, seeds: dict[str, float], damping: float = 0.5, top_k: int = 50, tol: float | None = None
    ) -> list[PPRHit]:
        """Top-``top_k`` chunks by approximate PPR; ``tol`` bounds the error (module docstring;
        ``None``: ``default_tol``, which shrinks with the graph)."""
        _check_damping(damping)
        tol = self.default_tol if tol is None else tol
        restart = self._restart(seeds)
        if restart is None or top_k <= 0 or damping == 0.0:
            return []
        if self._two_step is not None:
            ent_mass, positions, scores = self._two_step_push(*restart, damping, tol, *self._two_step)
        else:
            ent_mass, scores = self._bipartite_push(*restart, damping, tol)
            positions = None
        best = _top(scores, top_k) if positions is None else _best(scores, np.flatnonzero(scores > 0), top_k)
        chunks = best if positions is None else positions[best]
        paths = self._entity_paths(chunks, ent_mass, restart[0])
        return [
            PPRHit(self.chunk_ids[c], s, path)
            for c, s, path in zip(chunks.tolist(), scores[best].tolist(), paths, strict=True)
        ]

    def exact(self, seeds: dict[str, float], damping: float = 0.5, tol: float = 1e-10) -> FloatArray:
        """Chunk PPR scores aligned with ``chunk_ids``, by power iteration (L1 change < ``tol``).

        Iterates ``x_E ← (1-d)·s + d²·P_EC·P_CE·x_E`` over the bipartite matrices (a contraction
        by ``d²``, independent of the precomputed ``M``), then ``x_C = d·P_CE·x_E``.
        """
        _check_damping(damping)
        n_ent, n_chunk = len(self.entity_ids), len(self.chunk_ids)
        p_ce = _matrix(self._ent_rows, n_chunk).T  # CSC views: no copy, C matvec
        p_ec = _matrix(self._chunk_rows, n_ent).T
        restart = np.zeros(n_ent)
        seeds_found = self._restart(seeds)
        if seeds_found is None:
            return np.zeros(n_chunk)
        restart[seeds_found[0]] = (1.0 - damping) * seeds_found[1]
        x = restart.copy()
        for _ in range(_EXACT_MAX_ITER):
            nxt = restart + damping * damping * (p_ec @ (p_ce @ x))
            delta = float(np.abs(nxt - x).sum())
            x = nxt
            if delta < tol:
                break
        result: FloatArray = damping * (p_ce @ x)
        return result

    # --- internals ----------------------------------------------------------------------

    def _restart(self, seeds: dict[str, float]) -> tuple[IntArray, FloatArray] | None:
        """Known, connected, positively weighted seeds → (entity indices, normalised weights)."""
        found: dict[int, float] = {}
        for mesh_id, weight in seeds.items():
            i = self._entity_index.get(mesh_id)
            if i is not None and weight > 0 and self.ent_degree[i] > 0:
                found[i] = found.get(i, 0.0) + float(weight)
        if not found:
            return None
        w = np.fromiter(found.values(), dtype=np.float64, count=len(found))
        return np.fromiter(found, dtype=np.int64, count=len(found)), w / w.sum()

    def _two_step_push(
        self,
        seed_idx: IntArray,
        seed_w: FloatArray,
        damping: float,
        eps: float,
        m: _Rows,
        self_loop: FloatArray,
    ) -> tuple[FloatArray, IntArray | None, FloatArray]:
        """Push on ``M``; returns the entity mass and the chunk scores: ``(None, scores)`` over every
        chunk, or ``(chunk indices, their scores)`` when few chunks were reached."""
        alpha, deg = damping * damping, self.ent_degree
        p, r, threshold = np.zeros(len(deg)), np.zeros(len(deg)), eps * deg
        r[seed_idx] = (1.0 - damping) * seed_w
        active = seed_idx  # seeds are pushed once whatever their degree
        while len(active):
            mass = r[active] / (1.0 - alpha * self_loop[active])  # the self-loop's geometric series
            p[active] += mass
            r[active] = 0.0
            active = _scatter(r, *m.spread(active, alpha * mass), threshold)
        ent_mass = p + r
        per_edge = ent_mass * self._inv_ent_degree
        sources = np.flatnonzero(per_edge >= eps)
        targets, amounts = self._weights.spread(sources, damping * per_edge[sources])
        if len(targets) * _SAMPLE_STRIDE >= len(self.chunk_ids):
            return ent_mass, None, np.bincount(targets, amounts, minlength=len(self.chunk_ids)).astype(np.float64)
        positions, scores = self._sum_sparse(targets, amounts)
        return ent_mass, positions, scores

    def _sum_sparse(self, targets: IntArray, amounts: FloatArray) -> tuple[IntArray, FloatArray]:
        """Distinct ``targets`` and the sum of their ``amounts``, through this thread's zeroed
        chunk-length vector (left zeroed again): on millions of chunks, allocating and scanning a
        fresh score vector per query cost more than the push (measured, docs/scale.md)."""
        scratch = self._scratch.scores
        if scratch is None:
            scratch = self._scratch.scores = np.zeros(len(self.chunk_ids))
        np.add.at(scratch, targets, amounts)
        positions = _unique(targets)
        scores = scratch[positions]
        scratch[positions] = 0.0
        return positions, scores

    def _bipartite_push(
        self, seed_idx: IntArray, seed_w: FloatArray, damping: float, eps: float
    ) -> tuple[FloatArray, FloatArray]:
        """ACL push alternating sides of the bipartite graph (no precomputed ``M``)."""
        n_ent, n_chunk = len(self.entity_ids), len(self.chunk_ids)
        p_e, r_e, p_c, r_c = np.zeros(n_ent), np.zeros(n_ent), np.zeros(n_chunk), np.zeros(n_chunk)
        r_e[seed_idx] = seed_w
        thr_e, thr_c = eps * self.ent_degree, eps * self.chunk_degree
        active = seed_idx
        while len(active):  # one side's nodes are never adjacent: a batched push is exact
            mass = r_e[active]
            p_e[active] += (1.0 - damping) * mass
            r_e[active] = 0.0
            active = _scatter(r_c, *self._ent_rows.spread(active, damping * mass), thr_c)
            mass = r_c[active]
            p_c[active] += (1.0 - damping) * mass
            r_c[active] = 0.0
            active = _scatter(r_e, *self._chunk_rows.spread(active, damping * mass), thr_e)
        return p_e + (1.0 - damping) * r_e, p_c + (1.0 - damping) * r_c

    def _entity_paths(self, chunks: IntArray, ent_mass: FloatArray, seed_idx: IntArray) -> list[list[str]]:
        """Per chunk, its entities ranked by the PPR flow they send into it (at most 3).

        Flow from entity ``e`` into chunk ``c`` is ``d·x(e)·w(e,c)/deg(e)``. Chunks that mention a
        seed list only their seeds; the others list the bridging entities that reached them.
        """
        pos, lens = self._chunk_rows.gather(chunks)
        ents = self._chunk_rows.indices[pos]
        owner = np.repeat(np.arange(len(chunks)), lens)
        weight = self._chunk_rows.values[pos] * np.repeat(self.chunk_degree[chunks], lens)  # w(e, c)
        flow = ent_mass[ents] * weight * _inverse(self.ent_degree[ents])
        is_seed = np.isin(ents, seed_idx)
        has_seed = np.bincount(owner[is_seed], minlength=len(chunks)) > 0
        keep = is_seed | (~has_seed[owner] & (flow > 0))
        ents, owner, flow = ents[keep], owner[keep], flow[keep]
        order = np.lexsort((ents, -flow, owner))
        ents, owner = ents[order], owner[order]
        rank = np.arange(len(owner)) - np.searchsorted(owner, owner)
        paths: list[list[str]] = [[] for _ in range(len(chunks))]
        for e, o in zip(ents[rank < _MAX_PATH].tolist(), owner[rank < _MAX_PATH].tolist(), strict=True):
            paths[o].append(self.entity_ids[e])
        return paths


def _scatter(residual: FloatArray, targets: IntArray, amounts: FloatArray, threshold: FloatArray) -> IntArray:
    """Add ``amounts`` at ``targets``; return the distinct targets now at or above ``threshold``.

    A push reaching a large part of the side goes through a dense ``bincount`` and a full scan,
    a small one through ``np.add.at`` and a scan of its own targets only.
    """
    if len(targets) * 4 > len(residual):
        residual += np.bincount(targets, amounts, minlength=len(residual))
        return np.flatnonzero(residual >= threshold)
    np.add.at(residual, targets, amounts)
    return _unique(targets[residual[targets] >= threshold[targets]])


def _unique(a: IntArray) -> IntArray:
    """Sorted distinct values (sort-based: ``np.unique``'s hash path is ~20× slower here)."""
    if len(a) < 2:
        return a
    s = np.sort(a)
    keep = np.empty(len(s), dtype=np.bool_)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    result: IntArray = s[keep]
    return result


def _top(scores: FloatArray, k: int) -> IntArray:
    """Indices of the ``k`` best positive ``scores``, best first (ties: lower index first).

    The k-th best value of any subset is a lower bound on the k-th best overall, so a strided
    sample prunes the candidates before the exact selection.
    """
    floor = 0.0
    sample = scores[::_SAMPLE_STRIDE]
    if len(sample) > k:
        floor = float(np.partition(sample, len(sample) - k)[len(sample) - k])
    pos = np.flatnonzero(scores >= floor) if floor > 0 else np.flatnonzero(scores > 0)
    return _best(scores, pos, k)


def _best(scores: FloatArray, pos: IntArray, k: int) -> IntArray:
    """The ``k`` of the candidate indices ``pos`` (sorted) with the best ``scores``, best first
    (ties: lower index first)."""
    if len(pos) > k:
        kth = np.partition(scores[pos], len(pos) - k)[len(pos) - k]
        pos = pos[scores[pos] >= kth]  # keeps every tie at the k-th score, trimmed below
    order = np.lexsort((pos, -scores[pos]))
    result: IntArray = pos[order][:k]
    return result


def _matrix(rows: _Rows, n_cols: int) -> sp.csr_matrix:
    return sp.csr_matrix((rows.values, rows.indices, rows.indptr), shape=(len(rows.indptr) - 1, n_cols))


def _inverse(a: FloatArray) -> FloatArray:
    """``1/a`` where ``a > 0``, else 0 (isolated nodes have no transitions)."""
    out = np.zeros_like(a, dtype=np.float64)
    np.divide(1.0, a, out=out, where=a > 0)
    return out


def tolerance_for(mentions: float) -> float:
    """The push tolerance for a graph of ``mentions`` mention counts: ``DEFAULT_TOL`` up to 1M, then
    ``1 / mentions``. Scores sum to at most 1 over chunks whose number grows with the mentions, so a
    fixed tolerance loses the ranking on large graphs: at 10M mentions 1e-6 kept 0.895 of the exact
    top 10 for popular seeds, 1e-7 0.972 (``benchmarks/ppr.py``, docs/scale.md)."""
    return min(DEFAULT_TOL, 1.0 / mentions) if mentions > 0 else DEFAULT_TOL


def _check_damping(damping: float) -> None:
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping}")


