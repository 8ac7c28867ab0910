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
