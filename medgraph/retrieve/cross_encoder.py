"""Model tier of the reranker: a cross-encoder loaded from a local directory.

Input: a question and passages. Output: one calibrated relevance in [0, 1] per passage, in input
order (the ``Reranker`` protocol of ``medgraph.retrieve.rerank_base``).

The model is any Hugging Face sequence-classification checkpoint with a single output logit
(``num_labels == 1``), e.g. ``BAAI/bge-reranker-v2-m3`` copied to a local directory beforehand.
Each (question, passage) pair is encoded jointly, truncated to ``max_length`` tokens (longest
side first, so a long passage loses its tail before the question loses anything), and scored in
batches under ``torch.inference_mode()``.

Calibration: ``relevance = sigmoid(logit / temperature)``. bge rerankers are trained with a
binary cross-entropy-style objective so that ``sigmoid(logit)`` reads as the probability that the
passage is relevant (FlagEmbedding's ``normalize=True`` does exactly this); ``temperature`` (> 0,
default 1) flattens (> 1) or sharpens (< 1) that mapping when a model is over- or under-confident
on a target domain. It is a monotone map: the ranking never depends on it.

Batching sorts pairs by length so that each batch pads little; scores are written back to the
position of their passage, so the output order is always the input order.

Nothing is downloaded: weights and tokenizer are read with ``local_files_only=True``. torch and
transformers (the ``ml`` extra) are imported when a reranker is built, never at module import.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from medgraph.retrieve.rerank_base import RerankerError

logger = logging.getLogger(__name__)

_ML_HINT = "install the model-tier extra: pip install 'medgraph[ml]'"


def _import_ml() -> tuple[Any, Any]:
    """torch and transformers, or a ``RerankerError`` naming the extra to install."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise RerankerError(f"the cross-encoder reranker needs torch and transformers ({_ML_HINT})") from exc
    return torch, transformers


def resolve_device(torch: Any, device: str) -> Any:
    """``"cpu"``, ``"cuda"`` or ``"cuda:N"`` as a ``torch.device``; errors when CUDA is not usable."""
    spec = device.strip().lower()
    if spec == "cpu":
        return torch.device("cpu")
    if spec == "cuda" or spec.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise RerankerError(
                f"reranker device {device!r} requested but CUDA is not available "
                f"(torch {torch.__version__}, built for CUDA {torch.version.cuda}); use device='cpu'"
            )
        index = 0 if spec == "cuda" else _cuda_index(spec)
        count = torch.cuda.device_count()
        if index >= count:
            raise RerankerError(f"reranker device {device!r} requested but only {count} CUDA device(s) exist")
        return torch.device("cuda", index)
    raise RerankerError(f"unknown reranker device {device!r}; expected 'cpu', 'cuda' or 'cuda:N'")


def _cuda_index(spec: str) -> int:
    suffix = spec.partition(":")[2]
    if not suffix.isdigit():
        raise RerankerError(f"bad CUDA device {spec!r}; expected 'cuda:N' with N a device index")
    return int(suffix)


def _check_model_dir(model_path: str) -> Path:
    path = Path(model_path).expanduser()
    if not path.is_dir():
        raise RerankerError(
            f"cross-encoder model directory not found: {path} "
            "(copy the model, e.g. bge-reranker-v2-m3, to a local directory; nothing is downloaded)"
        )
    if not (path / "config.json").is_file():
        raise RerankerError(f"{path} is not a model directory: it has no config.json")
    return path


class CrossEncoderReranker:
    """A local sequence-classification cross-encoder behind the ``Reranker`` protocol."""

    def __init__(
        self,
        model_path: str,
        device: str = "cpu",
        batch_size: int = 16,
        max_length: int = 512,
        temperature: float = 1.0,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_length < 8:
            raise ValueError(f"max_length must be >= 8 tokens, got {max_length}")
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        path = _check_model_dir(model_path)
        torch, transformers = _import_ml()
        self._torch = torch
        self.device = resolve_device(torch, device)
        self.batch_size = batch_size
        self.temperature = float(temperature)
        self.model_path = str(path)
        self.name = f"cross-encoder:{path.name}"
        self.tokenizer, self.model = self._load(transformers, path)
        self.max_length = self._cap_length(max_length)
        logger.info(
            "cross-encoder %s loaded on %s (max_length=%d, batch_size=%d, temperature=%g)",
            path, self.device, self.max_length, batch_size, self.temperature,
        )

    def _load(self, transformers: Any, path: Path) -> tuple[Any, Any]:
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            model = transformers.AutoModelForSequenceClassification.from_pretrained(
                str(path), local_files_only=True
            )
        except (OSError, ValueError) as exc:
            raise RerankerError(f"cannot load a cross-encoder from {path}: {exc}") from exc
        num_labels = int(getattr(model.config, "num_labels", 0))
        if num_labels != 1:
            raise RerankerError(
                f"{path}: a cross-encoder reranker needs a single relevance logit (num_labels=1), "
                f"this model has num_labels={num_labels}"
            )
        model.eval()
        model.to(self.device)
        return tokenizer, model

    def _cap_length(self, max_length: int) -> int:
        """``max_length``, lowered to the tokenizer's own limit when that is smaller."""
        limit = getattr(self.tokenizer, "model_max_length", None)
        if isinstance(limit, int) and 0 < limit < max_length:
            logger.info("max_length %d exceeds the model's %d tokens; using %d", max_length, limit, limit)
            return limit
        return max_length

    def score(self, question: str, passages: list[str]) -> list[float]:
        """Relevance in [0, 1] of each passage to ``question``, in the order of ``passages``."""
        if not passages:
            return []
        # Longest first: similar lengths share a batch (little padding) and the largest batch
        # runs first, so an out-of-memory error shows up immediately.
        order = sorted(range(len(passages)), key=lambda i: -len(passages[i]))
        scores = [0.0] * len(passages)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            batch_scores = self._score_batch(question, [passages[i] for i in chunk])
            for i, value in zip(chunk, batch_scores, strict=True):
                scores[i] = value
        return scores

    def _score_batch(self, question: str, passages: list[str]) -> list[float]:
        """Calibrated scores of one batch (sigmoid of the single logit over the temperature)."""
        torch = self._torch
        encoded = self.tokenizer(
            [question] * len(passages),
            passages,
            padding=True,
            truncation="longest_first",
            max_length=self.max_length,
            return_tensors="pt",
        )
        encoded = {k: v.to(self.device) for k, v in encoded.items()}
        with torch.inference_mode():
            logits = self.model(**encoded).logits.double().view(-1)
            probs = torch.sigmoid(logits / self.temperature)
        return [float(p) for p in probs.cpu().tolist()]
