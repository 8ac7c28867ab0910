"""Linking benchmark on PubTator files (BC5CDR, NCBI-disease, hand-written EN/DE fixtures).

Input: a PubTator file, a vocabulary (``--vocab DIR``, or built from ``--config`` and cached at
its ``vocabulary.path``), optional ``--language`` (else detected per document with
``medgraph.ingest.text.detect_language``: mostly CJK → zh, else an offline n-gram model, en when
unsure).
Output (``--json``): ``n_mentions``, ``acc_at_1``, ``n_in_vocab``, ``acc_at_1_in_vocab``,
``e2e_precision``, ``e2e_recall``, ``e2e_f1``, ``methods`` and ``baseline`` with the same keys for
an exact-match dictionary baseline (no mined forms, no normalisation, abbreviations or TF-IDF).

Gold rules:
- Annotations without an ID (``-1``) are ignored, and so are predictions on their spans.
- Composite gold (``D001943|D010051``): a prediction is correct when it is one of the gold IDs.
- A mention is "in vocabulary" when at least one gold ID is a vocabulary descriptor; OMIM-only
  or supplementary-concept-only gold counts in ``acc_at_1`` (always wrong) but not in ``_in_vocab``.
- End-to-end: predicted (span, ID) pairs from ``EntityExtractor`` against gold; a hit needs the
  exact span and a gold ID. Predictions are restricted to the categories the corpus annotates
  (``Chemical`` → Drug; disease types → Disease, Symptom; other types → all categories).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from medgraph import schemas as cat  # the category names
from medgraph.config.models import LinkingConfig, NerConfig
from medgraph.ingest.pubtator import PubtatorDoc, parse_pubtator
from medgraph.ingest.text import detect_language
from medgraph.link.extractor import EntityExtractor
from medgraph.link.linker import Linker
from medgraph.ontology.build import resolve_vocabulary
from medgraph.ontology.vocabulary import Vocabulary

_TYPE_CATEGORIES = {"chemical": {cat.DRUG}, "drug": {cat.DRUG}}
_DISEASE_TYPES = {"disease", "specificdisease", "diseaseclass", "modifier", "compositemention"}

BASELINE_LINKING = LinkingConfig(tfidf=False, abbreviations=False, normalise=False, composites=False)
BASELINE_NER = NerConfig(plural_variants=False, british_spellings=False)


def annotated_categories(docs: list[PubtatorDoc]) -> set[str]:
    out: set[str] = set()
    for doc in docs:
        for ann in doc.annotations:
            t = ann.type.lower()
            if t in _DISEASE_TYPES:
                out |= {cat.DISEASE, cat.SYMPTOM}
            else:
                out |= _TYPE_CATEGORIES.get(t, set(cat.ALL_CATEGORIES))
    return out


def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 0.0


def linking_scores(docs: list[PubtatorDoc], linker: Linker, language: str | None) -> dict[str, Any]:
    """Acc@1 over gold mentions (surface given), with the document as abbreviation context."""
    n = ok = n_in = ok_in = 0
    methods: Counter[str] = Counter()
    for doc in docs:
        anns = [a for a in doc.annotations if a.ids]
        lang = language or detect_language(doc.text)
        for ann, res in zip(anns, linker.link_many([a.surface for a in anns], lang, doc.text), strict=True):
            hit = res.mesh_id in ann.ids
            in_vocab = any(i in linker.vocab for i in ann.ids)
            n, ok = n + 1, ok + hit
            n_in, ok_in = n_in + in_vocab, ok_in + (hit and in_vocab)
            methods[res.method] += 1
    return {
        "n_mentions": n,
        "acc_at_1": _ratio(ok, n),
        "n_in_vocab": n_in,
        "acc_at_1_in_vocab": _ratio(ok_in, n_in),
        "methods": dict(sorted(methods.items())),
    }


def e2e_scores(
    docs: list[PubtatorDoc], extractor: EntityExtractor, language: str | None, categories: set[str]
) -> dict[str, Any]:
    """Exact-span + ID precision/recall/F1 of NER+linking on the document text."""
    tp = n_pred = n_gold = 0
    for doc in docs:
        gold = {(a.start, a.end): set(a.ids) for a in doc.annotations if a.ids}
        no_id = {(a.start, a.end) for a in doc.annotations if not a.ids}
        n_gold += len(gold)
        for m in extractor.extract(doc.text, language or detect_language(doc.text)):
            span = (m.start, m.end)
            if m.category not in categories or span in no_id:
                continue
            n_pred += 1
            tp += m.mesh_id in gold.get(span, set())
    p, r = _ratio(tp, n_pred), _ratio(tp, n_gold)
    f1 = round(2 * p * r / (p + r), 4) if p + r else 0.0
    return {
        "e2e_tp": tp,
        "e2e_predicted": n_pred,
        "e2e_gold": n_gold,
        "e2e_precision": p,
        "e2e_recall": r,
        "e2e_f1": f1,
    }


def run_benchmark(
    docs: list[PubtatorDoc],
    vocab: Vocabulary,
    ner_cfg: NerConfig,
    link_cfg: LinkingConfig,
    language: str | None = None,
) -> dict[str, Any]:
    """System and baseline scores on the same documents."""
    categories = annotated_categories(docs)
    t0 = time.perf_counter()
    extractor = EntityExtractor(vocab, ner_cfg, link_cfg)
    result = linking_scores(docs, extractor.linker, language)
    result |= e2e_scores(docs, extractor, language, categories)
    result["seconds"] = round(time.perf_counter() - t0, 2)
    base_vocab = vocab.without_mined()
    base = EntityExtractor(base_vocab, BASELINE_NER, BASELINE_LINKING)
    result["baseline"] = linking_scores(docs, base.linker, language) | e2e_scores(
        docs, base, language, categories
    )
    result["e2e_categories"] = sorted(categories)
    result["n_docs"] = len(docs)
    return result


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m medgraph.eval link", description=__doc__.split("\n")[0])
    p.add_argument("--pubtator", required=True, help="PubTator file with gold mentions")
    p.add_argument("--vocab", help="directory written by Vocabulary.save")
    p.add_argument("--config", help="config YAML (default: configs/local.yaml when present)")
    p.add_argument("--set", action="append", default=[], dest="overrides", help="a.b=c override")
    p.add_argument("--language", help="force a language for every document (en, de, zh)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    vocab, cfg = resolve_vocabulary(args.vocab, args.config, args.overrides)
    docs = parse_pubtator(Path(args.pubtator).read_text(encoding="utf-8"))
    result = run_benchmark(docs, vocab, cfg.ner, cfg.linking, args.language)
    result["pubtator"] = args.pubtator
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        base = result["baseline"]
        for key in ("acc_at_1", "acc_at_1_in_vocab", "e2e_precision", "e2e_recall", "e2e_f1"):
            print(f"{key:20s} {result[key]:.4f}   baseline {base[key]:.4f}")
        print(f"mentions {result['n_mentions']} (in vocabulary {result['n_in_vocab']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
