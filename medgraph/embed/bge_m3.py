"""Model tier of embedding: BGE-M3 (dense + learned sparse) via FlagEmbedding's ``BGEM3FlagModel``.

Input: texts (multilingual; BGE-M3 covers EN/DE/ZH and 100+ other languages). Outputs, from one
loaded model (``embedding.dense: bge_m3`` and/or ``embedding.sparse: bge_m3``):
- dense: the CLS vector of the last layer, L2-normalised float32 (1024-dim for BAAI/bge-m3);
- sparse: FlagEmbedding's ``lexical_weights``, ``relu(sparse_linear(hidden state))`` per token,
  the largest weight per token id, special tokens dropped. A ``SparseVector`` whose indices are the
  tokenizer's token ids (stable for a given model directory) and whose weights are complete scores:
  a plain dot product, no IDF (``sparse_idf = False``).
BGE-M3 uses no instruction or prefix, so queries and passages are embedded alike (``max_length``
tokens each; longer texts are cut). ColBERT vectors are not computed.

Weights come only from the local directory ``embedding.model_path``: a copy of ``BAAI/bge-m3``
(``config.json``, tokenizer files, model weights, ``sparse_linear.pt`` and ``colbert_linear.pt``);
nothing is downloaded. Device: ``embedding.device`` (``cpu``, ``cuda``, ``cuda:1``); on CUDA the model
runs in fp16. ``embedding.batch_size`` texts go through the model at a time, sorted by length by
FlagEmbedding (little padding); outputs come back in input order. FlagEmbedding runs the first
(longest) batch of every call once more to probe memory, so hand it several batches per call (the
corpus job: ``pipeline.embed.batch_size`` a multiple of ``embedding.batch_size``).

One forward pass serves both outputs: when the embedder gives dense and sparse vectors, each call
computes both and keeps the other output for the same texts, so the corpus job's ``embed_dense``
then ``embed_sparse`` on one batch (and a question's dense then sparse search) run the model once.

FlagEmbedding, torch and transformers (the ``ml`` extra) are imported when the embedder is built,
never at module import. ``name`` carries a fingerprint of the model directory, as for ``encoder``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from medgraph.embed.base import BaseEmbedder, EmbedderError, FloatArray, SparseVector
from medgraph.embed.encoder import model_fingerprint

logger = logging.getLogger(__name__)

HEAD_FILES = ("sparse_linear.pt", "colbert_linear.pt")
INSTALL_HINT = "pip install 'medgraph[ml]' (FlagEmbedding, torch, transformers)"


def _import_torch() -> Any:
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as exc:
        raise EmbedderError(f"embedding kind 'bge_m3' needs torch and transformers: {INSTALL_HINT}") from exc
    return torch


def _import_flag_model() -> Any:
    """``BGEM3FlagModel``, or an ``EmbedderError`` saying what to install or what is incompatible."""
    try:
        from FlagEmbedding import BGEM3FlagModel
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name == "FlagEmbedding":
            raise EmbedderError(f"embedding kind 'bge_m3' needs the FlagEmbedding package: {INSTALL_HINT}") from exc
        # FlagEmbedding imports all its models on import, some of them from transformers internals
        import transformers

        raise EmbedderError(
            f"FlagEmbedding is installed but cannot be imported with transformers {transformers.__version__} "
            f"({type(exc).__name__}: {exc}); install the versions the 'ml' extra pins: {INSTALL_HINT}"
        ) from exc
    return BGEM3FlagModel


class BgeM3Embedder(BaseEmbedder):
    """BGE-M3 from a local directory, with optional dense and sparse outputs from one loaded model."""

    sparse_idf = False

    def __init__(
        self,
        model_path: str | Path | None,
        dense: bool = True,
        sparse: bool = True,
        max_length: int = 512,
        batch_size: int = 32,
        device: str = "cpu",
        threads: int = 1,
    ) -> None:
        if not (dense or sparse):
            raise EmbedderError("bge_m3: ask for dense and/or sparse vectors")
        if not model_path:
            raise EmbedderError(
                "embedding kind 'bge_m3' needs embedding.model_path: a local directory with the BGE-M3 "
                "weights (nothing is downloaded)"
            )
        path = Path(model_path).expanduser()
        if not path.is_dir():
            raise EmbedderError(f"bge_m3 model directory {path} does not exist or is not a directory "
                                "(copy BAAI/bge-m3 there first)")
        if not (path / "config.json").is_file():
            raise EmbedderError(f"bge_m3 model directory {path} has no config.json (copy BAAI/bge-m3 there first)")
        missing = [f for f in HEAD_FILES if not (path / f).is_file()]
        if sparse and missing:
            # FlagEmbedding would start the sparse head from random weights (training mode) without them
            raise EmbedderError(f"bge_m3 model directory {path} lacks {', '.join(missing)}: the sparse "
                                "(lexical) head of BGE-M3 cannot be loaded")
        torch = _import_torch()
        cuda = device.startswith("cuda")
        if cuda and not torch.cuda.is_available():
            raise EmbedderError(f"bge_m3 device {device!r} requested but CUDA is not available; use device: cpu")
        flag_model = _import_flag_model()
        if threads > 0:
            torch.set_num_threads(threads)
        self.max_length = max_length
        self.batch_size = max(1, batch_size)
        self.device = device
        self._model: Any = flag_model(
            str(path),
            use_fp16=cuda,
            devices=device,  # one device: encode in this process, no multiprocessing pool
            normalize_embeddings=True,
            batch_size=self.batch_size,
            query_max_length=max_length,
            passage_max_length=max_length,
            return_dense=dense,
            return_sparse=sparse,
            return_colbert_vecs=False,
        )
        module = getattr(self._model, "model", None)
        if cuda and isinstance(module, torch.nn.Module):
            module.half()  # fp16 even where a transformers release ignores the dtype FlagEmbedding asks for
        self.has_dense = dense
        self.has_sparse = sparse
        self.dim = int(json.loads((path / "config.json").read_text(encoding="utf-8"))["hidden_size"]) if dense else 0
        parts = "+".join(p for p, on in (("dense", dense), ("sparse", sparse)) if on)
        self.name = f"bge_m3-{parts}-{path.name}-{model_fingerprint(path)}"
        # the output of the last call that was not asked for yet: (query, texts, kind, value)
        self._kept: tuple[bool, tuple[str, ...], str, Any] | None = None
        super().__init__(threads)

    def _dense(self, texts: list[str], query: bool) -> FloatArray:
        out: FloatArray = self._output(texts, query, "dense")
        return out

    def _sparse(self, texts: list[str], query: bool) -> list[SparseVector]:
        out: list[SparseVector] = self._output(texts, query, "sparse")
        return out

    def _output(self, texts: list[str], query: bool, kind: str) -> Any:
        key = tuple(texts)
        kept, self._kept = self._kept, None
        if kept is not None and kept[0] == query and kept[2] == kind and kept[1] == key:
            return kept[3]
        dense, sparse = self._encode(texts, query)
        if self.has_dense and self.has_sparse:
            self._kept = (query, key, "sparse", sparse) if kind == "dense" else (query, key, "dense", dense)
        return dense if kind == "dense" else sparse

    def _encode(self, texts: list[str], query: bool) -> tuple[FloatArray | None, list[SparseVector] | None]:
        encode = self._model.encode_queries if query else self._model.encode_corpus
        out = encode(
            texts, batch_size=self.batch_size, max_length=self.max_length,
            return_dense=self.has_dense, return_sparse=self.has_sparse, return_colbert_vecs=False,
        )
        dense = None
        if self.has_dense:
            dense = np.asarray(out["dense_vecs"], dtype=np.float32).reshape(len(texts), -1)
        sparse = None
        if self.has_sparse:
            sparse = [_sparse_vector(weights) for weights in out["lexical_weights"]]
        return dense, sparse


def _sparse_vector(weights: dict[Any, Any]) -> SparseVector:
    """FlagEmbedding's ``{token id (str): weight}`` as a ``SparseVector`` of positive weights."""
    ids = np.fromiter((int(k) for k in weights), dtype=np.int64, count=len(weights))
    values = np.fromiter((float(v) for v in weights.values()), dtype=np.float32, count=len(weights))
    keep = values > 0
    return SparseVector.from_arrays(ids[keep], values[keep])
