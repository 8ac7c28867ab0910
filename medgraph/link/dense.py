"""Cross-lingual dense linking: the last step of the linker for surfaces the dictionary misses.

Input: a ``Vocabulary`` and a multilingual dense ``Embedder`` (offline tier: USE; model tier:
``EncoderEmbedder`` over SapBERT-XLMR in a local directory, ``linking.dense_embedder: encoder``,
behind the same interface). Output:
``search(surfaces) -> [(mesh_id | None, cosine)]``, the nearest MeSH name in any language.

The index holds, per descriptor, its preferred English name, up to ``english_synonyms`` more
English names (inverted "X, Y" forms skipped) and every name in each other registered language
(German and Chinese): ~31k names for
the full vocabulary, embedded once (~15 s with USE on two threads) and cached as
``dense_names-<key>.npz`` beside the vocabulary, keyed by the vocabulary fingerprint and the
embedder name. The linker accepts a hit only at cosine ≥ ``linking.dense_threshold`` and marks
it ``method="dense"``.

Re-scoring (``rescore``): the ``linking.dense_top_k`` nearest names are re-ranked by
``(1 - w) · cosine + w · char_similarity + b · [disease-like mention and disease descriptor]``
with ``w = linking.dense_char_weight`` (character bigram Dice between the mention and the
candidate's names) and ``b = linking.dense_disease_bonus``; a mention is disease-like by its
ending in any language (the packs' ``lexicon.disease_endings``: ``-itis``, ``-ose``, ``-krankheit``,
``…病``, ``…症``, ``…炎``, …). The weights and the
threshold are tuned on held-out vocabulary names (``medgraph.link.devset``), never on test terms.

Unknown text: an embedder may give every string it has no tokens for one and the same vector (USE
does so for most Chinese terms: ``痤疮`` and ``膈疝`` embed identically). Names and queries whose
vector is that of a probe made of unassigned characters carry no meaning; such names are left out
of the index and such queries get no candidates, instead of a cosine of 1.0 with each other.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from medgraph import lang
from medgraph.embed.base import Embedder, l2_normalise
from medgraph.ontology.vocabulary import Vocabulary
from medgraph.schemas import DISEASE
from medgraph.text.keys import has_cjk, match_key

log = logging.getLogger(__name__)

UNKNOWN_PROBE = "\ue000\ue001"  # private-use characters: no embedder has tokens for them
UNKNOWN_COSINE = 0.999  # a vector this close to the probe's is the embedder's "unknown" vector



@lru_cache(maxsize=8)
def _disease_like(endings: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("(?:" + "|".join(re.escape(e) for e in dict.fromkeys(endings)) + ")$", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    """One descriptor among a mention's nearest names: its best cosine and that name."""

    mesh_id: str
    name: str
    cosine: float


def is_disease_like(surface: str) -> bool:
    """A mention whose last word ends like a disease name in any registered language."""
    words = surface.strip().split()
    if not words:
        return False
    endings = tuple(e for pack in lang.packs() for e in pack.lexicon.disease_endings)
    return bool(endings) and bool(_disease_like(endings).search(words[-1]))


def _grams(text: str) -> set[str]:
    key = match_key(text)
    if has_cjk(key):
        key = key.replace(" ", "")
        return set(key) | {key[i : i + 2] for i in range(len(key) - 1)}
    padded = f" {key} "
    return {padded[i : i + 2] for i in range(len(padded) - 1)}


def char_similarity(a: str, b: str) -> float:
    """Dice coefficient of character bigrams (CJK: characters and bigrams) of two strings."""
    ga, gb = _grams(a), _grams(b)
    return 2 * len(ga & gb) / (len(ga) + len(gb)) if ga and gb else 0.0


