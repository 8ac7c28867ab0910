"""The library must import with Ray, FastAPI and vLLM unavailable (DESIGN: a Ray-free core)."""

from __future__ import annotations

import subprocess
import sys

MODULES = [
    "medgraph", "medgraph.schemas", "medgraph.config", "medgraph.ingest.loaders", "medgraph.ingest.chunking",
    "medgraph.ingest.pdf", "medgraph.extract.normalise", "medgraph.index.writer", "medgraph.stores",
    "medgraph.stores.embedded", "medgraph.ontology.vocabulary", "medgraph.link", "medgraph.embed",
]

SCRIPT = """
import sys
for name in ("ray", "fastapi", "vllm"):
    sys.modules[name] = None  # any import of these now raises ImportError
import importlib
for module in {modules!r}:
    importlib.import_module(module)
print("ok")
"""


def test_core_imports_with_ray_blocked():
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(modules=MODULES)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


ANSWER_SCRIPT = """
import sys
sys.modules["dspy"] = None  # the llm extra is not installed (make demo installs the dev extra only)
from medgraph.config.llm import LlamaCppEngineConfig
from medgraph.config.models import AnswerConfig
from medgraph.generate.engines import make_engine
from medgraph.assemble import LocalEngines

class Model:
    name = "m"
    def stream(self, messages, params):
        yield "Hand hygiene prevents infections [1]."

engine = make_engine(LlamaCppEngineConfig(kind="llamacpp", model_path="unused.gguf"), AnswerConfig(), model=Model())
assert engine.program_path is None
print("ok")
"""


def test_the_answer_engines_import_without_dspy():
    """DSPy comes with the llm extra; a tier without a compiled program must not need it (the demo's
    extractive default and a GGUF tier with the hand-written prompt)."""
    out = subprocess.run([sys.executable, "-c", ANSWER_SCRIPT], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
