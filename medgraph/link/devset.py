"""A development set for cross-lingual linking, held out from the vocabulary itself.

Input: a built ``Vocabulary``. Output: ``held_out(vocab, fraction, seed, languages)`` →
``(dev_vocab, queries)``: a random ``fraction`` of the descriptors that have names in ``languages``
(by default every registered language but the pivot: German, Chinese) lose those names (terms, entity names) in ``dev_vocab``; ``queries`` are the removed
``(lang, term, mesh_id)`` triples. Linking the queries against ``dev_vocab`` measures how well the
cascade reaches a descriptor whose name in that language it has never seen, which is what the
dense step's threshold and re-scoring weights are tuned on (``grid``), instead of on test terms.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from medgraph import lang
from medgraph.config.models import LinkingConfig
from medgraph.link.dense import Candidate, rescore
from medgraph.ontology.vocabulary import Vocabulary

Query = tuple[str, str, str]  # (lang, term, gold MeSH ID)


def held_out(
    vocab: Vocabulary, fraction: float = 0.2, seed: int = 0, languages: Sequence[str] | None = None
) -> tuple[Vocabulary, list[Query]]:
    """The vocabulary minus the ``languages`` names (default: every registered language but the
    pivot) of a random ``fraction`` of their descriptors."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must be in (0, 1), got {fraction}")
    langs = set(languages) if languages is not None else {c for c in lang.codes() if c != lang.PIVOT}
    candidates = sorted(m for m, e in vocab.entities.items() if any(e.names.get(code) for code in langs))
    rng = random.Random(seed)
    held = set(rng.sample(candidates, round(fraction * len(candidates))))
    queries = sorted({(t[1], t[0], t[2]) for t in vocab.terms if t[2] in held and t[1] in langs})
    terms = [t for t in vocab.terms if not (t[2] in held and t[1] in langs)]
    entities = dict(vocab.entities)
    for mesh_id in held:
        e = entities[mesh_id]
        entities[mesh_id] = replace(e, names={k: v for k, v in e.names.items() if k not in langs})
    manifest = dict(vocab.manifest, held_out={"fraction": fraction, "seed": seed, "ids": len(held)})
    manifest["fingerprint"] = f"{vocab.manifest.get('fingerprint', '')}-dev{seed}-{fraction}"
    dev = Vocabulary(entities, terms, manifest, directory=vocab.directory, general_words=vocab.general_words)
    return dev, queries


@dataclass
class DevRun:
    """Cascade results without the dense step, plus each miss's dense candidates (computed once)."""

    queries: list[Query]
    before_dense: list[str | None]  # dictionary cascade + TF-IDF, no dense, no head word
    head: list[str | None]  # the head-word step (after dense) for the misses
    candidates: dict[int, list[Candidate]]


def prepare(linker: Any, queries: list[Query], k: int) -> DevRun:
    """Run a dense-enabled ``Linker`` over the queries up to the dense step."""
    before: list[str | None] = []
    head: list[str | None] = []
    for language, term, _ in queries:
        results: list[Any] = [linker.rules(term, language)]
        linker.fuzzy([term], results, language)
        before.append(results[0].mesh_id if results[0] else None)
        h = linker.head_word(term) if results[0] is None else None
        head.append(h.mesh_id if h else None)
    missing = [i for i, m in enumerate(before) if m is None]
    cands = linker.dense.candidates([queries[i][1] for i in missing], k)
    return DevRun(queries, before, head, dict(zip(missing, cands, strict=True)))


def accuracy(run: DevRun, vocab: Vocabulary, cfg: LinkingConfig) -> dict[str, float]:
    """Acc@1 per language of the full cascade under ``cfg``'s dense settings."""
    hits: dict[str, list[bool]] = {}
    for i, (language, term, gold) in enumerate(run.queries):
        got = run.before_dense[i]
        if got is None:
            mesh_id, score = rescore(term, run.candidates[i], vocab, cfg.dense_char_weight, cfg.dense_disease_bonus)
            got = mesh_id if mesh_id is not None and score >= cfg.dense_threshold else run.head[i]
        hits.setdefault(language, []).append(got == gold)
    return {language: round(sum(h) / len(h), 4) for language, h in sorted(hits.items())}


def grid(
    run: DevRun,
    vocab: Vocabulary,
    thresholds: Sequence[float],
    char_weights: Sequence[float],
    bonuses: Sequence[float],
) -> list[dict[str, Any]]:
    """Dev Acc@1 for every setting, best mean over languages first."""
    rows = []
    for t, w, b in itertools.product(thresholds, char_weights, bonuses):
        cfg = LinkingConfig(dense=True, dense_threshold=t, dense_char_weight=w, dense_disease_bonus=b)
        acc = accuracy(run, vocab, cfg)
        rows.append({"dense_threshold": t, "dense_char_weight": w, "dense_disease_bonus": b, "acc@1": acc,
                     "mean": round(sum(acc.values()) / max(len(acc), 1), 4)})
    return sorted(rows, key=lambda r: -float(r["mean"]))
