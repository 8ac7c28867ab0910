"""What the shared query-analysis cache saves: a question analysed on one replica, then asked on another.

    python benchmarks/query_cache.py [--config configs/local.yaml] [--rounds 5] [--redis-url URL]

Builds the offline extractor as ``serve.services.AnalyzerService`` does (``configs/local.yaml``:
the vocabulary of ``load_or_build``, the rules NER and the linker) and two ``QueryAnalyzer``
instances, each with its own LRU (empty) and its own Redis client, as two analyzer replicas.
For each round (a fresh cache version, so every key is new) every question is analysed on the
first replica (a miss: NER + linking + translations, then one SET) and then on the second (a
Redis hit: one GET and the JSON decode). Also measured: the analysis with no cache at all and a
hit in the first replica's own LRU. Redis: ``--redis-url`` or ``$MEDGRAPH_REDIS_URL``, else a
private server started with ``cluster/redis/redis-dev.sh`` for the run.

Prints JSON: medians and p90 in milliseconds, the hit / miss ratio, the date and ``uptime``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.auth.redis_client import connect  # noqa: E402
from medgraph.config import load_config  # noqa: E402
from medgraph.retrieve.analysis_cache import (  # noqa: E402
    LruAnalysisCache,
    RedisAnalysisCache,
    TieredAnalysisCache,
    analysis_version,
)

QUESTIONS = [
    "What are the minimum expectations for hand hygiene in outpatient settings?",
    "Does metformin reduce cardiovascular mortality in type 2 diabetes?",
    "Is aspirin effective for primary prevention of myocardial infarction?",
    "What is the first-line treatment for community-acquired pneumonia in adults?",
    "How does chronic kidney disease affect anemia management?",
    "Are statins associated with an increased risk of diabetes mellitus?",
    "Which vaccines are recommended for patients with HIV infection?",
    "What are the side effects of long-term corticosteroid therapy?",
    "Does vitamin D supplementation prevent fractures in older women?",
    "How is hypertension in pregnancy treated?",
    "What is the role of beta blockers after heart failure?",
    "Can influenza vaccination reduce hospital admissions in the elderly?",
    "Is there a link between obesity and breast cancer recurrence?",
    "What causes acute pancreatitis in children?",
    "How effective is cognitive behavioural therapy for depression?",
    "Which antibiotics treat urinary tract infections during pregnancy?",
    "Does smoking cessation improve asthma control?",
    "What is the prognosis of sepsis with acute kidney injury?",
    "How should atrial fibrillation be anticoagulated in the elderly?",
    "Is tuberculosis screening needed before anti-TNF therapy?",
    "Welche Nebenwirkungen hat Metformin bei Niereninsuffizienz?",
    "Hilft Aspirin bei der Vorbeugung von Schlaganfall?",
    "Wie wird Bluthochdruck in der Schwangerschaft behandelt?",
    "Erhöht Rauchen das Risiko für Lungenkrebs?",
    "Welche Impfungen brauchen Patienten mit Diabetes mellitus?",
    "Was sind die Symptome einer Lungenentzündung bei Kindern?",
    "Wie wirksam ist Insulin bei Typ-1-Diabetes?",
    "Verursacht Übergewicht Herzinsuffizienz?",
    "二甲双胍对2型糖尿病患者的心血管风险有何影响？",
    "阿司匹林能否预防心肌梗死？",
    "高血压患者应如何选择降压药？",
    "吸烟与肺癌之间有什么关系？",
    "慢性肾脏病患者的贫血如何治疗？",
    "流感疫苗对老年人有什么好处？",
    "哮喘患者可以使用β受体阻滞剂吗？",
    "糖尿病视网膜病变的筛查建议是什么？",
]


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _summary(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(xs) * 1000, 4), "p90_ms": round(_pct(xs, 0.9) * 1000, 4), "n": len(xs)}


def _timed(fn: Any, *args: Any) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def _redis(url: str | None, tmp: Path) -> tuple[str, Path | None]:
    url = url or os.environ.get("MEDGRAPH_REDIS_URL")
    if url:
        return url, None
    run_dir = tmp / "redis"
    from medgraph.testing.net import free_port

    env = {**os.environ, "REDIS_PORT": str(free_port())}
    subprocess.run(["bash", str(REPO / "cluster/redis/redis-dev.sh"), "start", str(run_dir)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return (run_dir / "url").read_text().strip(), run_dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=str(REPO / "configs/local.yaml"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--redis-url", default=None)
    args = ap.parse_args()

    from medgraph.assemble import build_analyzer, load_extractor
    from medgraph.ontology.build import load_or_build

    cfg = load_config(args.config)
    t0 = time.perf_counter()
    vocab = load_or_build(cfg.vocabulary)
    extractor = load_extractor(cfg, vocab)
    if cfg.linking.compose:
        extractor.linker.composer  # noqa: B018  (built up front, as the service does)
    setup_s = time.perf_counter() - t0
    base_version = analysis_version(cfg, vocab)
    r = cfg.retrieval

    with tempfile.TemporaryDirectory() as tmp:
        url, run_dir = _redis(args.redis_url, Path(tmp))
        prefix = f"mgbench{uuid.uuid4().hex[:8]}"
        clients = [connect(url, None, cfg.redis.timeout_s) for _ in range(2)]
        try:
            plain = build_analyzer(cfg, extractor, cache_size=0)
            for q in QUESTIONS:  # warm-up: lazy parts of NER and linking, the Redis connections
                plain.analyze(q)
            for c in clients:
                c.ping()
            none, miss, hit, local = [], [], [], []
            for i in range(args.rounds):
                version = f"{base_version}-bench{i}"
                caches = [TieredAnalysisCache(LruAnalysisCache(r.analysis_cache),
                                              RedisAnalysisCache(c, version, 600, prefix)) for c in clients]
                first, second = (build_analyzer(cfg, extractor, cache=c) for c in caches)
                for q in QUESTIONS:
                    none.append(_timed(plain.analyze, q))
                    miss.append(_timed(first.analyze, q))
                    hit.append(_timed(second.analyze, q))
                    local.append(_timed(first.analyze, q))
                assert first.misses == len(QUESTIONS) and second.misses == 0, (first.misses, second.misses)
                assert caches[1].shared_hits == len(QUESTIONS)
        finally:
            for c in clients:
                keys = list(c.scan_iter(match=f"{prefix}:*", count=1000))
                if keys:
                    c.delete(*keys)
                c.close()
            if run_dir is not None:
                subprocess.run(["bash", str(REPO / "cluster/redis/redis-dev.sh"), "stop", str(run_dir)], check=False)

    out = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "uptime": subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
        "config": args.config,
        "redis": "private redis-dev.sh server" if run_dir is not None else "given URL",
        "questions": len(QUESTIONS),
        "rounds": args.rounds,
        "setup_s": round(setup_s, 2),
        "no_cache": _summary(none),
        "miss_then_set": _summary(miss),
        "redis_hit_other_replica": _summary(hit),
        "local_lru_hit": _summary(local),
        "hit_over_miss_p50": round(statistics.median(hit) / statistics.median(miss), 4),
        "miss_over_hit_p50": round(statistics.median(miss) / statistics.median(hit), 1),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
