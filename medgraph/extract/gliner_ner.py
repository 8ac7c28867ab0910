"""GLiNER pass: zero-shot span NER with the prompt labels of ``ner.gliner_labels``.

Input: a local GLiNER directory (``ner.gliner_model_path``: ``gliner_config.json``, the weights and
the tokenizer files; an ``encoder_config`` in the config, or ``model_name`` pointing at a local copy
of the backbone), the prompt labels, then ``predict(texts)`` over a batch of chunks.
Output: per text, ``ModelSpan`` records (``source="gliner"``) with character offsets into that
text, the prompt label and GLiNER's span probability (spans below ``threshold`` are not returned).

The batch goes through ``GLiNER.inference`` ``batch_size`` texts at a time, flat NER (no nested
spans). The ``gliner`` package (the ``ml`` extra) is imported when the pass is built, never at module
import; nothing is downloaded (``local_files_only=True``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from medgraph.extract.spans import ModelSpan, NerModelError
from medgraph.extract.token_ner import model_directory, torch_device

log = logging.getLogger(__name__)


class GlinerNER:
    """A local GLiNER model with a fixed set of prompt labels."""

    def __init__(
        self,
        path: str,
        labels: Sequence[str],
        threshold: float = 0.5,
        batch_size: int = 16,
        device: str = "cpu",
    ) -> None:
        directory = model_directory(path, "GLiNER model", marker="gliner_config.json")
        if not labels:
            raise NerModelError("the GLiNER pass needs at least one prompt label (ner.gliner_labels)")
        try:
            import torch
            from gliner import GLiNER
        except ImportError as exc:
            raise NerModelError(
                "the GLiNER pass needs the gliner package: pip install 'medgraph[ml]'"
            ) from exc
        dev = torch_device(torch, device)
        model: Any = GLiNER.from_pretrained(str(directory), local_files_only=True, map_location=str(dev))
        self.model = model.to(dev).eval()
        self.labels = list(labels)
        self.threshold = threshold
        self.batch_size = batch_size

    def predict(self, texts: Sequence[str]) -> list[list[ModelSpan]]:
        """Spans per text, in input order."""
        rows = [i for i, t in enumerate(texts) if t.strip()]
        out: list[list[ModelSpan]] = [[] for _ in texts]
        if not rows:
            return out
        found = self.model.inference(
            [texts[i] for i in rows],
            self.labels,
            flat_ner=True,
            threshold=self.threshold,
            batch_size=self.batch_size,
        )
        for i, entities in zip(rows, found, strict=True):
            out[i] = [
                ModelSpan(int(e["start"]), int(e["end"]), str(e["label"]), float(e["score"]), "gliner")
                for e in entities
            ]
        return out