def rescore(
    surface: str,
    candidates: list[Candidate],
    vocab: Vocabulary,
    char_weight: float,
    disease_bonus: float,
) -> tuple[str | None, float]:
    """The best candidate after re-scoring (see the module docstring) and its score."""
    disease_like = disease_bonus > 0 and is_disease_like(surface)
    best: tuple[str | None, float] = (None, 0.0)
    for cand in candidates:
        score = cand.cosine
        if char_weight > 0:
            entity = vocab.entities.get(cand.mesh_id)
            names = [n for ns in entity.names.values() for n in ns] if entity else [cand.name]
            chars = max(char_similarity(surface, n) for n in [cand.name, *names[:50]])
            score = (1 - char_weight) * cand.cosine + char_weight * chars
        if disease_like and vocab.category(cand.mesh_id) == DISEASE:
            score += disease_bonus
        if score > best[1]:
            best = (cand.mesh_id, score)
    return best


def index_names(vocab: Vocabulary, english_synonyms: int = 2) -> tuple[list[str], list[str]]:
    """(names, mesh_ids) the index embeds, in a stable order."""
    names: list[str] = []
    ids: list[str] = []
    others = [code for code in lang.codes() if code != lang.PIVOT]  # every name in each of these
    for mesh_id in sorted(vocab.entities):
        entity = vocab.entities[mesh_id]
        seen: set[str] = set()
        english = [entity.name, *entity.names.get(lang.PIVOT, [])]
        picked = [n for n in english if n and "," not in n]
        chosen = picked[: 1 + english_synonyms]
        for code in others:
            chosen += entity.names.get(code, [])
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
        self.unknown = l2_normalise(self.embedder.embed_dense([UNKNOWN_PROBE]))[0]
        blind = self.matrix @ self.unknown >= UNKNOWN_COSINE
        self.matrix[blind] = 0.0  # names the embedder cannot read match nothing
        self.unreadable_names = int(blind.sum())

    def _load_or_embed(self, vocab: Vocabulary, names: list[str], cache_dir: str | Path | None) -> NDArray[np.float32]:
        key = hashlib.sha256(
            "\n".join([str(vocab.manifest.get("fingerprint", "")), self.embedder.name, *names]).encode()
        ).hexdigest()[:16]
        path = Path(cache_dir) / f"dense_names-{key}.npz" if cache_dir else None
        if path is not None and path.is_file():
            return np.asarray(np.load(path)["matrix"], dtype=np.float32)
        log.info("embedding %d MeSH names for dense linking (%s)", len(names), self.embedder.name)
        matrix = l2_normalise(self.embedder.embed_dense(names))
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".partial.npz")
            np.savez(tmp, matrix=matrix)
            tmp.replace(path)
        return matrix

    def _scores(self, surfaces: list[str]) -> NDArray[np.float32]:
        """Cosines of each surface with every name (all 0 for a surface the embedder cannot read)."""
        queries = l2_normalise(self.embedder.embed_dense(list(surfaces)))
        queries[queries @ self.unknown >= UNKNOWN_COSINE] = 0.0
        return np.asarray(queries @ self.matrix.T, dtype=np.float32)

    def search(self, surfaces: list[str]) -> list[tuple[str | None, float]]:
        """The nearest name's MeSH ID and its cosine, per surface."""
        if not surfaces or not len(self.ids):
            return [(None, 0.0) for _ in surfaces]
        scores = self._scores(surfaces)
        best = scores.argmax(axis=1)
        return [(self.ids[int(j)], float(scores[i, j])) if scores[i].any() else (None, 0.0) for i, j in enumerate(best)]

    def candidates(self, surfaces: list[str], k: int = 10) -> list[list[Candidate]]:
        """Up to ``k`` distinct descriptors per surface, by their best name's cosine (descending)."""
        if not surfaces or not len(self.ids):
            return [[] for _ in surfaces]
        scores = self._scores(surfaces)
        width = min(len(self.ids), 4 * k)
        out: list[list[Candidate]] = []
        for row in scores:
            if not row.any():
                out.append([])
                continue
            top = np.argpartition(-row, width - 1)[:width]
            picked: dict[str, Candidate] = {}
            for j in sorted(top.tolist(), key=lambda j: (-float(row[j]), j)):
                mesh_id = self.ids[j]
                if mesh_id not in picked:
                    picked[mesh_id] = Candidate(mesh_id, self.names[j], float(row[j]))
                if len(picked) == k:
                    break
            out.append(list(picked.values()))
        return out
