"""The vLLM tier at run time: LLMServer + tier gate on a GPU, answer, sleep, wake.

Runs only where vLLM and a CUDA GPU are present and ``MEDGRAPH_VLLM_TEST_MODEL`` names a small
local instruct model directory; everywhere else (this project's CI: CPU only) it skips with the
reason. The configuration it deploys is tested on CPU in tests/unit/test_vllm_config.py, and the same
gate code over real Serve handles, with an ``LLMServer``-shaped fake, in
tests/integration/test_vllm_fake_serve.py. ``benchmarks/gpu/run.sh`` measures the tier on a GPU.
"""

from __future__ import annotations

import importlib.util
import os
import shutil

import pytest

pytestmark = pytest.mark.integration


def _require_gpu_vllm() -> str:
    # skip-ok: vLLM runs on GPU clusters only; this test is for a machine with a GPU and a local model
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vLLM is not installed (the vllm tier runs on GPU clusters from Ray's LLM image)")  # skip-ok: GPU image only
    if shutil.which("nvidia-smi") is None:
        pytest.skip("no NVIDIA GPU: vLLM with sleep mode needs CUDA")  # skip-ok: needs a GPU
    model = os.environ.get("MEDGRAPH_VLLM_TEST_MODEL")
    if not model or not os.path.isdir(model):
        # skip-ok: model weights cannot be downloaded here; a GPU machine names its local copy
        pytest.skip("set MEDGRAPH_VLLM_TEST_MODEL to a local model directory (e.g. Qwen2.5-0.5B-Instruct)")
    return model


def test_vllm_tier_answers_sleeps_and_wakes():
    model = _require_gpu_vllm()
    from ray import serve

    from medgraph.config import load_config
    from medgraph.retrieve.types import QueryAnalysis
    from serve.app import tier_options
    from serve.tiers import TierService
    from serve.vllm_engine import build_llm_server
    from tests.unit.test_grounded_generation import EVIDENCE

    cfg = load_config(None, ["tiers.engines.gpu.kind=vllm", "tiers.engines.gpu.model_id=test",
                             f"tiers.engines.gpu.model_source={model}", "tiers.engines.gpu.max_model_len=2048",
                             "tiers.engines.gpu.gpu_memory_utilization=0.5", "tiers.small=gpu", "tiers.medium=gpu",
                             "tiers.large=gpu"])
    engine = cfg.tiers.engines["gpu"]
    app = serve.deployment(TierService).options(**tier_options("gpu", engine, cfg.serve)).bind(
        cfg, "gpu", build_llm_server(engine, "gpu"))
    handle = serve.run(app, name="vllm-tier-test", route_prefix=None)
    try:
        analysis = QueryAnalysis("Is metformin first-line for type 2 diabetes?", "en")
        answer = handle.answer.remote(analysis.text, analysis, EVIDENCE).result(timeout_s=600)
        assert answer.model_used == "vllm:test"
        slept = handle.sleep.remote().result(timeout_s=600)
        assert slept["slept"] and slept["state"] == "asleep"
        again = handle.answer.remote(analysis.text, analysis, EVIDENCE).result(timeout_s=600)  # wakes on demand
        stats = handle.stats.remote().result()
        assert stats["wakes"] == 1 and stats["sleeps"] == 1 and again.model_used == "vllm:test"
        assert stats["state"] == "awake" and stats["last_error"] == ""
    finally:
        serve.delete("vllm-tier-test")
