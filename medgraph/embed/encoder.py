"""Model tier of the dense embedder: a Hugging Face encoder read from a local directory.

Input: texts. Output: L2-normalised float32 vectors (the ``Embedder`` interface), taken from the
encoder's first token (``pooling="cls"``: SapBERT and SapBERT-XLMR, which are trained on that
token, and BGE-M3's dense side) or from the attention-masked mean of its last hidden states
(``pooling="mean"``: e5- and MiniLM-style sentence encoders).

Where it is used:
- cross-lingual dense linking (``linking.dense_embedder: encoder`` with ``linking.dense_model_path``):
  SapBERT-XLMR (``cambridgeltl/SapBERT-UMLS-2020AB-all-lang-from-XLMR``, copied to a local directory
  beforehand) embeds a German or Chinese term next to the English name of the same concept, which
  is what the offline tier (USE) does only roughly;
- chunk and question embedding (``embedding.dense: encoder`` with ``embedding.model_path``).

Texts are cut at ``max_length`` tokens and batched by length (little padding); outputs come back in
input order. ``name`` carries a fingerprint of the model directory (its ``config.json`` and the
sizes of its weight files), so vectors cached under one model are never read for another.
Nothing is downloaded (``local_files_only=True``); torch and transformers (the ``ml`` extra) are
imported when the embedder is built, never at module import.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any, Literal

import numpy as np

from medgraph.embed.base import BaseEmbedder, EmbedderError, FloatArray

logger = logging.getLogger(__name__)

Pooling = Literal["cls", "mean"]
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt")


def model_fingerprint(path: Path) -> str:
    """A short hash of a model directory's ``config.json`` and the names and sizes of its weights."""
    digest = hashlib.sha256((path / "config.json").read_bytes())
    for weights in sorted(p for p in path.iterdir() if p.suffix in _WEIGHT_SUFFIXES):
        digest.update(f"{weights.name}:{weights.stat().st_size}".encode())
    return digest.hexdigest()[:12]


class EncoderEmbedder(BaseEmbedder):
    """Dense vectors from a local transformer encoder (CLS or mean pooling)."""

    def __init__(
        self,
        model_path: str | Path | None,
        pooling: Pooling = "cls",
        max_length: int = 64,
        batch_size: int = 32,
        device: str = "cpu",
        threads: int = 1,
    ) -> None:
        if not model_path:
            raise EmbedderError("the encoder embedder needs a local model directory (model_path); nothing is downloaded")
        path = Path(model_path).expanduser()
        if not (path / "config.json").is_file():
            raise EmbedderError(f"encoder model directory {path} has no config.json (copy the model there first)")
        if pooling not in ("cls", "mean"):
            raise EmbedderError(f"unknown pooling {pooling!r}: use cls or mean")
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:
            raise EmbedderError("the encoder embedder needs torch and transformers: pip install 'medgraph[ml]'") from exc
        self._torch = torch
        if threads > 0:
            torch.set_num_threads(threads)
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise EmbedderError(f"encoder device {device!r} requested but CUDA is not available; use device: cpu")
        self._device = torch.device(device)
        self._tokenizer: Any = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self._model: Any = AutoModel.from_pretrained(str(path), local_files_only=True).to(self._device).eval()
        self.pooling: Pooling = pooling
        self.max_length = max_length
        self.batch_size = max(1, batch_size)
        self.has_dense = True
        self.dim = int(self._model.config.hidden_size)
        self.name = f"encoder-{path.name}-{pooling}-{model_fingerprint(path)}"
        super().__init__(threads)

    def _dense(self, texts: list[str], query: bool) -> FloatArray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self._batch([texts[i] for i in rows])
        return out

    def _batch(self, texts: list[str]) -> FloatArray:
        torch = self._torch
        enc = self._tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        enc = {k: v.to(self._device) for k, v in enc.items()}
        with torch.inference_mode():
            hidden = self._model(**enc).last_hidden_state
            if self.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        return np.asarray(pooled.float().cpu().numpy(), dtype=np.float32)
