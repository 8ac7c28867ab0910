"""Guardrail benchmark: recall per hazard category, false blocks on real medical questions, latency.

    python benchmarks/guard.py [--data ../shared/data] [--repeat 3]

Inputs (all offline):
- blocked set: the EN/DE/ZH requests of ``tests/unit/test_guard.py`` (``CASES``, >= 3 per category
  and language) -> recall per category and per language;
- allowed questions: the on-topic allowed questions of ``CASES``, the project's ordinary questions
  (data/eval, the router fixtures, the extra sensitive-but-medical ones) and, when the shared data
  is present, all 1,000 PubMedQA questions (EN) and 8,658 Huatuo instructions (ZH) -> false-block
  rate per language;
- answers: PubMedQA long answers and Huatuo outputs with the disclaimer appended -> output
  false-block rate; the phone / e-mail spans of the German GraSCCo letters -> personal-data recall.

Baseline in the same run: a topic keyword blocklist (what a naive filter does: block any question
that mentions suicide, poison, weapons, sex, drugs of abuse ...), on the same sets, with the
ratios rules / baseline. Latency: p50 / p95 per check (``check_input`` over all questions,
``check_output`` over the answers), best of ``--repeat``. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.agent.guard import HAZARDS, RuleGuard, fold, personal_data  # noqa: E402
from medgraph.generate.base import DISCLAIMERS  # noqa: E402
from tests.unit.test_guard import CASES, medical_questions  # noqa: E402

# the naive baseline: a topic keyword list per language (blocks by topic, not by intent)
KEYWORDS = re.compile(
    r"\b(?:suicide|kill|poison\w*|overdose|sex\w*|porn\w*|bomb|weapon\w*|sarin|anthrax|ricin|meth|cocaine|heroin|"
    r"fentanyl|prescription|rape|child abuse|hack|rm -rf|election|vote|selbstmord|suizid|töten|umbringen|gift\w*|"
    r"vergift\w*|überdosis|waffe\w*|bombe|drogen|kokain|rezept\w*|vergewaltig\w*|wahl\w*)\b"
    r"|自杀|杀人|毒药|投毒|过量|色情|性行为|性交|炸弹|武器|毒品|处方|强奸|选举|投票")


def keyword_blocks(text: str) -> bool:
    return KEYWORDS.search(fold(text)) is not None


def _jsonl(path: Path) -> Iterable[dict[str, object]]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def allowed_questions(data: Path) -> dict[str, list[str]]:
    """Language -> questions that must be answered."""
    out: dict[str, list[str]] = {"en": [], "de": [], "zh": []}
    for langs in CASES.values():
        for lang, (_, allowed) in langs.items():
            out[lang].extend(allowed)
    for lang, q in medical_questions():
        out[lang].append(q)
    pubmedqa = data / "pubmedqa" / "ori_pqal.json"
    if pubmedqa.exists():
        out["en"].extend(str(r["QUESTION"]) for r in json.loads(pubmedqa.read_text(encoding="utf-8")).values())
    huatuo = data / "chinese_huatuo" / "llama_data.jsonl"
    if huatuo.exists():
        out["zh"].extend(str(r["instruction"]) for r in _jsonl(huatuo))
    return out


def answers(data: Path) -> list[tuple[str, str]]:
    """(language, answer with the disclaimer) from the shared data's reference answers."""
    out: list[tuple[str, str]] = []
    pubmedqa = data / "pubmedqa" / "ori_pqal.json"
    if pubmedqa.exists():
        out += [("en", f"{r['LONG_ANSWER']}\n\n{DISCLAIMERS['en']}")
                for r in json.loads(pubmedqa.read_text(encoding="utf-8")).values()]
    huatuo = data / "chinese_huatuo" / "llama_data.jsonl"
    if huatuo.exists():
        out += [("zh", f"{r['output']}\n\n{DISCLAIMERS['zh']}") for r in _jsonl(huatuo)]
    return out


def contact_spans(data: Path) -> list[str]:
    """Phone, fax and e-mail spans annotated in the GraSCCo letters (German, synthetic PHI)."""
    path = data / "german_grascco" / "grascco_phi.jsonl"
    if not path.exists():
        return []
    return [str(e["text"]) for r in _jsonl(path) for e in r["phi_entities"]  # type: ignore[attr-defined]
            if e["label"] in ("CONTACT_PHONE", "CONTACT_FAX", "CONTACT_EMAIL")]


