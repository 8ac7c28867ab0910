"""Observability: OpenTelemetry traces of requests and builds (``tracing``)."""
