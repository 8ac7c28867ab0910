"""Tracing: spans nest and carry their errors, a build's actors continue the driver's trace, LLM
spans carry the GenAI / OpenInference attributes (text only when asked), a backend that is down
costs the traced work nothing, and with tracing off nothing is recorded."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from medgraph.config.observe import TracingConfig
from medgraph.observe import tracing


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    """Spans of the block recorded in memory (a provider of the test's own, not the process's)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(tracing, "tracer", lambda: provider.get_tracer("test"))
    yield exporter
    provider.shutdown()


def _by_name(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    return {s.name: s for s in exporter.get_finished_spans()}


def test_with_tracing_off_nothing_is_recorded() -> None:
    with tracing.span("agent.retrieve", {"k": 1}) as span:
        assert not span.is_recording()
        assert tracing.trace_id() is None
    assert tracing.carrier() == {}
    assert tracing.setup_process(TracingConfig(enabled=False), "x") is False


def test_a_request_left_out_by_the_sample_ratio_has_no_trace_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its spans have IDs but go nowhere: no X-Trace-Id / X-Trace-URL for it (they would lead nowhere)."""
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    provider = TracerProvider(sampler=ALWAYS_OFF)
    monkeypatch.setattr(tracing, "tracer", lambda: provider.get_tracer("test"))
    with tracing.span("request") as root:
        assert root.get_span_context().is_valid and not root.is_recording()
        assert tracing.trace_id() is None


def test_spans_nest_and_an_error_is_recorded_on_its_span(spans: InMemorySpanExporter) -> None:
    with tracing.span("request") as root:
        assert tracing.trace_id() == format(root.get_span_context().trace_id, "032x")
        with tracing.span("agent.retrieve", {"paths": ["dense", "sparse"], "skipped": None}):
            pass
        with pytest.raises(TimeoutError), tracing.span("retrieve.ppr"):
            raise TimeoutError("the graph store did not answer")
    found = _by_name(spans)
    root_id = found["request"].context.span_id
    assert found["agent.retrieve"].parent.span_id == root_id
    assert found["agent.retrieve"].attributes["paths"] == ("dense", "sparse")
    assert "skipped" not in found["agent.retrieve"].attributes
    assert found["retrieve.ppr"].parent.span_id == root_id
    assert found["retrieve.ppr"].status.status_code == StatusCode.ERROR
    assert found["retrieve.ppr"].events[0].name == "exception"


def test_another_process_continues_the_trace_from_the_carrier(spans: InMemorySpanExporter) -> None:
    with tracing.span("corpus.build") as build:
        headers = tracing.carrier()
    assert headers["traceparent"].split("-")[1] == format(build.get_span_context().trace_id, "032x")
    with tracing.continued(headers), tracing.span("build.embed"):
        pass
    with tracing.continued(None), tracing.span("unrelated"):
        pass
    found = _by_name(spans)
    assert found["build.embed"].parent.span_id == found["corpus.build"].context.span_id
    assert found["build.embed"].context.trace_id == found["corpus.build"].context.trace_id
    assert found["unrelated"].parent is None


def test_a_stage_batch_is_a_span_of_the_build(spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch) -> None:
    from jobs.stages import BuildTrace, traced

    monkeypatch.setattr(tracing, "setup_process", lambda cfg, service: cfg.enabled)

    class Stage:
        def __init__(self, trace: BuildTrace | None) -> None:
            self.trace = trace

        @traced("extract")
        def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
            return {**batch, "kind": np.array(["chunk", "failure", "chunk"])}

    batch = {"kind": np.array(["chunk", "chunk", "chunk"])}
    with tracing.span("corpus.build"):
        trace = BuildTrace(TracingConfig(enabled=True), tracing.carrier())
    assert Stage(trace)(batch)["kind"][1] == "failure"
    assert Stage(None)(batch)["kind"][1] == "failure"  # no trace: the stage runs as it is
    found = [s for s in spans.get_finished_spans() if s.name == "build.extract"]
    assert len(found) == 1
    assert dict(found[0].attributes) == {"rows_in": 3, "rows_out": 3, "failures": 1}
    assert found[0].parent.span_id == _by_name(spans)["corpus.build"].context.span_id


def test_llm_spans_carry_tokens_and_text_only_when_asked(spans: InMemorySpanExporter,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    messages = [{"role": "user", "content": "Patient Anna Muster, 54: is metformin safe?"}]
    monkeypatch.setenv(tracing.PROMPTS_ENV, "0")
    with tracing.llm_call("llamacpp:gemma", messages) as call:
        call.done("Yes [1].", 12, 4)
    monkeypatch.setenv(tracing.PROMPTS_ENV, "1")
    with tracing.llm_call("llamacpp:gemma", messages) as call:
        call.done("Yes [1].", 12, 4)
    quiet, verbose = [s.attributes for s in spans.get_finished_spans()]
    for attrs in (quiet, verbose):
        assert attrs["llm.model_name"] == attrs["gen_ai.request.model"] == "llamacpp:gemma"
        assert (attrs["llm.token_count.prompt"], attrs["llm.token_count.completion"]) == (12, 4)
        assert attrs["llm.token_count.total"] == 16 and attrs["openinference.span.kind"] == "LLM"
    assert not any("Anna" in str(v) for v in quiet.values())  # questions can hold patient data
    assert verbose["llm.input_messages.0.message.content"] == messages[0]["content"]
    assert verbose["llm.output_messages.0.message.content"] == "Yes [1]."


def test_a_failed_llm_call_is_an_error_span(spans: InMemorySpanExporter) -> None:
    with pytest.raises(RuntimeError), tracing.llm_call("m", []):
        raise RuntimeError("the model is asleep")
    (span,) = spans.get_finished_spans()
    assert span.status.status_code == StatusCode.ERROR and "asleep" in span.status.description


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_backend_that_is_down_costs_the_traced_work_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = TracingConfig(enabled=True, endpoint=f"http://127.0.0.1:{_closed_port()}/v1/traces", export_timeout_s=0.5)
    for key, value in tracing.exporter_environment(cfg).items():
        monkeypatch.setenv(key, value)
    provider = TracerProvider()
    for processor in tracing.span_processors():
        provider.add_span_processor(processor)
    monkeypatch.setattr(tracing, "tracer", lambda: provider.get_tracer("test"))
    started = time.perf_counter()
    for i in range(200):
        with tracing.span("agent.generate", {"i": i}):
            pass
    assert time.perf_counter() - started < 0.5  # spans are handed to the exporter's thread
    started = time.perf_counter()
    provider.force_flush(3000)  # the export fails, within its limit, and the spans are dropped
    assert time.perf_counter() - started < 3.0
    provider.shutdown()


def test_every_span_goes_to_the_configured_project(monkeypatch: pytest.MonkeyPatch) -> None:
    """Serve builds its processes' providers itself: the project reaches them through the resource
    that OpenTelemetry reads from the environment."""
    from opentelemetry.sdk.resources import Resource

    env = tracing.exporter_environment(TracingConfig(enabled=True, project="medgraph-test"))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    resource = TracerProvider().resource
    assert resource.attributes[tracing.PROJECT_ATTRIBUTE] == "medgraph-test"
    assert resource.attributes["service.name"] == "medgraph"
    assert Resource.create().attributes[tracing.PROJECT_ATTRIBUTE] == "medgraph-test"
