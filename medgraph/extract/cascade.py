"""Cascade NER: the gazetteer's mentions, plus GLiNER and token-classification spans the linker links.

Input: ``NerConfig`` (``kind: cascade``; local model directories), then ``merge_many(texts,
languages, mentions, linker)`` over a batch of chunks, where ``mentions`` are the dictionary
mentions already found in each text (gazetteer + compose candidates, ``EntityExtractor``).
Output: per text, the mentions after merging, sorted by offset; a model span that is kept carries
the linker's MeSH ID, category and score and ``method = "<source>+<link method>"`` (``gliner+exact``,
``token+dense`` ...).

Passes (each batched over the whole batch of chunks): GLiNER with the prompt labels of
``ner.gliner_labels`` (texts in ``ner.gliner_languages``; spans at ``gliner_threshold`` or more) and
the token-classification model of the text's language (``ner.token_model_paths``; spans whose mean
tag probability reaches ``token_threshold``). Each label maps to the graph categories it may link
to (``gliner_labels`` / ``token_labels``: prompt label or tag type, case-folded -> categories); a
span with an unmapped label is dropped. Spans are trimmed of surrounding punctuation.

Merge rules (the dictionary is precise, the models add recall; the linker arbitrates):
1. A model span inside a dictionary mention, equal to one, or crossing a mention's boundary adds
   nothing: the gazetteer's link stands (a crossing span is a boundary disagreement, which the
   exact dictionary match wins).
2. Every other span is linked with the full ``Linker`` cascade in the chunk's language (dictionary
   steps, TF-IDF and, with ``linking.dense``, the dense step: SapBERT-XLMR through the encoder
   tier). It is kept only when it links at ``model_link_min_score`` or more AND the linked
   descriptor's category is one of its label's categories (a "drug" span linked to a disease is a
   wrong link or a wrong label, and either way not evidence).
3. Kept spans that overlap each other: the longer wins, then the higher model probability (both
   models may propose the same or nested spans).
4. A span that contains dictionary mentions (strictly longer, rule 1 excludes the rest) replaces
   them only when it links to a descriptor none of them has: ``type 2 diabetes mellitus`` (Diabetes
   Mellitus, Type 2) replaces its part ``diabetes mellitus``; ``metastatic breast cancer``, which
   links to Breast Neoplasms like its part ``breast cancer``, leaves the tighter gazetteer mention.
Abbreviation definitions (``EntityExtractor``) are applied after the merge and still win.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from medgraph.config.models import NerConfig
from medgraph.extract.spans import ModelSpan, resolve_overlaps, trim
from medgraph.schemas import Mention

if TYPE_CHECKING:
    from medgraph.link.linker import Linker, LinkResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Candidate:
    row: int
    span: ModelSpan
    categories: tuple[str, ...]
    contained: frozenset[str | None]  # MeSH IDs of the dictionary mentions inside the span


def _inside(m: Mention, span: ModelSpan) -> bool:
    return span.start <= m.start and m.end <= span.end


def _overlaps(m: Mention, span: ModelSpan) -> bool:
    return m.start < span.end and span.start < m.end


class CascadeNER:
    """The model passes of ``ner.kind: cascade`` and the merge with the dictionary's mentions."""

    def __init__(self, cfg: NerConfig, gliner: Any = None, token: Any = None) -> None:
        """``gliner`` / ``token``: ready passes (tests); by default built from ``cfg``'s paths."""
        self.cfg = cfg
        if gliner is None and cfg.gliner_model_path:
            from medgraph.extract.gliner_ner import GlinerNER

            gliner = GlinerNER(
                cfg.gliner_model_path,
                list(cfg.gliner_labels),
                cfg.gliner_threshold,
                cfg.batch_size,
                cfg.device,
            )
        if token is None and cfg.token_model_paths:
            from medgraph.extract.token_ner import TokenClassifierNER

            token = TokenClassifierNER(
                {str(k): v for k, v in cfg.token_model_paths.items()},
                cfg.batch_size,
                cfg.max_length,
                cfg.device,
            )
        self.gliner, self.token = gliner, token
        self._categories = {
            "gliner": {k.casefold(): v for k, v in cfg.gliner_labels.items()},
            "token": {k.casefold(): v for k, v in cfg.token_labels.items()},
        }
        self.stats: Counter[str] = Counter()  # spans, candidates, linked, kept, replaced (since built)

    def predict(self, texts: Sequence[str], languages: Sequence[str]) -> list[list[ModelSpan]]:
        """Both passes over the batch, thresholded and trimmed; spans per text (may overlap)."""
        out: list[list[ModelSpan]] = [[] for _ in texts]
        if self.gliner is not None:
            rows = [i for i, lang in enumerate(languages) if lang in self.cfg.gliner_languages]
            for i, spans in zip(rows, self.gliner.predict([texts[i] for i in rows]), strict=True):
                out[i].extend(s for s in spans if s.score >= self.cfg.gliner_threshold)
        if self.token is not None:
            for i, spans in enumerate(self.token.predict(texts, languages)):
                out[i].extend(s for s in spans if s.score >= self.cfg.token_threshold)
        trimmed = [[t for s in spans if (t := trim(texts[i], s)) is not None] for i, spans in enumerate(out)]
        self.stats["spans"] += sum(len(s) for s in trimmed)
        return trimmed

    def _candidates(self, row: int, spans: list[ModelSpan], mentions: list[Mention]) -> list[_Candidate]:
        """Spans that may add a mention (rule 1) and have a mapped label."""
        found = []
        for span in spans:
            categories = self._categories[span.source].get(span.label.casefold())
            if not categories:
                continue
            overlapped = [m for m in mentions if _overlaps(m, span)]
            if any(not _inside(m, span) or (m.start, m.end) == (span.start, span.end) for m in overlapped):
                continue
            found.append(_Candidate(row, span, categories, frozenset(m.mesh_id for m in overlapped)))
        return found

    def _link(
        self, texts: Sequence[str], languages: Sequence[str], candidates: list[_Candidate], linker: Linker
    ) -> dict[tuple[str, str], LinkResult]:
        """Each distinct (language, surface) linked once, one ``link_many`` call per language."""
        by_language: dict[str, list[str]] = {}
        for c in candidates:
            surfaces = by_language.setdefault(languages[c.row], [])
            surface = texts[c.row][c.span.start : c.span.end]
            if surface not in surfaces:
                surfaces.append(surface)
        results: dict[tuple[str, str], LinkResult] = {}
        for lang, surfaces in by_language.items():
            for surface, res in zip(surfaces, linker.link_many(surfaces, lang), strict=True):
                results[(lang, surface)] = res
        return results

    def merge_many(
        self,
        texts: Sequence[str],
        languages: Sequence[str],
        mentions: Sequence[list[Mention]],
        linker: Linker,
    ) -> list[list[Mention]]:
        """The dictionary mentions of each text merged with the model spans (module docstring)."""
        spans = self.predict(texts, languages)
        candidates = [c for i in range(len(texts)) for c in self._candidates(i, spans[i], mentions[i])]
        self.stats["candidates"] += len(candidates)
        links = self._link(texts, languages, candidates, linker)
        accepted: list[list[tuple[ModelSpan, LinkResult]]] = [[] for _ in texts]
        for c in candidates:
            res = links[(languages[c.row], texts[c.row][c.span.start : c.span.end])]
            if res.mesh_id is None or res.score < self.cfg.model_link_min_score:
                continue
            self.stats["linked"] += 1
            if res.category in c.categories and res.mesh_id not in c.contained:  # rules 2 and 4
                accepted[c.row].append((c.span, res))
        out = []
        for i, text in enumerate(texts):
            result = {span: res for span, res in accepted[i]}
            kept = resolve_overlaps(list(result))
            merged = [m for m in mentions[i] if not any(_inside(m, s) for s in kept)]
            self.stats["kept"] += len(kept)
            self.stats["replaced"] += len(mentions[i]) - len(merged)
            for s in kept:
                res = result[s]
                merged.append(
                    Mention(
                        s.start,
                        s.end,
                        text[s.start : s.end],
                        res.mesh_id,
                        res.category,
                        f"{s.source}+{res.method}",
                        res.score,
                    )
                )
            out.append(sorted(merged, key=lambda m: (m.start, m.end)))
        return out
