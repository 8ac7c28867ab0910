"""The import graph keeps its shape: dependencies point down the layers, no file imports another
file that (directly or through others) imports it back, and no package imports another's private
names.

Layers, top to bottom (a module may import its own package and anything in a lower layer; packages
in one layer may import each other, but never in a circle between files):

    benchmarks
    medgraph.eval                      evaluation harness: runs the agent in process (serve.inprocess)
    serve, jobs                        the Ray Serve application and the Ray Data jobs
    medgraph.assemble                  builds the parts from the config (for serve, eval, benchmarks)
    medgraph.agent
    medgraph.community, medgraph.literature, medgraph.synthetic (synthetic QA from the built graph),
                                       medgraph.optimise (GEPA over the DSPy programs)
    medgraph.retrieve, medgraph.route, medgraph.generate
    medgraph.index, medgraph.memory, medgraph.auth, medgraph.llm
    medgraph.stores
    medgraph.extract, medgraph.link    NER and linking
    medgraph.embed, medgraph.ontology
    medgraph.ingest, medgraph.graph, medgraph.testing
    medgraph (the package's own __init__), medgraph.config, medgraph.schemas, medgraph.lang (language packs),
                                       medgraph.text, medgraph.observe (tracing), medgraph.lru (a bounded map),
                                       medgraph.gcpause (the collector paused for bulk reads)

Imports are read from the source (``ast``), including those inside functions and under
``TYPE_CHECKING``: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("medgraph", "jobs", "serve", "benchmarks")
LAYERS: list[set[str]] = [
    {"benchmarks"},
    {"medgraph.eval"},
    {"serve", "jobs"},
    {"medgraph.assemble"},
    {"medgraph.agent"},
    {"medgraph.community", "medgraph.literature", "medgraph.synthetic", "medgraph.optimise"},
    {"medgraph.retrieve", "medgraph.route", "medgraph.generate"},
    {"medgraph.index", "medgraph.memory", "medgraph.auth", "medgraph.llm"},
    {"medgraph.stores"},
    {"medgraph.extract", "medgraph.link"},
    {"medgraph.embed", "medgraph.ontology"},
    {"medgraph.ingest", "medgraph.graph", "medgraph.testing"},
    {"medgraph", "medgraph.config", "medgraph.schemas", "medgraph.lang", "medgraph.text", "medgraph.observe",
     "medgraph.lru", "medgraph.gcpause"},
]


def _modules() -> dict[str, Path]:
    mods = {}
    for root in ROOTS:
        for path in (REPO / root).rglob("*.py"):
            name = ".".join(path.relative_to(REPO).with_suffix("").parts)
            mods[name.removesuffix(".__init__")] = path
    return mods


def _imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the modules of this repository it imports (the longest existing module prefix)."""

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = defaultdict(set)
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [resolve(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                targets = [resolve(f"{base}.{alias.name}") or resolve(base) for alias in node.names]
            edges[mod].update(t for t in targets if t and t != mod)
    return edges


def _unit(mod: str) -> str:
    parts = mod.split(".")
    return ".".join(parts[:2]) if parts[0] == "medgraph" and len(parts) > 1 else parts[0]


def _layer(mod: str) -> int:
    unit = _unit(mod)
    for i, layer in enumerate(LAYERS):
        if unit in layer:
            return i
    raise AssertionError(f"{unit} is in no layer: add it to LAYERS (and to the docstring)")


def _cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in list(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


EDGES = _imports(_modules())


def test_every_package_has_a_layer() -> None:
    for mod in EDGES:
        _layer(mod)


def test_imports_point_down_the_layers() -> None:
    upward = sorted((a, b) for a, targets in EDGES.items() for b in targets if _layer(b) < _layer(a))
    assert upward == [], "imports from a higher layer"


def test_no_circles_between_files() -> None:
    assert _cycles(EDGES) == [], "modules that import each other"


def test_no_package_imports_another_packages_private_names() -> None:
    private = []
    for mod, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                private += [f"{mod}: {node.module}.{alias.name}" for alias in node.names
                            if alias.name.startswith("_") and not alias.name.startswith("__")
                            and _unit(node.module) != _unit(mod)]
    assert private == []


def test_the_checks_see_a_circle_and_an_upward_import() -> None:
    """The graph code itself: a made-up graph with one circle and one upward edge."""
    edges = {"medgraph.schemas": {"medgraph.stores.graph"}, "medgraph.stores.graph": {"medgraph.schemas"}}
    assert _cycles(edges) == [{"medgraph.schemas", "medgraph.stores.graph"}]
    assert _layer("medgraph.schemas") > _layer("medgraph.stores.graph")
