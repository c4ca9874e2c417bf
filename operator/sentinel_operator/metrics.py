"""The operator's Prometheus metrics, defined once, on a registry of their own.

The operator imports the runtime's policy parser, which loads the runtime's metrics into the
default registry; serving that registry would publish runtime series (policy readiness,
scanner errors) from a process that scans nothing, and page on them.
"""

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)

REGISTRY = CollectorRegistry()
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)
GCCollector(registry=REGISTRY)

RECONCILES = Counter(
    "sentinel_operator_reconciles",
    "Reconciles of RAGEngines by result.",
    ["result"],
    registry=REGISTRY,
)
RECONCILE_DURATION = Histogram(
    "sentinel_operator_reconcile_duration_seconds",
    "Time to reconcile one RAGEngine.",
    registry=REGISTRY,
)
ENGINES = Gauge(
    "sentinel_operator_engines",
    "RAGEngines by Ready condition status.",
    ["ready"],
    registry=REGISTRY,
)
for _result in ("success", "error", "invalid_spec"):
    RECONCILES.labels(_result)
POLICY_EVENTS = Counter(
    "sentinel_operator_policy_events",
    "ConfigMap events the policy watch handled (only policy ConfigMaps engines use).",
    registry=REGISTRY,
)
