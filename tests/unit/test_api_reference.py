"""docs/api-reference.md is what the app's OpenAPI schema gives (``python -m serve.openapi_doc``), so
the reference is never written by hand; and it covers every route and every limit of the schema."""

from __future__ import annotations

from serve.openapi_doc import REFERENCE, current, main, render


def test_the_committed_reference_is_current() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == current(), "run: python -m serve.openapi_doc --write"
    assert main(["--check"]) == 0


def test_every_route_parameter_and_limit_is_rendered() -> None:
    from serve.api import app

    schema = app.openapi()
    text = render(schema)
    for path, operations in schema["paths"].items():
        for method in operations:
            assert f"## `{method.upper()} {path}`" in text
    # a body's limits reach the reader: the question's length and the session ID's pattern
    assert "| `message` | string | yes | min length `1`, max length `4000` |" in text
    assert "pattern `^[A-Za-z0-9_-]{1,128}$`" in text


def test_a_changed_schema_changes_the_reference() -> None:
    schema = {"paths": {"/x": {"get": {"description": "one", "responses": {"200": {"description": "ok"}}}}}}
    before = render(schema)
    schema["paths"]["/x"]["get"]["description"] = "two"
    assert render(schema) != before and "two" in render(schema)
