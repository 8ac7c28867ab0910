"""The ``tracing`` section: OpenTelemetry traces of every request and corpus build."""

from __future__ import annotations

from pydantic import Field

from medgraph.config.base import _Model


class TracingConfig(_Model):
    """Traces over OTLP/HTTP (``medgraph/observe/tracing.py``; docs/operations.md, "Tracing").

    ``enabled``: false costs nothing (OpenTelemetry's no-op tracer). ``endpoint``: the backend's
    OTLP/HTTP traces URL (the bundled Arize Phoenix, ``make tracing-start``, listens on 6006).
    ``ui``: the backend's address for people, linked from the web interface (``{trace_id}`` is
    filled in). ``sample_ratio``: share of requests traced (parent-based: a hop follows its
    request). ``record_prompts``: LLM spans carry the prompt and completion text (questions can
    hold patient data: off by default). ``project``: the backend's project the spans go to.
    """

    enabled: bool = False
    endpoint: str = "http://127.0.0.1:6006/v1/traces"
    ui: str = "http://127.0.0.1:6006/redirects/traces/{trace_id}"  # a trace's page in the tracing UI
    project: str = "medgraph"
    sample_ratio: float = Field(default=1.0, ge=0.0, le=1.0)
    record_prompts: bool = False
    export_timeout_s: float = Field(default=2.0, gt=0)  # one export's limit: a dead backend costs only this, off the request path
