"""GPU runs of MedGraph's model tiers; prints ONE JSON object on stdout.

Checks the prerequisites first (an NVIDIA GPU through nvidia-smi and torch.cuda, vLLM for the
vLLM tier, each weight folder under ``MEDGRAPH_MODELS``), then runs every requested part whose
prerequisites are met; the others are reported as ``"skipped"`` with what is missing. Parts:
vllm_tier (wake / sleep latency and GPU memory freed by a sleep, through the real tier gate on
Ray Serve), ner (``python -m benchmarks.ner_cascade``, embedded), ner_models (the GLiNER and token
passes alone), embed_bge_m3, embed_sapbert, rerank (throughput on CUDA). See docs/benchmarks.md,
"GPU runs". Without weights, ``--random-weights DIR`` measures the same code on random-weight
folders of the same architectures (``architectures.py``): speed, not quality.

Exit status: 0 every requested part ran; 1 a part failed while running; 2 nothing failed, but a
part was skipped for missing prerequisites (``--check`` reports only, with the same statuses).

    MEDGRAPH_MODELS=/data/models benchmarks/gpu/run.sh
    MEDGRAPH_MODELS=/data/models benchmarks/gpu/run.sh --parts vllm_tier --cycles 5
    benchmarks/gpu/run.sh --check
    benchmarks/gpu/run.sh --random-weights /tmp/arch --parts ner_models embed_sapbert rerank
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from benchmarks.gpu.prereqs import MODEL_DIRS, PARTS, check


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    folders = "\n".join(f"  {d + '/':14} {what}" for d, what in MODEL_DIRS.items())
    parser = argparse.ArgumentParser(
        prog="benchmarks/gpu/run.sh",
        description=__doc__.split("\n\n")[0],
        epilog=f"Weight folders under MEDGRAPH_MODELS (or --models); nothing is downloaded:\n{folders}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--models",
        type=Path,
        default=os.environ.get("MEDGRAPH_MODELS") or None,
        help="folder with the weight subfolders (default: $MEDGRAPH_MODELS)",
    )
    parser.add_argument(
        "--parts", nargs="+", choices=PARTS, default=list(PARTS), help="parts to run (default: all)"
    )
    parser.add_argument(
        "--random-weights",
        type=Path,
        metavar="DIR",
        help="no weights at hand: build random-weight folders with the real models' architectures in "
        "DIR (benchmarks/gpu/architectures.py) and measure throughput on them (not quality); "
        "the vllm_tier part still needs a real llm/ folder",
    )
    parser.add_argument(
        "--gliner-threshold", type=float, default=0.5, help="ner_models: GLiNER's span threshold (ner.gliner_threshold)"
    )
    parser.add_argument("--check", action="store_true", help="check the prerequisites only; run nothing")
    parser.add_argument("--cycles", type=int, default=3, help="vllm_tier: sleep / wake cycles")
    parser.add_argument(
        "--sleep-level",
        type=int,
        choices=(1, 2),
        default=1,
        help="vllm_tier: 1 offloads weights to CPU RAM, 2 drops them",
    )
    parser.add_argument(
        "--gpu-memory-utilization", type=float, default=0.5, help="vllm_tier: vLLM's memory share"
    )
    parser.add_argument("--max-model-len", type=int, default=4096, help="vllm_tier: context length")
    parser.add_argument("--tensor-parallel-size", type=int, default=1, help="vllm_tier: GPUs per replica")
    parser.add_argument(
        "--n", type=int, default=None, help="texts / pairs per throughput part (default: per part)"
    )
    parser.add_argument(
        "--device",
        choices=("cuda", "cpu"),
        default="cuda",
        help="where the throughput parts run (cpu: the same parts on this machine's CPU, a baseline "
        "for the GPU figures; vllm_tier always needs a GPU)",
    )
    return parser.parse_args(argv)


def _run_part(part: str, args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.gpu import parts

    models: Path = args.models
    sized: dict[str, Any] = {"device": args.device, **({"n": args.n} if args.n else {})}
    if part == "vllm_tier":
        return parts.vllm_tier(
            models,
            cycles=args.cycles,
            gpu_memory_utilization=args.gpu_memory_utilization,
            max_model_len=args.max_model_len,
            sleep_level=args.sleep_level,
            tensor_parallel_size=args.tensor_parallel_size,
        )
    if part == "ner":
        return parts.ner(models, device=args.device)
    if part == "ner_models":
        return parts.ner_models(models, threshold=args.gliner_threshold, **sized)
    if part == "embed_bge_m3":
        return parts.embed_bge_m3(models, **sized)
    if part == "embed_sapbert":
        return parts.embed_sapbert(models, **sized)
    if part == "rerank":
        return parts.rerank(models, **sized)
    raise ValueError(f"unknown part {part!r}")


def _random_weights(args: argparse.Namespace) -> dict[str, Any]:
    """Build the random-weight folders the requested parts read (skipping vllm_tier's llm/)."""
    from benchmarks.gpu.architectures import ARCHITECTURES, build
    from benchmarks.gpu.prereqs import NER_TOKEN_DIRS, PART_DIRS

    wanted = {d for p in args.parts for d in PART_DIRS[p] if d in ARCHITECTURES}
    if {"ner", "ner_models"} & set(args.parts):
        wanted |= {d for d in NER_TOKEN_DIRS if d in ARCHITECTURES}
    start = time.perf_counter()
    built = build(args.random_weights, sorted(wanted))
    args.models = args.random_weights
    return {"weights": "random: the real architectures, for throughput only (not quality)",
            "architectures": built, "build_s": round(time.perf_counter() - start, 1)}


def run(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    report: dict[str, Any] = {
        "benchmark": "medgraph-gpu",
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": platform.python_version(),
        "weights": "from the model folder",
    }
    if args.random_weights is not None:
        report.update(_random_weights(args))
    report.update({
        "device": args.device,
        **check(args.models, tuple(args.parts), gpu_parts=PARTS if args.device == "cuda" else ("vllm_tier",)),
        "parts": {},
    })
    for part in args.parts:
        pre = report["prerequisites"][part]
        if not pre["ok"]:
            report["parts"][part] = {"status": "skipped", "reason": "; ".join(pre["missing"])}
            continue
        if args.check:
            report["parts"][part] = {"status": "ready"}
            continue
        start = time.perf_counter()
        try:
            result = _run_part(part, args)
            report["parts"][part] = {
                "status": "ok",
                "seconds": round(time.perf_counter() - start, 1),
                **result,
            }
        except Exception as exc:  # noqa: BLE001 - one failed part must not lose the others' figures
            report["parts"][part] = {
                "status": "failed",
                "seconds": round(time.perf_counter() - start, 1),
                "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc()[-3000:],
            }
    statuses = [p["status"] for p in report["parts"].values()]
    report["measured_on_gpu"] = "ok" in statuses and args.device == "cuda"
    code = 1 if "failed" in statuses else 2 if "skipped" in statuses else 0
    report["exit_status"] = code
    return report, code


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    report, code = run(args)
    sys.stdout.write(json.dumps(report, indent=2, default=str) + "\n")
    for part, res in report["parts"].items():  # a human summary on stderr, the JSON alone on stdout
        print(
            f"{part}: {res['status']}"
            + (
                f" ({res.get('reason') or res.get('error')})"
                if res["status"] in ("skipped", "failed")
                else ""
            ),
            file=sys.stderr,
        )
    return code


if __name__ == "__main__":
    sys.exit(main())
