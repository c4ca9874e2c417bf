"""The operator's Prometheus metrics, defined once."""

from prometheus_client import Counter, Gauge, Histogram

RECONCILES = Counter(
    "sentinel_operator_reconciles", "Reconciles of RAGEngines by result.", ["result"]
)
RECONCILE_DURATION = Histogram(
    "sentinel_operator_reconcile_duration_seconds", "Time to reconcile one RAGEngine."
)
ENGINES = Gauge("sentinel_operator_engines", "RAGEngines by Ready condition status.", ["ready"])
for _result in ("success", "error", "invalid_spec"):
    RECONCILES.labels(_result)
