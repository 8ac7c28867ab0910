"""OpenTelemetry tracing: one trace per request and per corpus build, a span per hop.

Serve's own tracing (Ray Serve ``TracingConfig``) opens the request's span in the HTTP proxy and a
span per deployment call, and carries the context across handle calls; this module gives it the
exporter (``span_processors``: OTLP over HTTP to ``tracing.endpoint``, batched, off the request
path) and the spans inside a deployment: ``span("agent.retrieve", ...)`` is a child of whatever
span is current. Processes Serve does not set up (a corpus build's driver and stage actors, the
in-process agent of the benchmarks) call ``setup_process``. A build's actors continue the
driver's trace from ``carrier()`` / ``continued(carrier)`` (W3C ``traceparent``).

Off (``tracing.enabled: false``, the default) no tracer provider is set and every ``span`` is
OpenTelemetry's non-recording span: nothing is exported and nothing measurable is spent. A backend
that is down costs the request nothing: spans are exported by a background thread within
``tracing.export_timeout_s`` and dropped when that fails.

LLM spans carry the OpenInference and GenAI semantic attributes (``llm_attributes``): model, token
counts; the prompt and completion text only with ``tracing.record_prompts``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from medgraph.config.observe import TracingConfig

log = logging.getLogger(__name__)

TRACER = "medgraph"
# the environment that carries the exporter's settings into Serve's proxy and replica processes
ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
RESOURCE_ENV = "OTEL_RESOURCE_ATTRIBUTES"
SERVICE_ENV = "OTEL_SERVICE_NAME"
TIMEOUT_ENV = "MEDGRAPH_TRACING_EXPORT_TIMEOUT_S"
PROMPTS_ENV = "MEDGRAPH_TRACING_RECORD_PROMPTS"
EXPORTER_IMPORT_PATH = "medgraph.observe.tracing:span_processors"
# Phoenix files spans under the project this resource attribute names (OpenInference)
PROJECT_ATTRIBUTE = "openinference.project.name"

_setup_lock = threading.Lock()
_process_setup = False
_propagator = TraceContextTextMapPropagator()


def tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER)


@contextmanager
def span(name: str, attributes: Mapping[str, Any] | None = None,
         kind: SpanKind = SpanKind.INTERNAL) -> Iterator[Span]:
    """A child span of the current one; an exception marks it as an error (and is re-raised)."""
    with tracer().start_as_current_span(name, kind=kind, attributes=_clean(attributes)) as current:
        yield current


def trace_id() -> str | None:
    """The current trace's ID (32 hex digits), or None outside a recorded trace (also in a request
    that ``sample_ratio`` left out: its ID would lead nowhere in the backend)."""
    ctx = trace.get_current_span().get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid and ctx.trace_flags.sampled else None


def carrier() -> dict[str, str]:
    """The current context as W3C headers, to hand to another process (a build's actors)."""
    out: dict[str, str] = {}
    _propagator.inject(out)
    return out


@contextmanager
def continued(headers: Mapping[str, str] | None) -> Iterator[None]:
    """Run the block in the trace ``headers`` (from ``carrier``) name; as it is when they name none."""
    if not headers:
        yield
        return
    token = otel_context.attach(_propagator.extract(carrier=dict(headers)))
    try:
        yield
    finally:
        otel_context.detach(token)


def llm_attributes(model: str, prompt_tokens: int | None, completion_tokens: int | None,
                   messages: Sequence[Mapping[str, str]] | None = None, completion: str | None = None,
                   record_prompts: bool = False) -> dict[str, Any]:
    """OpenInference + GenAI semantic attributes of one LLM call (text only with ``record_prompts``)."""
    out: dict[str, Any] = {
        "openinference.span.kind": "LLM", "llm.model_name": model, "gen_ai.request.model": model,
        "llm.token_count.prompt": prompt_tokens, "llm.token_count.completion": completion_tokens,
        "gen_ai.usage.input_tokens": prompt_tokens, "gen_ai.usage.output_tokens": completion_tokens,
    }
    if prompt_tokens is not None and completion_tokens is not None:
        out["llm.token_count.total"] = prompt_tokens + completion_tokens
    if record_prompts:
        for i, message in enumerate(messages or []):
            out[f"llm.input_messages.{i}.message.role"] = message.get("role", "")
            out[f"llm.input_messages.{i}.message.content"] = message.get("content", "")
        if completion is not None:
            out["llm.output_messages.0.message.role"] = "assistant"
            out["llm.output_messages.0.message.content"] = completion
    return out


class LlmCall:
    """What one LLM call reports to its span (``llm_call``)."""

    def __init__(self, span: Span, model: str, messages: Sequence[Mapping[str, str]]) -> None:
        self.span, self.model, self.messages = span, model, messages

    def done(self, completion: str, prompt_tokens: int | None = None, completion_tokens: int | None = None) -> None:
        if self.span.is_recording():
            self.span.set_attributes(_clean(llm_attributes(
                self.model, prompt_tokens, completion_tokens, self.messages, completion, record_prompts())) or {})


@contextmanager
def llm_call(model: str, messages: Sequence[Mapping[str, str]]) -> Iterator[LlmCall]:
    """The span of one LLM call (``llm.generate``), ended when the block ends. It is not made the
    current span, so a streamed answer's generator may run its block across threads."""
    current = tracer().start_span("llm.generate", kind=SpanKind.CLIENT)
    try:
        yield LlmCall(current, model, messages)
    except BaseException as exc:
        if current.is_recording():
            current.record_exception(exc)
            current.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        current.end()


def record_prompts() -> bool:
    """Whether LLM spans carry the prompt and completion text (``tracing.record_prompts``)."""
    return os.environ.get(PROMPTS_ENV) == "1"


def _clean(attributes: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """OpenTelemetry takes str / bool / int / float (and lists of one of them); None is left out."""
    if not attributes:
        return None
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, (str, bool, int, float)):
            out[key] = value
        elif isinstance(value, (list, tuple)):
            out[key] = [v if isinstance(v, (str, bool, int, float)) else str(v) for v in value]
        else:
            out[key] = str(value)
    return out


# --- exporting ---------------------------------------------------------------------------------


def exporter_environment(cfg: TracingConfig) -> dict[str, str]:
    """What ``span_processors`` reads in each Serve process: set before Ray starts."""
    return {ENDPOINT_ENV: cfg.endpoint, TIMEOUT_ENV: str(cfg.export_timeout_s),
            PROMPTS_ENV: "1" if cfg.record_prompts else "0",
            # the resource of every provider, Serve's too: the service and the backend's project
            RESOURCE_ENV: f"{PROJECT_ATTRIBUTE}={cfg.project}", SERVICE_ENV: "medgraph"}


def span_processors() -> list[Any]:
    """The span processors of a process (Serve's exporter hook; ``setup_process``): a batch
    processor over OTLP/HTTP to ``$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    timeout = float(os.environ.get(TIMEOUT_ENV, "2"))
    logging.getLogger("opentelemetry.exporter.otlp.proto.http.trace_exporter").setLevel(logging.ERROR)
    exporter = OTLPSpanExporter(endpoint=os.environ.get(ENDPOINT_ENV) or None, timeout=timeout)
    return [BatchSpanProcessor(exporter, schedule_delay_millis=500, export_timeout_millis=int(1000 * timeout))]


def serve_tracing_config(cfg: TracingConfig) -> Any:
    """Serve's ``TracingConfig`` for ``serve.start`` (None when tracing is off)."""
    if not cfg.enabled:
        return None
    from ray.serve.schema import TracingConfig as ServeTracingConfig

    os.environ.update(exporter_environment(cfg))
    return ServeTracingConfig(enabled=True, exporter_import_path=EXPORTER_IMPORT_PATH,
                              sampling_ratio=cfg.sample_ratio)


def setup_process(cfg: TracingConfig, service: str) -> bool:
    """Set this process's tracer provider (once) when tracing is on; True when it is."""
    global _process_setup
    if not cfg.enabled:
        return False
    with _setup_lock:
        if _process_setup:
            return True
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.sampling import ParentBasedTraceIdRatio

        os.environ.update(exporter_environment(cfg))
        provider = TracerProvider(sampler=ParentBasedTraceIdRatio(cfg.sample_ratio),
                                  resource=Resource.create({"service.name": service, PROJECT_ATTRIBUTE: cfg.project}))
        for processor in span_processors():
            provider.add_span_processor(processor)
        trace.set_tracer_provider(provider)
        _process_setup = True
        return True


def flush(timeout_s: float = 5.0) -> None:
    """Export what is buffered (the end of a build, a benchmark)."""
    from opentelemetry.sdk.trace import TracerProvider

    provider = trace.get_tracer_provider()
    if isinstance(provider, TracerProvider):  # the API's default (tracing off) buffers nothing
        provider.force_flush(int(timeout_s * 1000))
