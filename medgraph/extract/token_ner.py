"""Token-classification NER pass: one local Hugging Face model per language (en / de / zh).

Input: ``{language: model directory}`` (``ner.token_model_paths``), then ``predict(texts,
languages)`` over a batch of chunks. Output: per text, ``ModelSpan`` records (``source="token"``)
with offsets into that text, the model's entity type (``id2label`` of its config, prefix removed)
and the mean probability of the words' tags. A text in a language with no model gets no spans.

Each language's texts go through its model ``batch_size`` at a time, in windows of ``max_length``
tokens (fewer when the model's position embeddings take fewer). A longer text is read in windows
that overlap by a quarter of a window; their spans are merged with ``resolve_overlaps``. Tags are
decoded with ``decode_tags`` (word-piece aggregation, BIO / BIOES / IO). Needs a fast tokenizer
(for character offsets). torch and transformers are imported when the pass is built; nothing is
downloaded (``local_files_only``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from medgraph.extract.spans import ModelSpan, NerModelError, decode_tags, resolve_overlaps

log = logging.getLogger(__name__)


def model_directory(path: str, what: str, marker: str = "config.json") -> Path:
    """The directory ``path``, which must hold ``marker``; a ``NerModelError`` naming it otherwise."""
    directory = Path(path).expanduser()
    if not (directory / marker).is_file():
        raise NerModelError(
            f"{what}: no {marker} in {directory} (copy the model there first; nothing is downloaded)"
        )
    return directory


def torch_device(torch: Any, device: str) -> Any:
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise NerModelError(f"NER device {device!r} requested but CUDA is not available; use device: cpu")
    return torch.device(device)


class _LanguageModel:
    """One language's tokenizer and model, loaded from its directory."""

    def __init__(self, path: Path, device: Any) -> None:
        from transformers import AutoModelForTokenClassification, AutoTokenizer

        self.tokenizer: Any = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        if not self.tokenizer.is_fast:
            raise NerModelError(
                f"token NER model {path}: needs a fast tokenizer (tokenizer.json) for offsets"
            )
        model: Any = AutoModelForTokenClassification.from_pretrained(str(path), local_files_only=True)
        self.model = model.to(device).eval()
        self.id2label = {int(k): str(v) for k, v in model.config.id2label.items()}
        self.device = device
        # the longest window the model takes (RoBERTa-style position ids start after the padding id)
        positions = int(getattr(model.config, "max_position_embeddings", 512))
        if "roberta" in str(getattr(model.config, "model_type", "")):
            positions -= 2
        self.max_length = min(positions, int(self.tokenizer.model_max_length))


class TokenClassifierNER:
    """Batched token-classification NER over local per-language models."""

    def __init__(
        self, paths: dict[str, str], batch_size: int = 16, max_length: int = 256, device: str = "cpu"
    ) -> None:
        directories = {lang: model_directory(p, f"token NER model for {lang!r}") for lang, p in paths.items()}
        try:
            import torch
        except ImportError as exc:
            raise NerModelError(
                "the token NER pass needs torch and transformers: pip install 'medgraph[ml]'"
            ) from exc
        self._torch = torch
        dev = torch_device(torch, device)
        self.models = {lang: _LanguageModel(d, dev) for lang, d in directories.items()}
        self.batch_size = batch_size
        self.max_length = max_length

    @property
    def languages(self) -> set[str]:
        return set(self.models)

    def logits(self, lm: _LanguageModel, enc: dict[str, Any]) -> npt.NDArray[np.float32]:
        """Tag logits (windows × pieces × tags) of one tokenised batch: the one step that runs the model."""
        torch = self._torch
        inputs = {k: v.to(lm.device) for k, v in enc.items()}
        with torch.inference_mode():
            out = lm.model(**inputs).logits
        return np.asarray(out.float().cpu().numpy(), dtype=np.float32)

    def _batch(self, lm: _LanguageModel, texts: list[str]) -> list[list[ModelSpan]]:
        window = min(self.max_length, lm.max_length)
        enc = lm.tokenizer(
            texts,
            truncation=True,
            max_length=window,
            stride=window // 4,
            padding=True,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            return_tensors="pt",
        )
        owners = [int(i) for i in enc.pop("overflow_to_sample_mapping")]
        offsets = enc.pop("offset_mapping").tolist()
        word_ids = [enc.word_ids(w) for w in range(len(owners))]
        logits = self.logits(lm, dict(enc))
        shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
        probs = shifted / shifted.sum(axis=-1, keepdims=True)
        found: list[list[ModelSpan]] = [[] for _ in texts]
        for w, owner in enumerate(owners):
            found[owner].extend(decode_tags(texts[owner], offsets[w], word_ids[w], probs[w], lm.id2label))
        return [resolve_overlaps(spans) for spans in found]

    def predict(self, texts: Sequence[str], languages: Sequence[str]) -> list[list[ModelSpan]]:
        """Spans per text (``[]`` for a language with no model), in input order."""
        out: list[list[ModelSpan]] = [[] for _ in texts]
        for lang, lm in self.models.items():
            rows = [i for i, language in enumerate(languages) if language == lang and texts[i].strip()]
            rows.sort(key=lambda i: len(texts[i]))  # similar lengths together: little padding
            for start in range(0, len(rows), self.batch_size):
                part = rows[start : start + self.batch_size]
                for i, spans in zip(part, self._batch(lm, [texts[i] for i in part]), strict=True):
                    out[i] = spans
        return out
