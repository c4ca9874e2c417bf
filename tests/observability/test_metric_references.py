"""Every metric name the dashboard and the alerts query is one the code exports.

The exported names come from the real prometheus_client registry once the runtime's and the
operator's metric modules are imported, derived from each family's type (a counter exports
``_total`` and ``_created``, a histogram ``_bucket``, ``_sum`` and ``_count``, an info
``_info``, a gauge its name), so a labelled metric counts before its first child exists.
Renaming a metric in code without updating the dashboard or the alerts fails here.
"""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, Info
from prometheus_client.metrics import MetricWrapperBase

import sentinel_operator.metrics as operator_metrics
import sentinel_runtime.observability.metrics as runtime_metrics
from support.observability import (
    Query,
    alert_queries,
    dashboard_queries,
    exported_names,
    metric_names,
    missing_metrics,
)

CODE_METRICS = [
    value
    for module in (runtime_metrics, operator_metrics)
    for value in vars(module).values()
    if isinstance(value, MetricWrapperBase)
]


def _exported() -> set[str]:
    """What the runtime's /metrics (the default registry) and the operator's serve."""
    return exported_names(REGISTRY) | exported_names(operator_metrics.REGISTRY)


def _queries() -> list[Query]:
    return dashboard_queries() + alert_queries()


def test_every_dashboard_and_alert_metric_is_exported_by_the_code() -> None:
    assert missing_metrics(_queries(), _exported()) == {}


def test_every_query_reads_at_least_one_metric() -> None:
    # Guards the extractor: a query it reads nothing from would pass the check vacuously.
    empty = [query.where for query in _queries() if not metric_names(query.expr)]
    assert empty == []
    assert len(_queries()) >= 40


def test_exported_names_follow_the_metric_types() -> None:
    exported = _exported()
    assert {
        "rag_chat_requests_total",
        "rag_chat_requests_created",
        "rag_http_request_duration_seconds_bucket",
        "rag_http_request_duration_seconds_count",
        "guardrails_active_policy_info",
        "guardrails_policy_ready",
        "sentinel_operator_engines",
        "sentinel_operator_reconciles_total",
    } <= exported
    # A labelled metric is exported by name even before any child exists.
    assert "output_guardrails_scanner_triggered_total" in exported
    assert "rag_chat_requests" not in exported
    assert "guardrails_active_policy" not in exported


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ('sum by (le) (rate(a_bucket{x="y(z)", b=~"$namespace"}[5m]))', {"a_bucket"}),
        (
            "histogram_quantile(0.99, sum by (le, route) (rate(h_bucket[$__rate_interval])))",
            {"h_bucket"},
        ),
        (
            "a_total / on (job) group_left (version) b_info > bool 1e3 unless c offset 5m",
            {"a_total", "b_info", "c"},
        ),
        ("time() - (g{k='v'} > 0)", {"g"}),
        ("max without (pod) (x:recorded:rate5m) or vector(0)", {"x:recorded:rate5m"}),
        ("label_values(rag_http_requests_total, namespace)", {"rag_http_requests_total"}),
        ('count(up{job="a"} == Inf) and NaN', {"up"}),
    ],
)
def test_metric_names_are_read_from_promql(expr: str, names: set[str]) -> None:
    assert metric_names(expr) == names


def test_the_check_reports_a_name_nothing_exports() -> None:
    queries = [Query("fake", "sum(rate(rag_chat_requestz_total[5m])) / rag_chat_requests_total")]
    assert missing_metrics(queries, exported_names(REGISTRY)) == {
        "fake": {"rag_chat_requestz_total"}
    }


def _renamed(metric: MetricWrapperBase, registry: CollectorRegistry) -> MetricWrapperBase:
    kind = {"counter": Counter, "gauge": Gauge, "histogram": Histogram, "info": Info}[metric._type]
    return kind(
        f"{metric._name}_renamed",
        metric._documentation,
        list(metric._labelnames),
        registry=registry,
    )


@pytest.mark.parametrize("renamed", CODE_METRICS, ids=lambda metric: metric._name)
def test_renaming_a_queried_metric_in_code_fails_the_check(renamed: MetricWrapperBase) -> None:
    registry = CollectorRegistry(auto_describe=True)
    for metric in CODE_METRICS:
        if metric is renamed:
            _renamed(metric, registry)
        else:
            registry.register(metric)
    queried = set().union(*(metric_names(query.expr) for query in _queries()))
    before = _exported()
    lost = {name for name in before - exported_names(registry) if name in queried}
    reported = set().union(*missing_metrics(_queries(), exported_names(registry)).values())
    assert reported == lost
    if renamed._name not in {"rag_introspection_fallbacks"}:
        # Every other metric is charted or alerted on, so its rename is caught.
        assert lost, f"{renamed._name} is read by no dashboard query or alert"
