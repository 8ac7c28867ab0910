"""The API reference, ``docs/api-reference.md``, rendered from the app's own OpenAPI schema.

    python -m serve.openapi_doc            # print it
    python -m serve.openapi_doc --write    # write docs/api-reference.md
    python -m serve.openapi_doc --check    # exit 1 when the file is not what the schema gives

Every route is listed with its description (the route's docstring), its parameters and request
body with their limits, and the statuses it may answer; then every request body's fields. The
test suite checks that the committed file is current, so the reference is never written by hand
and never drifts from the code. Rules that span routes (identity, limits, errors) are in
``docs/api.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "api-reference.md"
_LIMITS = (("minLength", "min length"), ("maxLength", "max length"), ("minimum", "≥"), ("maximum", "≤"),
           ("exclusiveMinimum", ">"), ("exclusiveMaximum", "<"), ("minItems", "min items"),
           ("maxItems", "max items"), ("pattern", "pattern"))


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "enum" in schema:
        return " \\| ".join(f"`{v}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{schema['const']}`"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_type(s) for s in schema[key])
    if schema.get("type") == "array":
        return f"array of {_type(schema.get('items', {}))}"
    return str(schema.get("type", "any"))


def _limits(schema: dict[str, Any]) -> str:
    found = [f"{label} `{schema[key]}`" for key, label in _LIMITS if key in schema]
    for sub in schema.get("anyOf", []):
        found += [f"{label} `{sub[key]}`" for key, label in _LIMITS if key in sub]
    if "default" in schema and schema["default"] is not None:
        found.append(f"default `{schema['default']}`")
    return ", ".join(found)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


# routes in this order of their first path segment (questions, the graph, operations), then by path
_ORDER = ("chat", "v1", "route", "graph", "chunks", "corpus", "health", "metrics", "tiers", "admin")


def _rank(path: str) -> tuple[int, str]:
    first = path.strip("/").split("/")[0]
    return (_ORDER.index(first) if first in _ORDER else len(_ORDER), path)


def render(schema: dict[str, Any]) -> str:
    """The reference as Markdown, from an OpenAPI schema (``app.openapi()``)."""
    out = ["# API reference", "",
           "Generated from the app's OpenAPI schema by `python -m serve.openapi_doc --write`; do not edit "
           "it by hand (a test fails when it is out of date). Identity, limits and errors across routes: "
           "[api.md](api.md).", ""]
    for path, operations in sorted(schema["paths"].items(), key=lambda item: _rank(item[0])):
        for method, op in operations.items():
            out += [f"## `{method.upper()} {path}`", "", _cell(op.get("description") or op.get("summary", "")), ""]
            params = op.get("parameters", [])
            if params:
                out += ["| parameter | in | type | required | limits |", "|---|---|---|---|---|"]
                for p in params:
                    s = p.get("schema", {})
                    out.append(f"| `{p['name']}` | {p['in']} | {_type(s)} | {'yes' if p.get('required') else 'no'} "
                               f"| {_cell(_limits(s))} |")
                out.append("")
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body:
                out += [f"Body: {_type(body)}.", ""]
            statuses = ", ".join(f"{code} {_cell(r.get('description', ''))}" for code, r in op.get("responses", {}).items())
            out += [f"Answers: {statuses}.", ""]
    bodies = schema.get("components", {}).get("schemas", {})
    if bodies:
        out += ["## Bodies", ""]
        for name, s in bodies.items():
            if name in ("HTTPValidationError", "ValidationError"):
                continue
            out += [f"### {name}", "", "| field | type | required | limits |", "|---|---|---|---|"]
            required = set(s.get("required", []))
            for field, fs in s.get("properties", {}).items():
                out.append(f"| `{field}` | {_type(fs)} | {'yes' if field in required else 'no'} | {_cell(_limits(fs))} |")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def current() -> str:
    from serve.api import app

    return render(app.openapi())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m serve.openapi_doc", description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help=f"write {REFERENCE.name}")
    mode.add_argument("--check", action="store_true", help="exit 1 when the file is out of date")
    args = ap.parse_args(argv)
    text = current()
    if args.write:
        REFERENCE.write_text(text, encoding="utf-8")
    elif args.check:
        if not REFERENCE.is_file() or REFERENCE.read_text(encoding="utf-8") != text:
            sys.stderr.write(f"{REFERENCE} is out of date: python -m serve.openapi_doc --write\n")
            return 1
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
