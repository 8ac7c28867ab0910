"""The embedder interface shared by every backend (offline tier and model tier).

Input: lists of texts (chunks to index, or questions). Output: dense vectors as a float32 array of
shape ``(n, dim)`` with L2-normalised rows, and/or sparse vectors (``SparseVector``: uint32 term
indices, float32 weights). Backends that distinguish queries from passages (e5: ``query:`` /
``passage:`` prefixes) do so in the ``embed_query_*`` methods; the others use the same function.

``sparse_idf`` says how a backend's sparse weights are meant to be scored: ``True`` for term
weights that expect the store to multiply in IDF (Qdrant ``Modifier.IDF``), ``False`` for learned
weights that are complete on their own.

Thread limits: ``ThreadLimit`` wraps every call in a ``threadpoolctl`` limit on the BLAS and OpenMP
pools loaded in the process, so several embedding actors on a small machine do not oversubscribe.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

logger = logging.getLogger(__name__)

FloatArray = NDArray[np.float32]
# the language (a language pack's code) of each text, for backends whose sparse terms depend on it (the
# lexical embedder's stemmer); None: unknown (such a backend detects it); others ignore it
Languages = Sequence[str | None] | None


class EmbedderError(RuntimeError):
    """An embedder cannot be built or cannot produce the requested output."""


@dataclass(frozen=True, eq=False)
class SparseVector:
    """A sparse vector: sorted unique ``indices`` (uint32) and their ``values`` (float32)."""

    indices: NDArray[np.uint32]
    values: NDArray[np.float32]

    def __post_init__(self) -> None:
        if self.indices.shape != self.values.shape or self.indices.ndim != 1:
            raise ValueError("sparse indices and values must be 1-D arrays of the same length")

    @classmethod
    def from_arrays(cls, indices: Any, values: Any) -> SparseVector:
        """Build from any index/value sequences; duplicate indices are summed, output is sorted."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        val = np.asarray(values, dtype=np.float32).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() > np.iinfo(np.uint32).max):
            raise ValueError("sparse indices must fit in uint32")
        uniq, inverse = np.unique(idx, return_inverse=True)
        summed = np.zeros(uniq.shape[0], dtype=np.float32)
        np.add.at(summed, inverse, val)
        return cls(uniq.astype(np.uint32), summed)

    def __len__(self) -> int:
        return int(self.indices.shape[0])

    def as_dict(self) -> dict[int, float]:
        return {int(i): float(v) for i, v in zip(self.indices, self.values, strict=True)}

    def dot(self, other: SparseVector) -> float:
        _, a, b = np.intersect1d(self.indices, other.indices, assume_unique=True, return_indices=True)
        return float(np.dot(self.values[a], other.values[b]))


# A question translated word by word (``medgraph.retrieve.translate``): one group per source word or
# linked entity, each holding its target-language alternatives with their weights
# (``(("radiotherapy", 0.25), ("radiation therapy", 0.25), ...), ...``).
GlossGroups = tuple[tuple[tuple[str, float], ...], ...]


def glossed_text(groups: GlossGroups) -> str:
    """Every alternative of every group, as one text (for embedders that take no weights)."""
    return " ".join(alt for group in groups for alt, _ in group)


@runtime_checkable
class Embedder(Protocol):
    """What the indexer and the retriever need from an embedding backend."""

    @property
    def name(self) -> str: ...
    @property
    def dim(self) -> int: ...  # 0 when ``has_dense`` is False
    @property
    def has_dense(self) -> bool: ...
    @property
    def has_sparse(self) -> bool: ...
    @property
    def sparse_idf(self) -> bool: ...
    @property
    def dense_feature_map(self) -> tuple[float, float]: ...  # (slope, intercept): see ``dense_feature``

    def embed_dense(self, texts: list[str]) -> FloatArray: ...
    def embed_sparse(self, texts: list[str], languages: Languages = None) -> list[SparseVector]: ...
    def embed_query_dense(self, texts: list[str]) -> FloatArray: ...
    def embed_query_sparse(self, texts: list[str], languages: Languages = None) -> list[SparseVector]: ...
    def embed_query_glossed(self, groups: list[GlossGroups], languages: Languages = None) -> list[SparseVector]: ...


def dense_feature(embedder: Embedder, cosine: float) -> float:
    """A question–passage cosine on the common scale of the reranker's ``dense`` feature.

    Models differ in where their cosines lie: USE gives unrelated PubMedQA question–abstract
    pairs a median of 0.12 and the relevant pair 0.43, multilingual-e5 0.80 and 0.91. The
    embedder's ``dense_feature_map`` (slope, intercept) maps its cosine linearly onto USE's scale
    (median to median), so the feature reranker's refusal threshold means the same with either.
    """
    slope, intercept = embedder.dense_feature_map
    return float(intercept + slope * cosine)


def l2_normalise(matrix: NDArray[Any]) -> FloatArray:
    """Rows scaled to unit length, as float32 (zero rows stay zero)."""
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    result: FloatArray = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
    return result


