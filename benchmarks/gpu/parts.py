"""The measured parts of a GPU run; each returns a JSON-ready dict (called only when its
prerequisites are met, see ``prereqs.py``).

- ``vllm_tier``: the real vLLM tier on Ray Serve (``MedGraphLLMServer`` + the ``TierService``
  gate, as ``serve/app.py`` deploys them): first answer, then ``cycles`` times sleep → answer
  (wake on demand) with the gate's sleep / wake latencies and the GPU memory in use (nvidia-smi)
  before and after each sleep.
- ``ner``: ``python -m benchmarks.ner_cascade`` (GLiNER + token-classification NER) in a
  subprocess; its JSON is embedded as is.
- ``embed_bge_m3``, ``embed_sapbert``: the corpus embedders (``medgraph/embed/bge_m3.py``,
  ``medgraph/embed/encoder.py``) on CUDA, texts/s after an untimed pass over the same texts (``benchmarks/embedders.bench``).
- ``rerank``: ``CrossEncoderReranker`` on CUDA, (question, passage) pairs/s.
- ``ner_models``: the cascade's model passes alone (``TokenClassifierNER``, ``GlinerNER``) on
  CUDA, texts/s and characters/s over English, German and Chinese demo texts.

Every throughput part times a second pass over its inputs: the first, untimed, lets the GPU meet
every batch shape (kernel choice, memory allocator growth) before the clock runs.

The throughput parts take ``device`` (default ``cuda``): the tests run them on CPU with tiny
random models (tests/unit/test_gpu_benchmark.py), and ``run.py --device cpu`` runs them on the
CPU as a baseline.

Texts: the repository's PubMedQA demo abstracts (``data/demo/pubmedqa_demo.json``, 150 items),
repeated to ``n``; SapBERT gets short entity-like phrases cut from them (it embeds names);
``ner_models`` also the German and Chinese demo records.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo" / "pubmedqa_demo.json"
QUESTION = "Is metformin the first-line treatment for type 2 diabetes?"


def abstracts(n: int) -> list[str]:
    from benchmarks.embedders import load_abstracts

    base = load_abstracts(DEMO, 150)
    return [base[i % len(base)] for i in range(n)]


def phrases(n: int) -> list[str]:
    """Short noun-phrase-like spans (1–4 words) from the demo abstracts: SapBERT's kind of input."""
    words = re.findall(r"[A-Za-z][A-Za-z0-9-]+", " ".join(abstracts(150)))
    out: list[str] = []
    i = 0
    while len(out) < n:
        size = 1 + (i % 4)
        out.append(" ".join(words[i % len(words) : i % len(words) + size]) or "diabetes")
        i += 3
    return out


