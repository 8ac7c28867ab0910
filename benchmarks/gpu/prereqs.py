"""What each GPU benchmark part needs, checked before anything runs.

``check(models_dir)`` → ``{part: {"ok": bool, "missing": [reason, ...]}}`` and the environment
(GPUs seen by ``nvidia-smi``, torch and CUDA, vLLM, Ray). Nothing here loads a model or starts a
CUDA context: ``torch.cuda.is_available()`` only asks the driver.

Weights are read only from ``MEDGRAPH_MODELS`` (or ``--models``), one subfolder per model
(``MODEL_DIRS``); nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path
from typing import Any

# subfolder of MEDGRAPH_MODELS -> what it holds
MODEL_DIRS = {
    "llm": "an instruct model vLLM can serve (a Hugging Face directory, e.g. Qwen2.5-0.5B-Instruct)",
    "gliner": "a GLiNER checkpoint (e.g. a multilingual biomedical GLiNER)",
    "ner-en": "an English token-classification NER model (Hugging Face directory)",
    "ner-de": "a German token-classification NER model (Hugging Face directory)",
    "ner-zh": "optional: a Chinese token-classification NER model (Hugging Face directory)",
    "bge-m3": "BAAI/bge-m3 (with sparse_linear.pt and colbert_linear.pt)",
    "sapbert-xlmr": "SapBERT-UMLS-2020AB-all-lang-from-XLMR (or another XLM-R SapBERT)",
    "reranker": "a cross-encoder with one relevance logit (e.g. BAAI/bge-reranker-v2-m3)",
}

PARTS = ("vllm_tier", "ner", "ner_models", "embed_bge_m3", "embed_sapbert", "rerank")

# Python modules each part imports (besides torch, which every part needs)
PART_MODULES = {
    "vllm_tier": ("vllm", "ray"),
    "ner": ("gliner", "transformers"),
    "ner_models": ("gliner", "transformers"),
    "embed_bge_m3": ("FlagEmbedding", "transformers"),
    "embed_sapbert": ("transformers",),
    "rerank": ("transformers",),
}
PART_DIRS = {
    "vllm_tier": ("llm",),
    "ner": ("gliner",),  # and at least one of ner-en / ner-de / ner-zh
    "ner_models": ("gliner",),  # likewise
    "embed_bge_m3": ("bge-m3",),
    "embed_sapbert": ("sapbert-xlmr",),
    "rerank": ("reranker",),
}
NER_CASCADE_MODULE = "benchmarks.ner_cascade"
NER_TOKEN_DIRS = ("ner-en", "ner-de", "ner-zh")


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken install
        return False


def nvidia_smi() -> tuple[list[dict[str, Any]], str | None]:
    """GPUs as ``nvidia-smi`` lists them, or ([], why not)."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return [], "nvidia-smi not found (no NVIDIA driver on this machine)"
    try:
        out = subprocess.run(
            [
                exe,
                "--query-gpu=index,name,memory.total,memory.used,driver_version",
                "--format=csv,noheader,nounits",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [], f"nvidia-smi failed: {exc}"
    if out.returncode != 0:
        return [], f"nvidia-smi failed (exit {out.returncode}): {(out.stderr or out.stdout).strip()[:300]}"
    gpus = []
    for line in out.stdout.strip().splitlines():
        idx, name, total, used, driver = [f.strip() for f in line.split(",")]
        gpus.append(
            {
                "index": int(idx),
                "name": name,
                "memory_total_mib": float(total),
                "memory_used_mib": float(used),
                "driver": driver,
            }
        )
    if not gpus:
        return [], "nvidia-smi lists no GPU"
    return gpus, None


def torch_cuda() -> tuple[dict[str, Any], str | None]:
    if not _has_module("torch"):
        return {"torch": None}, "torch is not installed (pip install -e '.[ml]')"
    import torch

    info: dict[str, Any] = {"torch": torch.__version__, "cuda_build": torch.version.cuda}
    try:
        available = bool(torch.cuda.is_available())
    except Exception as exc:  # noqa: BLE001 - a broken driver raises here
        return info, f"torch.cuda.is_available() failed: {exc}"
    info["cuda_available"] = available
    if not available:
        build = torch.version.cuda or "none (a CPU-only torch build)"
        return info, f"torch.cuda.is_available() is False (torch {torch.__version__}, CUDA build {build})"
    info["device_count"] = torch.cuda.device_count()
    return info, None


def _version(module: str) -> str | None:
    if not _has_module(module):
        return None
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:  # noqa: BLE001 - installed without metadata
        return "unknown"


def check(
    models_dir: Path | None, parts: tuple[str, ...] = PARTS, gpu_parts: tuple[str, ...] = PARTS
) -> dict[str, Any]:
    """The environment and, per part, whether it can run and what is missing (an NVIDIA GPU and
    CUDA only for ``gpu_parts``: the others run on the CPU)."""
    gpus, gpu_missing = nvidia_smi()
    cuda, cuda_missing = torch_cuda()
    env = {
        "gpus": gpus,
        **cuda,
        "vllm": _version("vllm"),
        "ray": _version("ray"),
        "models_dir": str(models_dir) if models_dir else None,
    }
    common = [cuda_missing] if cuda_missing and cuda.get("torch") is None else []  # every part needs torch
    gpu = [m for m in (gpu_missing, cuda_missing) if m and m not in common]
    if models_dir is None:
        common.append(
            "no model folder: set MEDGRAPH_MODELS (or --models) to a folder with "
            + ", ".join(f"{d}/" for d in MODEL_DIRS)
        )
    elif not models_dir.is_dir():
        common.append(f"model folder {models_dir} does not exist")
    out: dict[str, Any] = {}
    for part in parts:
        missing = (gpu if part in gpu_parts else []) + common
        for mod in PART_MODULES[part]:
            if not _has_module(mod):
                hint = (
                    " (a GPU image with vLLM, e.g. Ray's ray-llm image, or pip install 'ray[llm]')"
                    if mod == "vllm"
                    else ""
                )
                missing.append(f"Python package {mod} is not installed{hint}")
        if models_dir is not None and models_dir.is_dir():
            for d in PART_DIRS[part]:
                if not _model_dir_ok(models_dir / d):
                    missing.append(f"{models_dir / d}/ is missing or empty: {MODEL_DIRS[d]}")
            if part in ("ner", "ner_models") and not any(_model_dir_ok(models_dir / d) for d in NER_TOKEN_DIRS):
                missing.append(
                    f"none of {models_dir}/ner-en/, ner-de/, ner-zh/ is there: "
                    "the cascade needs at least one token-classification model"
                )
        if part == "ner" and not _has_module(NER_CASCADE_MODULE):
            missing.append(f"{NER_CASCADE_MODULE} is not in this checkout (python -m {NER_CASCADE_MODULE})")
        out[part] = {"ok": not missing, "missing": missing}
    return {"environment": env, "prerequisites": out}


def _model_dir_ok(path: Path) -> bool:
    return path.is_dir() and any(path.iterdir())