class ThreadLimit:
    """Context factory limiting BLAS/OpenMP thread pools to ``threads`` while an embedder runs.

    Uses ``threadpoolctl`` on the libraries loaded when the limiter is built (build it after the
    model is loaded). OpenMP limits are per calling thread, hence the limit around every call
    rather than once at start-up. ``threads <= 0`` means no limit. Without ``threadpoolctl`` the
    limiter does nothing; set ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` before start-up instead.
    """

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self._controller: Any = None
        if threads > 0:
            try:
                from threadpoolctl import ThreadpoolController

                self._controller = ThreadpoolController()
            except ImportError:
                logger.warning("threadpoolctl not installed: embedder thread limit %d not enforced", threads)

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        if self._controller is None:
            yield
            return
        with self._controller.limit(limits=self.threads):
            yield


class BaseEmbedder:
    """Shared plumbing: empty input, thread limits, output checks. Backends override ``_dense`` etc."""

    name: str = "base"
    dim: int = 0
    has_dense: bool = False
    has_sparse: bool = False
    sparse_idf: bool = False
    # (slope, intercept) mapping this model's question–passage cosine onto the scale of USE's, the
    # scale the reranker's ``dense`` feature was calibrated on (see ``dense_feature``)
    dense_feature_map: tuple[float, float] = (1.0, 0.0)

    def __init__(self, threads: int = 1) -> None:
        self._limit = ThreadLimit(threads)

    def embed_dense(self, texts: list[str]) -> FloatArray:
        return self._run_dense(texts, query=False)

    def embed_query_dense(self, texts: list[str]) -> FloatArray:
        return self._run_dense(texts, query=True)

    def embed_sparse(self, texts: list[str], languages: Languages = None) -> list[SparseVector]:
        return self._run_sparse(texts, query=False, languages=languages)

    def embed_query_sparse(self, texts: list[str], languages: Languages = None) -> list[SparseVector]:
        return self._run_sparse(texts, query=True, languages=languages)

    def embed_query_glossed(self, groups: list[GlossGroups], languages: Languages = None) -> list[SparseVector]:
        """Sparse query vectors of word-by-word translations; this default embeds all alternatives
        as one text (no weights). ``LexicalEmbedder`` weighs them."""
        return self.embed_query_sparse([glossed_text(g) for g in groups], languages)

    def _run_dense(self, texts: list[str], query: bool) -> FloatArray:
        if not self.has_dense:
            raise EmbedderError(f"embedder {self.name!r} produces no dense vectors")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._limit():
            out = self._dense(list(texts), query)
        if out.shape != (len(texts), self.dim):
            raise EmbedderError(f"{self.name}: expected shape {(len(texts), self.dim)}, got {out.shape}")
        return l2_normalise(out)

    def _run_sparse(self, texts: list[str], query: bool, languages: Languages = None) -> list[SparseVector]:
        if not self.has_sparse:
            raise EmbedderError(f"embedder {self.name!r} produces no sparse vectors")
        if not texts:
            return []
        with self._limit():
            if getattr(self, "language_aware", False):
                return self._sparse(list(texts), query, languages)  # type: ignore[call-arg]
            return self._sparse(list(texts), query)

    def _dense(self, texts: list[str], query: bool) -> FloatArray:
        raise EmbedderError(f"embedder {self.name!r} produces no dense vectors")

    def _sparse(self, texts: list[str], query: bool) -> list[SparseVector]:
        raise EmbedderError(f"embedder {self.name!r} produces no sparse vectors")


class HybridEmbedder:
    """Dense vectors from one backend, sparse vectors from another."""

    def __init__(self, dense: Embedder, sparse: Embedder) -> None:
        if not dense.has_dense:
            raise EmbedderError(f"{dense.name!r} cannot serve as the dense embedder")
        if not sparse.has_sparse:
            raise EmbedderError(f"{sparse.name!r} cannot serve as the sparse embedder")
        self.dense = dense
        self.sparse = sparse
        self.name = f"{dense.name}+{sparse.name}"
        self.dim = dense.dim
        self.has_dense = True
        self.has_sparse = True
        self.sparse_idf = sparse.sparse_idf
        self.dense_feature_map = dense.dense_feature_map

    def embed_dense(self, texts: list[str]) -> FloatArray:
        return self.dense.embed_dense(texts)

    def embed_query_dense(self, texts: list[str]) -> FloatArray:
        return self.dense.embed_query_dense(texts)

    def embed_sparse(self, texts: list[str], languages: Languages = None) -> list[SparseVector]:
        return self.sparse.embed_sparse(texts, languages)

    def embed_query_sparse(self, texts: list[str], languages: Languages = None) -> list[SparseVector]:
        return self.sparse.embed_query_sparse(texts, languages)

    def embed_query_glossed(self, groups: list[GlossGroups], languages: Languages = None) -> list[SparseVector]:
        return self.sparse.embed_query_glossed(groups, languages)
