"""Term-level cross-lingual linking: German and Chinese disease names → the MeSH ID of their English name.

Input: the disease tables of ``faker-healthcare-provider`` (MIT, PyPI; ``pip install
faker-healthcare-provider``, in the ``dev`` extra): 158 diseases named in English, German and
Chinese, keyed by ICD-10 code. The gold MeSH ID of a disease is what the full linker (dictionary
cascade + TF-IDF, no dense step) gives its English name; diseases whose English name links to
nothing are left out (``n_gold`` says how many remain).

Output: JSON on stdout: per language (de, zh; en as the sanity row), Acc@1 and coverage (share
linked to any ID) for the dictionary cascade alone and with the dense cross-lingual fallback
(``linking.dense``), in the same run, plus the per-language vocabulary coverage (MeSH IDs with at
least one name) and the misses of the dense run.

    python benchmarks/crosslingual_linking.py [--config configs/local.yaml] [--threshold 0.8]
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument("--threshold", type=float, default=None, help="dense_threshold (default: the config's)")
    args = ap.parse_args()
    cfg = load_config(args.config, [])
    vocab = load_or_build(cfg.vocabulary)
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
        out["languages"][lang] = {
            "dictionary": {k: v for k, v in d.items() if k != "misses"},
            "dictionary+dense": {k: v for k, v in x.items() if k != "misses"},
            "misses_dictionary+dense": x["misses"][:15],
        }
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
