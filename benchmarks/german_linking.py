"""German offline linking before / after the German morphology, forms and abbreviation table.

"Before" is the same code and vocabulary with the German additions switched off: the gazetteer
without its German-only keys (``GazetteerNER(german_keys=False)``: no inflected German names, no
German spellings of English names, no German abbreviation table) and the linker with
``german_morphology=False`` (no abbreviation table, no generated forms, the one-ending stemmer
instead of Snowball). "After" is the default. With ``--baseline-config FILE``, "before" is instead the
same default extractor on the vocabulary that config builds (e.g. the configured sources without one
of them), so a vocabulary source is measured on its own.

Two parts, both printed as JSON:

- ``letters`` (default): the GraSCCo German clinical letters (``german_grascco/grascco_phi.jsonl``
  under ``$MEDGRAPH_SHARED_DATA``, default ``../shared/data``), extracted with ``EntityExtractor``
  (gazetteer + second NER stage + in-document abbreviations): linked mentions and distinct MeSH
  IDs before / after, by method, and a seeded random sample of the mentions only "after" has (a new
  span, or the same span with another ID), each with its context, for reading by hand
  (``--sample``; ``--sample-out FILE`` writes it as TSV).
- ``--dev``: held-out German vocabulary names (``medgraph.link.devset.held_out``: a random 20% of
  the descriptors with German names lose them; seeds 0 and 1), linked by the dictionary cascade
  without the dense step, Acc@1 before / after; ``inflected`` links the same names in an inflected
  form (plural of the last word, ``-en`` on adjectives) to measure the inflection handling. No
  public benchmark's test split is read.
- ``--spans``: the letters' capitalised words that no mention covers, each linked as a given span
  (as gold mentions or the model tier's spans are) without and with the general dictionary words
  (``linking.general_words``); the spans whose link changes, the most frequent, and a seeded sample
  with both links and the context for reading by hand.

    python benchmarks/german_linking.py [--config configs/local.yaml] [--baseline-config FILE]
        [--dev | --spans] [--sample 60] [--sample-seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.config import load_config  # noqa: E402
from medgraph.extract.ner import GazetteerNER  # noqa: E402
from medgraph.lang.de.morphology import german_inflections  # noqa: E402
from medgraph.link import EntityExtractor  # noqa: E402
from medgraph.link.devset import held_out  # noqa: E402
from medgraph.link.linker import Linker  # noqa: E402
from medgraph.ontology.build import load_or_build  # noqa: E402
from medgraph.ontology.vocabulary import Vocabulary  # noqa: E402
from medgraph.schemas import Mention  # noqa: E402


def extractors(
    vocab: Vocabulary, cfg: Any, baseline: tuple[Vocabulary, Any] | None = None
) -> tuple[EntityExtractor, EntityExtractor]:
    after = EntityExtractor(vocab, cfg.ner, cfg.linking)
    if baseline is not None:
        base_vocab, base_cfg = baseline
        return EntityExtractor(base_vocab, base_cfg.ner, base_cfg.linking), after
    before = EntityExtractor(vocab, cfg.ner, cfg.linking)
    before.ner = GazetteerNER(vocab, cfg.ner, german_keys=False)
    before.linker = Linker(vocab, cfg.linking, german_morphology=False)
    return before, after


def letters(root: Path) -> list[dict[str, Any]]:
    with open(root / "german_grascco" / "grascco_phi.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _context(text: str, m: Mention, width: int = 40) -> str:
    left = text[max(0, m.start - width) : m.start].replace("\n", " ")
    right = text[m.end : m.end + width].replace("\n", " ")
    return f"{left}[[{m.surface}]]{right}"


def _name(vocab: Vocabulary, mesh_id: str | None) -> str:
    entity = vocab.get(mesh_id or "")
    return entity.name if entity else str(mesh_id)


def measure_letters(
    vocab: Vocabulary,
    cfg: Any,
    root: Path,
    sample: int,
    seed: int,
    baseline: tuple[Vocabulary, Any] | None = None,
) -> dict[str, Any]:
    t0 = time.perf_counter()
    before, after = extractors(vocab, cfg, baseline)
    build_s = time.perf_counter() - t0
    docs = letters(root)
    runs: dict[str, list[list[Mention]]] = {}
    seconds: dict[str, float] = {}
    for name, ex in (("before", before), ("after", after)):
        ex.extract(docs[0].get("text") or "", "de")  # lazy indices outside the timing
        start = time.perf_counter()
        runs[name] = [[m for m in ex.extract(d.get("text") or "", "de") if m.mesh_id] for d in docs]
        seconds[name] = round(time.perf_counter() - start, 2)
    new: list[tuple[str, str, Mention]] = []
    for doc, old, cur in zip(docs, runs["before"], runs["after"], strict=True):
        seen = {(m.start, m.end, m.mesh_id) for m in old}
        new += [
            (doc.get("id") or doc.get("doc_id") or "", doc.get("text") or "", m)
            for m in cur
            if (m.start, m.end, m.mesh_id) not in seen
        ]
    rng = random.Random(seed)
    picked = rng.sample(new, min(sample, len(new)))
    rows = []
    for doc_id, text, m in picked:
        e = vocab.get(m.mesh_id or "")
        rows.append(
            {
                "doc": doc_id,
                "surface": m.surface,
                "mesh_id": m.mesh_id,
                "name": e.name if e else "",
                "method": m.method,
                "context": _context(text, m),
            }
        )
    new_counts = Counter(f"{m.surface} -> {_name(vocab, m.mesh_id)}" for _, _, m in new)
    return {
        "docs": len(docs),
        "chars": sum(len(d.get("text") or "") for d in docs),
        "mentions": {k: sum(map(len, v)) for k, v in runs.items()},
        "distinct_ids": {k: len({m.mesh_id for ms in v for m in ms}) for k, v in runs.items()},
        "methods": {
            k: dict(Counter(m.method for ms in v for m in ms).most_common()) for k, v in runs.items()
        },
        "new_mentions": len(new),
        "new_distinct": len(new_counts),
        "extract_seconds": seconds,
        "extractor_build_seconds_both": round(build_s, 1),
        "sample_seed": seed,
        "sample": rows,
        "new": new_counts.most_common(),
    }


def _inflected(term: str) -> str | None:
    """One inflected form: ``-en`` on adjectives and the last word's first plural/genitive form."""
    forms: list[str] = german_inflections(term)
    want_adj = len(term.split()) > 1
    for f in forms:
        if not want_adj or all(w.endswith("en") for w in f.split()[:-1]):
            return f
    return forms[0] if forms else None