def demo_texts(n: int) -> list[tuple[str, str]]:
    """(text, language) of the demo corpus, English, German and Chinese interleaved, repeated to
    ``n``: the abstracts, the German abstracts' sections joined, the Chinese question + answer."""
    folder = DEMO.parent
    german = [
        " ".join(s["text"] for s in json.loads(line)["sections"])
        for line in (folder / "pubmedqa_de_demo.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    chinese = [
        f"{row['instruction']} {row['output']}"
        for row in map(json.loads, (folder / "huatuo_zh_demo.jsonl").read_text(encoding="utf-8").splitlines())
    ]
    groups = [[(t, "en") for t in abstracts(150)], [(t, "de") for t in german], [(t, "zh") for t in chinese]]
    mixed = [g[i] for i in range(max(map(len, groups))) for g in groups if i < len(g)]
    return [mixed[i % len(mixed)] for i in range(n)]


def evidence(k: int = 3, chars: int = 500) -> list[Any]:
    """The first ``k`` demo abstracts as ranked evidence (``Candidate``s), ``chars`` characters each."""
    from medgraph.retrieve.types import Candidate
    from medgraph.schemas import Chunk

    out = []
    for i, text in enumerate(abstracts(k), start=1):
        text = text[:chars]
        chunk = Chunk(
            f"c{i}",
            f"doc{i}",
            0,
            text,
            ["Abstract"],
            "p",
            text,
            len(text.split()),
            "en",
            title=f"Demo abstract {i}",
            page=None,
            source_id=f"demo:{i}",
        )
        out.append(Candidate(f"c{i}", chunk=chunk, relevance=0.9))
    return out


def gpu_memory() -> list[dict[str, float]]:
    """Per GPU: MiB used / total (nvidia-smi; device-wide, so it sees the vLLM worker processes)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    out = subprocess.run(
        [exe, "--query-gpu=index,memory.used,memory.total", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    rows = []
    for line in out.strip().splitlines():
        idx, used, total = [f.strip() for f in line.split(",")]
        rows.append({"index": int(idx), "used_mib": float(used), "total_mib": float(total)})
    return rows


def _used(rows: list[dict[str, float]]) -> float:
    return sum(r["used_mib"] for r in rows)


def _summary(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"n": 0, "min": None, "p50": None, "max": None}
    ordered = sorted(values)
    return {
        "n": len(values),
        "min": round(ordered[0], 3),
        "p50": round(ordered[len(ordered) // 2], 3),
        "max": round(ordered[-1], 3),
    }


def vllm_tier(
    models: Path,
    cycles: int = 3,
    gpu_memory_utilization: float = 0.5,
    max_model_len: int = 4096,
    sleep_level: int = 1,
    tensor_parallel_size: int = 1,
    timeout_s: float = 900,
) -> dict[str, Any]:
    import ray
    from ray import serve

    from medgraph.config import load_config
    from medgraph.config.llm import VLLMEngineConfig
    from medgraph.retrieve.types import QueryAnalysis
    from serve.app import tier_options
    from serve.tiers import TierService
    from serve.vllm_engine import build_llm_server

    engine_sets = [
        f"tiers.engines.gpu.{k}={v}"
        for k, v in {
            "kind": "vllm",
            "model_id": "bench",
            "model_source": models / "llm",
            "max_model_len": max_model_len,
            "gpu_memory_utilization": gpu_memory_utilization,
            "sleep_level": sleep_level,
            "tensor_parallel_size": tensor_parallel_size,
            "max_tokens": 128,
        }.items()
    ]
    cfg = load_config(None, [*engine_sets, "tiers.small=gpu", "tiers.medium=gpu", "tiers.large=gpu"])
    engine = cfg.tiers.engines["gpu"]
    assert isinstance(engine, VLLMEngineConfig)
    ray.init(ignore_reinit_error=True, log_to_driver=False, logging_level=logging.ERROR)
    memory: dict[str, Any] = {"before_deploy": gpu_memory()}
    start = time.perf_counter()
    app = (
        serve.deployment(TierService)  # type: ignore[attr-defined]
        .options(**tier_options("gpu", engine, cfg.serve))
        .bind(cfg, "gpu", build_llm_server(engine, "gpu"))
    )
    handle = serve.run(app, name="medgraph-gpu-bench", route_prefix=None)
    deploy_s = time.perf_counter() - start
    try:
        analysis = QueryAnalysis(QUESTION, "en")
        ranked = evidence()

        def answer() -> tuple[float, Any]:
            t = time.perf_counter()
            a = handle.answer.remote(analysis.text, analysis, ranked).result(timeout_s=timeout_s)
            return time.perf_counter() - t, a

        first_s, first = answer()
        warm_s, _ = answer()
        memory["awake"] = gpu_memory()
        sleeps, wakes, answers_after_wake, freed = [], [], [], []
        for _ in range(cycles):
            before = gpu_memory()
            slept = handle.sleep.remote().result(timeout_s=timeout_s)
            if not slept["slept"]:
                raise RuntimeError(f"the gate refused or failed to sleep: {slept.get('last_error') or slept}")
            after = gpu_memory()
            sleeps.append(slept["sleep_s"]["last"])
            freed.append(_used(before) - _used(after))
            memory.setdefault("asleep", after)
            t_s, _ = answer()  # wakes on demand
            stats = handle.stats.remote().result(timeout_s=60)
            wakes.append(stats["wake_s"]["last"])
            answers_after_wake.append(t_s)
        stats = handle.stats.remote().result(timeout_s=60)
        return {
            "model_dir": str(models / "llm"),
            "sleep_level": sleep_level,
            "cycles": cycles,
            "gpu_memory_utilization": gpu_memory_utilization,
            "max_model_len": max_model_len,
            "deploy_s": round(deploy_s, 2),
            "first_answer_s": round(first_s, 3),
            "warm_answer_s": round(warm_s, 3),
            "answer_refused": bool(first.refused),
            "model_used": first.model_used,
            "sleep_s": _summary(sleeps),
            "wake_s": _summary(wakes),
            "answer_after_wake_s": _summary(answers_after_wake),
            "gpu_memory_freed_mib": _summary(freed),
            "gpu_memory": memory,
            "gate": {k: stats[k] for k in ("wakes", "sleeps", "requests", "state", "last_error")},
        }
    finally:
        serve.shutdown()  # type: ignore[no-untyped-call]
        ray.shutdown()


def ner(models: Path, timeout_s: float = 1800, device: str = "cuda") -> dict[str, Any]:
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.ner_cascade",
        "--gliner",
        str(models / "gliner"),
        "--device",
        device,
    ]
    for lang in ("en", "de", "zh"):
        if (models / f"ner-{lang}").is_dir():
            cmd += ["--token-model", f"{lang}={models / f'ner-{lang}'}"]
    out = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=REPO,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        },
    )
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {out.returncode}: {out.stderr.strip()[-1500:]}")
    try:
        result = json.loads(out.stdout)
    except json.JSONDecodeError as exc:
        raise RuntimeError(
            f"benchmarks.ner_cascade printed no JSON object ({exc}): {out.stdout[-500:]}"
        ) from exc
    return {"command": cmd, "result": result}


def ner_models(
    models: Path, n: int = 600, batch_size: int = 16, device: str = "cuda", threshold: float = 0.5
) -> dict[str, Any]:
    """The cascade's model passes alone (no gazetteer, no vocabulary): the token-classification
    models (``ner-en`` / ``ner-de`` / ``ner-zh``, each on its language's texts) and GLiNER (on the
    English and German texts, ``ner.gliner_languages``' default), texts/s after an untimed pass."""
    from medgraph.config.pipeline import DEFAULT_GLINER_LABELS
    from medgraph.extract.gliner_ner import GlinerNER
    from medgraph.extract.token_ner import TokenClassifierNER

    items = demo_texts(n)
    out: dict[str, Any] = {
        "texts": n,
        "chars": sum(len(t) for t, _ in items),
        "languages": {lang: sum(1 for _, x in items if x == lang) for lang in ("en", "de", "zh")},
        "batch_size": batch_size,
    }
    token_dirs = {lang: str(models / f"ner-{lang}") for lang in ("en", "de", "zh") if (models / f"ner-{lang}").is_dir()}
    if token_dirs:
        start = time.perf_counter()
        token = TokenClassifierNER(token_dirs, batch_size=batch_size, device=device)
        load_s = time.perf_counter() - start
        rows = [(t, lang) for t, lang in items if lang in token_dirs]
        out["token"] = {"models": token_dirs, "load_s": round(load_s, 2), **_spans_per_s(
            lambda texts, langs: token.predict(texts, langs), rows, batch_size * 4)}
    start = time.perf_counter()
    gliner = GlinerNER(
        str(models / "gliner"), list(DEFAULT_GLINER_LABELS), threshold, batch_size=batch_size, device=device
    )
    load_s = time.perf_counter() - start
    rows = [(t, lang) for t, lang in items if lang in ("en", "de")]
    out["gliner"] = {"labels": len(DEFAULT_GLINER_LABELS), "threshold": threshold, "load_s": round(load_s, 2), **_spans_per_s(
        lambda texts, _langs: gliner.predict(texts), rows, batch_size * 4)}
    out["cuda_peak_allocated_mib"] = _cuda_peak_mib(device)
    return out


def _spans_per_s(predict: Any, rows: list[tuple[str, str]], call_size: int) -> dict[str, Any]:
    """Texts/s and chars/s of ``predict(texts, languages)`` called ``call_size`` texts at a time
    (the Extract stage's batch), after one untimed pass over the same calls."""
    texts, langs = [t for t, _ in rows], [x for _, x in rows]

    def one_pass() -> int:
        """Spans found."""
        calls = range(0, len(texts), call_size)
        return sum(len(found) for i in calls for found in predict(texts[i : i + call_size], langs[i : i + call_size]))

    one_pass()
    start = time.perf_counter()
    spans = one_pass()
    wall = time.perf_counter() - start
    return {
        "texts": len(texts),
        "wall_s": round(wall, 2),
        "texts_per_s": round(len(texts) / wall, 1),
        "chars_per_s": round(sum(map(len, texts)) / wall),
        "spans": spans,
    }


def _cuda_peak_mib(device: str) -> float | None:
    if not device.startswith("cuda"):
        return None
    import torch

    return round(torch.cuda.max_memory_allocated() / 2**20, 1)


def embed_bge_m3(models: Path, n: int = 1024, batch_size: int = 64, device: str = "cuda") -> dict[str, Any]:
    from benchmarks.embedders import bench
    from medgraph.embed.bge_m3 import BgeM3Embedder

    texts = abstracts(n)
    path = models / "bge-m3"
    out = {"model_dir": str(path), "texts": n, "batch_size": batch_size, "max_length": 512}
    for key, sparse in (("dense_and_sparse", True), ("dense_only", False)):
        out[key] = bench(
            partial(
                BgeM3Embedder,
                path,
                dense=True,
                sparse=sparse,
                max_length=512,
                batch_size=batch_size,
                device=device,
            ),
            "embed_dense",
            texts,
            batch_size * 4,
            warm_pass=True,
        )
    out["cuda_peak_allocated_mib"] = _cuda_peak_mib(device)
    return out


def embed_sapbert(
    models: Path, n: int = 20000, batch_size: int = 256, device: str = "cuda"
) -> dict[str, Any]:
    from benchmarks.embedders import bench
    from medgraph.embed.encoder import EncoderEmbedder

    texts = phrases(n)
    path = models / "sapbert-xlmr"
    result = bench(
        lambda: EncoderEmbedder(path, pooling="cls", max_length=25, batch_size=batch_size, device=device),
        "embed_dense",
        texts,
        batch_size * 4,
        warm_pass=True,
    )
    return {
        "model_dir": str(path),
        "texts": n,
        "batch_size": batch_size,
        "max_length": 25,
        **result,
        "cuda_peak_allocated_mib": _cuda_peak_mib(device),
    }


def rerank(
    models: Path, n: int = 512, batch_size: int = 32, per_query: int = 64, device: str = "cuda"
) -> dict[str, Any]:
    from medgraph.retrieve.cross_encoder import CrossEncoderReranker

    path = models / "reranker"
    passages = abstracts(n)
    start = time.perf_counter()
    reranker = CrossEncoderReranker(str(path), device=device, batch_size=batch_size, max_length=512)
    reranker.score(QUESTION, passages[:batch_size])
    load_s = time.perf_counter() - start

    def one_pass() -> list[float]:
        """Seconds per query of ``per_query`` passages."""
        latencies = []
        for i in range(0, n, per_query):
            t = time.perf_counter()
            reranker.score(QUESTION, passages[i : i + per_query])
            latencies.append(time.perf_counter() - t)
        return latencies

    one_pass()  # untimed: every batch shape seen once
    start = time.perf_counter()
    latencies = one_pass()
    wall = time.perf_counter() - start
    return {
        "model_dir": str(path),
        "pairs": n,
        "batch_size": batch_size,
        "passages_per_query": per_query,
        "max_length": 512,
        "load_s": round(load_s, 2),
        "wall_s": round(wall, 2),
        "pairs_per_s": round(n / wall, 1),
        "query_s": _summary(latencies),
        "cuda_peak_allocated_mib": _cuda_peak_mib(device),
    }
