"""The router, the engines and their configs import with Ray, FastAPI and vLLM unavailable (DESIGN: a Ray-free core)."""

from __future__ import annotations

import subprocess
import sys

MODULES = [
    "medgraph.config.llm", "medgraph.route", "medgraph.route.rules", "medgraph.route.llm", "medgraph.route.evaluate",
    "medgraph.llm", "medgraph.llm.llamacpp", "medgraph.llm.openai_compat", "medgraph.llm.vllm_config",
    "medgraph.generate.engines", "medgraph.generate.citations", "medgraph.generate.prompt",
]

SCRIPT = """
import sys
for name in ("ray", "fastapi", "vllm", "llama_cpp", "litellm"):
    sys.modules[name] = None  # any import of these now raises ImportError
import importlib
for module in {modules!r}:
    importlib.import_module(module)
from medgraph.config.llm import LlamaCppEngineConfig
from medgraph.config.models import AnswerConfig
from medgraph.generate.engines import make_engine
from medgraph.llm.base import ModelUnavailable
engine = make_engine(LlamaCppEngineConfig(kind="llamacpp", model_path="x.gguf"), AnswerConfig())
try:
    engine.wake()
except ModelUnavailable as exc:
    assert "llama-cpp-python is not installed" in str(exc), exc
print("ok")
"""


def test_llm_core_imports_without_ray_and_reports_missing_backends():
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(modules=MODULES)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
