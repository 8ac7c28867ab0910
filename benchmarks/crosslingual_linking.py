"""Term-level cross-lingual linking: German and Chinese disease names → the MeSH ID of their English name.

Input: the disease tables of ``faker-healthcare-provider`` (MIT, PyPI; ``pip install
faker-healthcare-provider``, in the ``dev`` extra): 158 diseases named in English, German and
Chinese, keyed by ICD-10 code. The gold MeSH ID of a disease is what the full linker (dictionary
cascade + TF-IDF, no dense step) gives its English name; diseases whose English name links to
nothing are left out (``n_gold`` says how many remain).

Output: JSON on stdout: per language (de, zh; en as the sanity row), Acc@1 and coverage (share
linked to any ID) for the dictionary cascade without the compose step (``linking.compose``), the
whole dictionary cascade, and that with the dense cross-lingual fallback (``linking.dense``), in the
same run, plus the per-language vocabulary coverage (MeSH IDs with at
least one name) and the misses of the dense run.

    python benchmarks/crosslingual_linking.py [--config configs/local.yaml] [--threshold 0.8]

``--dev``: instead of the faker names, tune the dense step on a development set held out from the
vocabulary (``medgraph.link.devset``: 20% of the descriptors with German/Chinese names lose them;
those names are the queries) and print dev Acc@1 per language for a grid of ``dense_threshold``,
``dense_char_weight`` and ``dense_disease_bonus`` (best first). The config's values come from there.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.config import load_config  # noqa: E402
from medgraph.link.linker import Linker  # noqa: E402
from medgraph.ontology.build import load_or_build  # noqa: E402

MODULES = {"en": "faker_healthcare.disease_correlations", "de": "faker_healthcare.de_DE.disease_correlations",
           "zh": "faker_healthcare.zh_CN.disease_correlations"}


def disease_names() -> dict[str, dict[str, str]]:
    """ICD-10 code → {language: disease name}."""
    out: dict[str, dict[str, str]] = {}
    for lang, module in MODULES.items():
        table = importlib.import_module(module).DISEASE_CORRELATIONS
        for name, data in table.items():
            out.setdefault(str(data["icd10"]), {})[lang] = name
    return {code: names for code, names in out.items() if len(names) == len(MODULES)}


def evaluate(linker: Linker, gold: dict[str, str], names: dict[str, dict[str, str]], lang: str) -> dict[str, Any]:
    codes = sorted(gold)
    results = linker.link_many([names[c][lang] for c in codes], lang)
    hits = [r.mesh_id == gold[c] for c, r in zip(codes, results, strict=True)]
    linked = [r.mesh_id is not None for r in results]
    misses = [
        {"term": names[c][lang], "gold": gold[c], "got": r.mesh_id, "method": r.method, "score": r.score}
        for c, r, hit in zip(codes, results, hits, strict=True) if not hit
    ]
    methods: dict[str, int] = {}
    for r, hit in zip(results, hits, strict=True):
        if hit:
            methods[r.method] = methods.get(r.method, 0) + 1
    return {"acc@1": round(sum(hits) / len(codes), 4), "coverage": round(sum(linked) / len(codes), 4),
            "correct_by_method": methods, "misses": misses}


def tune_on_dev(vocab: Any, linking: Any, seed: int) -> dict[str, Any]:
    """Dev Acc@1 of the cascade over a grid of dense settings (``--dev``)."""
    from medgraph.link import devset

    dev_vocab, queries = devset.held_out(vocab, 0.2, seed)
    linker = Linker(dev_vocab, linking.model_copy(update={"dense": True}))
    run = devset.prepare(linker, queries, linking.dense_top_k)
    rows = devset.grid(run, dev_vocab, [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9], [0.0, 0.2, 0.35, 0.5],
                       [0.0, 0.03, 0.06, 0.1])
    langs: dict[str, int] = {}
    for lang, _, _ in queries:
        langs[lang] = langs.get(lang, 0) + 1
    current = devset.accuracy(run, dev_vocab, linking)
    return {"held_out_ids": dev_vocab.manifest["held_out"]["ids"], "queries": langs,
            "dictionary_only": devset.accuracy(run, dev_vocab, linking.model_copy(update={"dense_threshold": 1.0,
                                                                                           "dense_disease_bonus": 0.0})),
            "config": {"settings": {k: getattr(linking, k) for k in
                                    ("dense_threshold", "dense_char_weight", "dense_disease_bonus")}, "acc@1": current},
            "best": rows[:10]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument("--threshold", type=float, default=None, help="dense_threshold (default: the config's)")
    ap.add_argument("--dev", action="store_true", help="tune on held-out vocabulary names (no test terms)")
    ap.add_argument("--seed", type=int, default=0, help="--dev: random seed of the held-out descriptors")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="config override, e.g. linking.dense_embedder=e5 (repeatable)")
    args = ap.parse_args()
    cfg = load_config(args.config, args.set)
    vocab = load_or_build(cfg.vocabulary)
    if args.dev:
        print(json.dumps(tune_on_dev(vocab, cfg.linking, args.seed), indent=2, ensure_ascii=False))
        return
    names = disease_names()
    dictionary = Linker(vocab, cfg.linking.model_copy(update={"dense": False}))
    gold = {}
    for code, n in names.items():
        mesh_id = dictionary.link(n["en"], "en").mesh_id
        if mesh_id:
            gold[code] = mesh_id
    update: dict[str, Any] = {"dense": True}
    if args.threshold is not None:
        update["dense_threshold"] = args.threshold
    dense = Linker(vocab, cfg.linking.model_copy(update=update))
    no_compose = Linker(vocab, cfg.linking.model_copy(update={"dense": False, "compose": False}))
    start = time.perf_counter()
    dense.dense  # noqa: B018 - build (or load) the name index outside the timed comparison
    index_s = time.perf_counter() - start
    out: dict[str, Any] = {
        "n_diseases": len(names), "n_gold": len(gold), "dense_threshold": dense.cfg.dense_threshold,
        "dense_embedder": dense.cfg.dense_embedder, "dense_index": {"names": len(dense.dense.ids), "build_s": round(index_s, 1)},
        "vocabulary_ids_with_name": vocab.manifest.get("ids_with_name_by_lang"), "languages": {},
    }
    for lang in ("de", "zh", "en"):
        d, x = evaluate(dictionary, gold, names, lang), evaluate(dense, gold, names, lang)
        c = evaluate(no_compose, gold, names, lang)
        out["languages"][lang] = {
            "dictionary_without_compose": {k: v for k, v in c.items() if k != "misses"},
            "dictionary": {k: v for k, v in d.items() if k != "misses"},
            "dictionary+dense": {k: v for k, v in x.items() if k != "misses"},
            "misses_dictionary+dense": x["misses"][:15],
        }
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
