"""The Grafana dashboard (cluster/grafana/medgraph.json) loads as a Grafana dashboard model, and
charts exactly the metrics the code records: every metric of ``medgraph.observe.metrics`` is on a
panel, and every metric a panel queries is recorded by the code (Ray exports its metrics with the
``ray_`` prefix; the tier gauges come from the ingress's ``/metrics``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from medgraph.observe.metrics import METRICS
from serve.metrics import _GAUGES
from tests.helpers import require_module

DASHBOARD = Path(__file__).resolve().parents[2] / "cluster" / "grafana" / "medgraph.json"
NAME = re.compile(r"\b(?:ray_)?medgraph_[a-z0-9_]+")


def _parse(expr: str) -> object:
    """The expression as Prometheus reads it (Grafana's own ``$__...`` intervals filled in)."""
    promql_parser = require_module("promql_parser", "MEDGRAPH_REQUIRE_DEPS", "promql-parser (the dev extra)")
    try:
        return promql_parser.parse(re.sub(r"\$__\w+", "5m", expr))
    except ValueError as exc:
        raise AssertionError(f"not PromQL: {expr}: {exc}") from exc


def test_the_query_check_rejects_what_prometheus_would() -> None:
    _parse("histogram_quantile(0.95, sum by (le) (rate(ray_medgraph_gate_wait_seconds_bucket[$__rate_interval])))")
    for bad in ("sum(rate(ray_medgraph_build_rows_total[5m])", "rate(ray_medgraph_build_rows_total)",
                "sum by le (ray_medgraph_build_rows_total)"):
        try:
            _parse(bad)
        except AssertionError:
            continue
        raise AssertionError(f"accepted: {bad}")


def _panels() -> list[dict]:
    return [p for p in json.loads(DASHBOARD.read_text(encoding="utf-8"))["panels"] if p["type"] != "row"]


def test_the_dashboard_is_a_grafana_dashboard_model() -> None:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert isinstance(dash["schemaVersion"], int) and dash["uid"] and dash["title"]
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    for p in dash["panels"]:
        assert {"x", "y", "w", "h"} <= set(p["gridPos"]) and p["gridPos"]["x"] + p["gridPos"]["w"] <= 24
    for p in _panels():
        assert p["type"] == "timeseries" and p["targets"], p["title"]
        assert p["datasource"]["uid"] == "${datasource}"
        assert [t["refId"] for t in p["targets"]] == [chr(65 + i) for i in range(len(p["targets"]))]
        for t in p["targets"]:
            _parse(t["expr"])


def _queried() -> set[str]:
    names = set()
    for p in _panels():
        for t in p["targets"]:
            for found in NAME.findall(t["expr"]):
                names.add(re.sub(r"_(bucket|sum|count)$", "", found.removeprefix("ray_")))
    return names


def test_every_recorded_metric_is_charted_and_every_charted_one_recorded() -> None:
    recorded = set(METRICS) | {name for name, *_ in _GAUGES}
    queried = _queried()
    assert set(METRICS) <= queried, set(METRICS) - queried
    assert queried <= recorded, queried - recorded


def test_histograms_are_read_through_their_buckets_and_counters_as_rates() -> None:
    for p in _panels():
        for t in p["targets"]:
            for name, (kind, *_rest) in METRICS.items():
                if name in t["expr"] and kind == "counter":
                    assert f"rate(ray_{name}[" in t["expr"], t["expr"]
                if f"{name}_bucket" in t["expr"]:
                    assert kind == "histogram" and "histogram_quantile(" in t["expr"], t["expr"]