def measure_dev(vocab: Vocabulary, cfg: Any, seeds: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    link_cfg = cfg.linking.model_copy(update={"dense": False})
    for seed in seeds:
        dev_vocab, queries = held_out(vocab, 0.2, seed, ("de",))
        sets = {"names": [(t, gold) for _, t, gold in queries]}
        sets["inflected"] = [(f, gold) for t, gold in sets["names"] if (f := _inflected(t))]
        res: dict[str, Any] = {"queries": {k: len(v) for k, v in sets.items()}}
        for name, german in (("before", False), ("after", True)):
            linker = Linker(dev_vocab, link_cfg, german_morphology=german)
            for set_name, items in sets.items():
                got = [r.mesh_id for r in linker.link_many([t for t, _ in items], "de")]
                acc = sum(g == gold for g, (_, gold) in zip(got, items, strict=True)) / max(len(items), 1)
                cov = sum(g is not None for g in got) / max(len(items), 1)
                res.setdefault(set_name, {})[name] = {"acc@1": round(acc, 4), "linked": round(cov, 4)}
        out[f"seed{seed}"] = res
    return out


_NOUN = re.compile(r"(?<![\w-])[A-ZÄÖÜ][a-zäöüß]{3,}(?![\w-])")


def measure_spans(vocab: Vocabulary, cfg: Any, root: Path, sample: int, seed: int) -> dict[str, Any]:
    """The letters' capitalised words that no mention of the default extractor covers, each linked
    as a given span (the model tier's or an annotator's) by the full cascade, without and with the
    general dictionary words (``linking.general_words``); a seeded sample of the spans whose link
    changed, with both links, for reading by hand."""
    extractor = EntityExtractor(vocab, cfg.ner, cfg.linking)
    spans: list[tuple[str, str, int, int]] = []  # (doc, text, start, end)
    for doc in letters(root):
        text = doc.get("text") or ""
        covered = [(m.start, m.end) for m in extractor.extract(text, "de")]
        for hit in _NOUN.finditer(text):
            if not any(s < hit.end() and hit.start() < e for s, e in covered):
                spans.append((doc.get("id") or "", text, hit.start(), hit.end()))
    surfaces = [text[s:e] for _, text, s, e in spans]
    runs = {}
    for name, on in (("before", False), ("after", True)):
        linker = Linker(vocab, cfg.linking.model_copy(update={"general_words": on}))
        runs[name] = [linker.link(s, "de", text) for s, (_, text, _, _) in zip(surfaces, spans, strict=True)]
    changed = [i for i, (b, a) in enumerate(zip(runs["before"], runs["after"], strict=True)) if b.mesh_id != a.mesh_id]
    rows = []
    for i in random.Random(seed).sample(changed, min(sample, len(changed))):
        doc, text, s, e = spans[i]
        b, a = runs["before"][i], runs["after"][i]
        rows.append({"doc": doc, "surface": surfaces[i], "before": f"{_name(vocab, b.mesh_id)} ({b.method})",
                     "after": f"{_name(vocab, a.mesh_id)} ({a.method})",
                     "context": _context(text, Mention(s, e, surfaces[i]))})
    return {
        "spans": len(spans),
        "linked": {k: sum(r.mesh_id is not None for r in v) for k, v in runs.items()},
        "methods": {k: dict(Counter(r.method for r in v).most_common()) for k, v in runs.items()},
        "changed": len(changed),
        "changed_distinct": len({surfaces[i] for i in changed}),
        "changed_from": dict(Counter(runs["before"][i].method for i in changed).most_common()),
        "changed_top": Counter(f"{surfaces[i]} -> {_name(vocab, runs['after'][i].mesh_id)}" for i in changed).most_common(25),
        "sample_seed": seed,
        "sample": rows,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "configs" / "local.yaml"))
    ap.add_argument(
        "--dev", action="store_true", help="held-out German vocabulary names instead of the letters"
    )
    ap.add_argument("--spans", action="store_true",
                    help="the letters' uncovered capitalised words as given spans, without / with the general words")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument(
        "--baseline-config", default=None, help="letters: 'before' is the default extractor on this config's vocabulary"
    )
    ap.add_argument("--sample", type=int, default=60)
    ap.add_argument("--sample-seed", type=int, default=0)
    ap.add_argument("--sample-out", default=None, help="write the hand-check sample as TSV")
    args = ap.parse_args()
    cfg = load_config(args.config, [])
    vocab = load_or_build(cfg.vocabulary)
    if args.dev:
        print(json.dumps({"dev": measure_dev(vocab, cfg, args.seeds)}, indent=1, ensure_ascii=False))
        return
    root = Path(os.environ.get("MEDGRAPH_SHARED_DATA", REPO.parent / "shared" / "data"))
    if args.spans:
        print(json.dumps({"spans": measure_spans(vocab, cfg, root, args.sample, args.sample_seed)},
                         indent=1, ensure_ascii=False))
        return
    baseline = None
    if args.baseline_config:
        base_cfg = load_config(args.baseline_config, [])
        baseline = (load_or_build(base_cfg.vocabulary), base_cfg)
    result = measure_letters(vocab, cfg, root, args.sample, args.sample_seed, baseline)
    if args.sample_out:
        with open(args.sample_out, "w", encoding="utf-8") as fh:
            fh.write("correct\tsurface\tmesh_id\tname\tmethod\tcontext\n")
            for r in result["sample"]:
                fh.write(f"\t{r['surface']}\t{r['mesh_id']}\t{r['name']}\t{r['method']}\t{r['context']}\n")
    print(json.dumps({"letters": result}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
