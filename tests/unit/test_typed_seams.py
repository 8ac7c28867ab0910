"""The seams between services and stores are narrow and typed (docs/architecture.md, "Seams").

- No service or store takes or returns a bare ``Any``: every constructor and method parameter and
  every return type is a named type or protocol (``dict[str, Any]`` stays for JSON documents: API
  payloads, run summaries, store metadata).
- No capability probing of injected dependencies (``getattr`` / ``hasattr`` on a store, an
  embedder, an extractor, a source): a capability is a method of the protocol, implemented by
  every backend (``GraphReader.refresh``, ``CommunityStore.leiden``, ``Embedder.has_dense``).
- The graph store is split by role and both backends implement every role.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# the classes that are services (a Serve deployment's class, or a part of one) or stores
SEAMS: dict[str, list[str]] = {
    "serve/services.py": ["AnalyzerService", "RetrieverService", "GraphExplorer", "LiveIngestion",
                          "RerankerService", "RouterService"],
    "serve/agent.py": ["AgentService"],
    "serve/tiers.py": ["TierService"],
    "medgraph/stores/embedded.py": ["EmbeddedGraphStore"],
    "medgraph/stores/neo4j_store.py": ["Neo4jGraphStore"],
    "medgraph/stores/vector.py": ["QdrantVectorStore"],
    "medgraph/retrieve/retriever.py": ["Retriever"],
}

# modules whose injected dependencies must not be probed for capabilities
NO_PROBING = [*SEAMS, "medgraph/retrieve/ppr.py", "medgraph/retrieve/paths.py", "medgraph/community/build.py",
              "medgraph/community/index.py", "medgraph/generate/extractive.py", "medgraph/literature/gaps.py",
              "medgraph/index/pipeline.py", "medgraph/agent/graph.py"]


def _bare_any(annotation: ast.expr | None) -> bool:
    """``Any`` itself, or inside anything but the value of a ``dict[str, Any]`` (a JSON document)."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        annotation = ast.parse(annotation.value, mode="eval").body
    for node in ast.walk(annotation):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "dict":
            key_value = node.slice
            if (isinstance(key_value, ast.Tuple) and len(key_value.elts) == 2
                    and isinstance(key_value.elts[1], ast.Name) and key_value.elts[1].id == "Any"):
                key_value.elts[1] = ast.Name("JSON")  # allowed: mark it so the walk below skips it
    return any(isinstance(node, ast.Name) and node.id == "Any" for node in ast.walk(annotation))


def _signature_violations(path: str, classes: list[str]) -> list[str]:
    tree = ast.parse((REPO / path).read_text())
    found = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    missing = [c for c in classes if c not in found]
    assert not missing, f"{path}: no class {missing} (update SEAMS)"
    out = []
    for name in classes:
        for fn in found[name].body:
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if fn.name.startswith("_") and fn.name != "__init__":
                continue  # private helpers forward arguments; the seam is the public surface
            args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
            for arg in args:
                if _bare_any(arg.annotation):
                    out.append(f"{path}: {name}.{fn.name}({arg.arg}: {ast.unparse(arg.annotation)})")  # type: ignore[arg-type]
            if _bare_any(fn.returns):
                out.append(f"{path}: {name}.{fn.name}() -> {ast.unparse(fn.returns)}")  # type: ignore[arg-type]
    return out


def test_services_and_stores_take_and_return_named_types() -> None:
    violations = [v for path, classes in SEAMS.items() for v in _signature_violations(path, classes)]
    assert not violations, "bare Any at a service/store seam:\n" + "\n".join(violations)


def test_the_agents_dependencies_are_typed() -> None:
    """``AgentDeps``: what the agent's nodes call (guard, rewriter, session log, memory, planner, the
    deployments' calls) is a protocol or a typed callable, not ``Any``."""
    tree = ast.parse((REPO / "medgraph/agent/graph.py").read_text())
    deps = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "AgentDeps")
    fields = {n.target.id: n.annotation for n in deps.body
              if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    assert {"guard", "rewriter", "sessions", "memory", "planner", "retrieve"} <= set(fields)
    untyped = [name for name, annotation in fields.items() if _bare_any(annotation)]
    assert not untyped, f"AgentDeps fields typed Any: {untyped}"


def test_the_any_rule_sees_what_it_should() -> None:
    """The check itself: bare and nested Any are caught, a JSON dict is not."""
    def check(text: str) -> bool:
        return _bare_any(ast.parse(text, mode="eval").body)

    assert check("Any") and check("list[Any]") and check("Any | None") and check("dict[str, list[Any]]")
    assert not check("dict[str, Any]") and not check("list[dict[str, Any]]") and not check("Chunk | None")


def _probes(path: str, root: Path = REPO) -> list[str]:
    """``getattr(x, ...)`` / ``hasattr(x, ...)`` where ``x`` is an attribute of ``self`` or a parameter."""
    tree = ast.parse((root / path).read_text())
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]} - {"self", "cls"}
        for node in ast.walk(fn):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and node.args):
                target = node.args[0]
                injected = (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                            and target.value.id == "self") or (isinstance(target, ast.Name) and target.id in params)
                if injected:
                    out.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_capability_probing_of_injected_dependencies() -> None:
    probes = [p for path in NO_PROBING for p in _probes(path)]
    assert not probes, "capability probing (make it a protocol method instead):\n" + "\n".join(probes)


def test_the_probing_rule_sees_what_it_should(tmp_path: Path) -> None:
    source = ("class A:\n    def f(self, store):\n        g = getattr(store, 'gds', None)\n"
              "        return hasattr(self.graph, 'refresh')\n")
    (tmp_path / "m.py").write_text(source)
    assert len(_probes("m.py", tmp_path)) == 2


def test_the_graph_store_is_split_by_role_and_both_backends_implement_every_role() -> None:
    from medgraph.stores.embedded import EmbeddedGraphStore
    from medgraph.stores.graph import CommunityStore, GraphReader, GraphStore, GraphWriter, RunLog
    from medgraph.stores.neo4j_store import Neo4jGraphStore  # the driver is a core dependency
    roles = [GraphWriter, GraphReader, CommunityStore, RunLog]
    role_methods = {r.__name__: {n for n, v in vars(r).items() if inspect.isfunction(v) and not n.startswith("_")}
                    for r in roles}
    assert all(role_methods.values())
    assert not role_methods["GraphWriter"] & role_methods["RunLog"]  # writes of the graph, not of the log
    whole = {n for n, v in inspect.getmembers(GraphStore) if inspect.isfunction(v) and not n.startswith("_")}
    assert whole == set().union(*role_methods.values()) | {"close"}
    for store in (EmbeddedGraphStore, Neo4jGraphStore):
        missing = sorted(n for n in whole if not callable(getattr(store, n, None)))
        assert not missing, f"{store.__name__} lacks {missing}"