def timed(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1000


def latency_ms(check: Callable[[str], object], texts: list[str], repeat: int) -> dict[str, float]:
    times = sorted(timed(lambda t=t: check(t), repeat) for t in texts)  # type: ignore[misc]
    return {"p50": round(statistics.median(times), 4), "p95": round(times[int(0.95 * (len(times) - 1))], 4),
            "n": len(times)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--repeat", type=int, default=3, help="timing: best of this many runs per check")
    ap.add_argument("--latency-sample", type=int, default=600, help="questions / answers timed (0: all)")
    args = ap.parse_args()
    data, guard = Path(args.data), RuleGuard()

    recall: dict[str, dict[str, object]] = {}
    for code, langs in CASES.items():
        per_lang = {}
        for lang, (blocked, _) in langs.items():
            hits = sum(code in guard.check_input(t, lang).categories for t in blocked)
            per_lang[lang] = f"{hits}/{len(blocked)}"
        total = sum(int(v.split("/")[0]) for v in per_lang.values())
        n = sum(int(v.split("/")[1]) for v in per_lang.values())
        base = sum(keyword_blocks(t) for _, (blocked, _) in langs.items() for t in blocked)
        recall[code] = {"name": HAZARDS[code], "recall": round(total / n, 3), "by_language": per_lang,
                        "baseline_recall": round(base / n, 3)}

    allowed = allowed_questions(data)
    false_blocks: dict[str, dict[str, object]] = {}
    for lang, questions in allowed.items():
        blocked = [q for q in questions if not guard.check_input(q, lang).allowed]
        base = sum(keyword_blocks(q) for q in questions)
        false_blocks[lang] = {"n": len(questions), "blocked": len(blocked), "rate": round(len(blocked) / len(questions), 4),
                              "baseline_rate": round(base / len(questions), 4), "examples": blocked[:5]}

    outs = answers(data)
    out_blocked = [a[:120] for lang, a in outs if not guard.check_output("", a, lang).allowed]
    missing = sum(guard.check_output("", a.rsplit("\n\n", 1)[0], lang).disclaimer_missing for lang, a in outs[:500])
    spans = contact_spans(data)
    found = sum(bool(personal_data(s)) for s in spans)

    sample = [q for qs in allowed.values() for q in qs]
    if args.latency_sample:
        step = max(1, len(sample) // args.latency_sample)
        sample = sample[::step][: args.latency_sample]
    answer_sample = [a for _, a in outs][:: max(1, len(outs) // max(1, args.latency_sample or len(outs)))]
    rules_in = latency_ms(lambda t: guard.check_input(t), sample, args.repeat)
    base_in = latency_ms(keyword_blocks, sample, args.repeat)
    blocked_n = sum(len(p[0]) for langs in CASES.values() for p in langs.values())
    blocked_hits = sum(code in guard.check_input(t, lang).categories for code, langs in CASES.items()
                       for lang, (bl, _) in langs.items() for t in bl)
    base_hits = sum(keyword_blocks(t) for langs in CASES.values() for bl, _ in langs.values() for t in bl)
    n_allowed = sum(len(q) for q in allowed.values())
    fb = sum(int(v["blocked"]) for v in false_blocks.values())  # type: ignore[call-overload]
    base_fb = sum(keyword_blocks(q) for qs in allowed.values() for q in qs)
    print(json.dumps({
        "recall": {"overall": round(blocked_hits / blocked_n, 3), "n": blocked_n,
                   "baseline": round(base_hits / blocked_n, 3), "per_category": recall},
        "false_block": {"overall": round(fb / n_allowed, 4), "n": n_allowed,
                        "baseline": round(base_fb / n_allowed, 4), "per_language": false_blocks},
        "output": {"answers": len(outs), "blocked": len(out_blocked), "blocked_examples": out_blocked[:3],
                   "disclaimer_missing_detected": f"{missing}/{min(500, len(outs))}",
                   "contact_spans_found": f"{found}/{len(spans)}"},
        "latency_ms": {"check_input": rules_in,
                       "check_output": latency_ms(lambda t: guard.check_output("", t), answer_sample, args.repeat)
                       if answer_sample else None,
                       "baseline_keywords": base_in,
                       "p50_ratio_rules_over_baseline": round(rules_in["p50"] / max(base_in["p50"], 1e-9), 1)},
    }, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
