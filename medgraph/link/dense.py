"""Cross-lingual dense linking: the last step of the linker for surfaces the dictionary misses.

Input: a ``Vocabulary`` and a multilingual dense ``Embedder`` (offline tier: USE; model tier:
any ``Embedder`` over a SapBERT-XLMR-style encoder, behind the same interface). Output:
``search(surfaces) -> [(mesh_id | None, cosine)]``, the nearest MeSH name in any language.

The index holds, per descriptor, its preferred English name, up to ``english_synonyms`` more
English names (inverted "X, Y" forms skipped) and every German and Chinese name: ~31k names for
the full vocabulary, embedded once (~15 s with USE on two threads) and cached as
``dense_names-<key>.npz`` beside the vocabulary, keyed by the vocabulary fingerprint and the
embedder name. The linker accepts a hit only at cosine ≥ ``linking.dense_threshold`` and marks
it ``method="dense"``.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from medgraph.embed.base import Embedder
from medgraph.ontology.vocabulary import Vocabulary

log = logging.getLogger(__name__)


def index_names(vocab: Vocabulary, english_synonyms: int = 2) -> tuple[list[str], list[str]]:
    """(names, mesh_ids) the index embeds, in a stable order."""
    names: list[str] = []
    ids: list[str] = []
    for mesh_id in sorted(vocab.entities):
        entity = vocab.entities[mesh_id]
        seen: set[str] = set()
        english = [entity.name, *entity.names.get("en", [])]
        picked = [n for n in english if n and "," not in n]
        chosen = picked[: 1 + english_synonyms]
        for lang in ("de", "zh"):
            chosen += entity.names.get(lang, [])
        for name in chosen:
            key = name.casefold()
            if key not in seen:
                seen.add(key)
                names.append(name)
                ids.append(mesh_id)
    return names, ids


class DenseNameIndex:
    def __init__(self, vocab: Vocabulary, embedder: Embedder, cache_dir: str | Path | None = None) -> None:
        if not embedder.has_dense:
            raise ValueError(f"dense linking needs a dense embedder; {embedder.name} has none")
        self.embedder = embedder
        names, self.ids = index_names(vocab)
        self.names = names
        self.matrix = self._load_or_embed(vocab, names, cache_dir)

    def _load_or_embed(self, vocab: Vocabulary, names: list[str], cache_dir: str | Path | None) -> NDArray[np.float32]:
        key = hashlib.sha256(
            "\n".join([str(vocab.manifest.get("fingerprint", "")), self.embedder.name, *names]).encode()
        ).hexdigest()[:16]
        path = Path(cache_dir) / f"dense_names-{key}.npz" if cache_dir else None
        if path is not None and path.is_file():
            return np.asarray(np.load(path)["matrix"], dtype=np.float32)
        log.info("embedding %d MeSH names for dense linking (%s)", len(names), self.embedder.name)
        matrix = np.asarray(self.embedder.embed_dense(names), dtype=np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".partial.npz")
            np.savez(tmp, matrix=matrix)
            tmp.replace(path)
        return matrix

    def search(self, surfaces: list[str]) -> list[tuple[str | None, float]]:
        """The nearest name's MeSH ID and its cosine, per surface."""
        if not surfaces or not len(self.ids):
            return [(None, 0.0) for _ in surfaces]
        queries = np.asarray(self.embedder.embed_dense(list(surfaces)), dtype=np.float32)
        queries /= np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
        scores = queries @ self.matrix.T
        best = scores.argmax(axis=1)
        return [(self.ids[int(j)], float(scores[i, j])) for i, j in enumerate(best)]
