"""The shipped dashboard and alerts as data, and which metric names their PromQL reads.

Shared by the static checks (tests/observability) and the live Prometheus test
(tests/cluster/test_prometheus.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from prometheus_client import CollectorRegistry

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "charts" / "sentinel" / "dashboards" / "sentinel.json"
ALERTS = ROOT / "charts" / "sentinel" / "files" / "alerts.yaml"
ALERT_TESTS = ROOT / "tests" / "observability" / "alerts_test.yaml"

# What Grafana puts in for its variables when the test asks Prometheus directly.
GRAFANA_VARIABLES = {
    "$__rate_interval": "1m",
    "$__interval": "15s",
    "$__range": "5m",
    "${namespace}": ".*",
    "$namespace": ".*",
}

# Sample-name suffixes each metric type exports (prometheus_client's text format).
SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("", "_sum", "_count", "_created"),
    "info": ("_info",),
    "gauge": ("",),
    "stateset": ("",),
    "enum": ("",),
    "unknown": ("",),
}

# Words of PromQL that look like metric names: keywords, modifiers and number literals.
_NOT_METRICS = frozenset(
    {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset"}
    | {"and", "or", "unless", "atan2", "inf", "nan"}
)


@dataclass(frozen=True)
class Query:
    """One PromQL expression of the dashboard or the alerts, and where it comes from."""

    where: str
    expr: str


def dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def alert_rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))["groups"]
    return [rule for group in groups for rule in group["rules"]]


def panels(board: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """Every panel, those inside collapsed rows included."""
    for panel in (board or dashboard())["panels"]:
        yield panel
        yield from panel.get("panels", [])


def dashboard_queries(board: dict[str, Any] | None = None) -> list[Query]:
    """Every target expression and every query variable, as written (variables unsubstituted)."""
    board = board or dashboard()
    found = [
        Query(f"panel {panel['title']!r} target {target['refId']}", target["expr"])
        for panel in panels(board)
        for target in panel.get("targets", [])
    ]
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            text = query["query"] if isinstance(query, dict) else query
            found.append(Query(f"variable {variable['name']!r}", text))
    return found


def alert_queries() -> list[Query]:
    return [Query(f"alert {rule['alert']}", rule["expr"]) for rule in alert_rules()]


def substitute(expr: str) -> str:
    """The expression Grafana would send, with the test's values for its variables."""
    for variable, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, value)
    if "$" in expr:
        raise ValueError(f"unknown Grafana variable left in {expr!r}")
    return expr


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression (or a Grafana ``label_values`` query) reads.

    Strings, label matchers, range and subquery brackets and grouping clauses are cut out
    first; what remains is function and aggregation names (followed by a parenthesis),
    keywords, numbers and metric names.
    """
    text = re.sub(r"label_values\(\s*([^,()]+?)\s*,\s*\w+\s*\)", r"\1", expr)
    text = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', text)
    text = re.sub(r"\{[^{}]*\}", " ", text)
    text = re.sub(r"\[[^\[\]]*\]", " ", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", " ", text)
    names = set()
    for match in re.finditer(r"(?<![\w.$])[A-Za-z_:][\w:]*", text):
        name = match.group(0)
        if name.lower() in _NOT_METRICS or text[match.end() :].lstrip().startswith("("):
            continue
        names.add(name)
    return names


def exported_names(registry: CollectorRegistry) -> set[str]:
    """Every sample name the registry's metrics export, whether or not a labelled child
    exists yet: taken from each family's type, not from the samples of the moment."""
    names = set()
    for family in registry.collect():
        for suffix in SUFFIXES.get(family.type, ("",)):
            names.add(family.name + suffix)
    return names


def missing_metrics(queries: list[Query], exported: set[str]) -> dict[str, set[str]]:
    """Per query, the metric names it reads that nothing exports."""
    missing = {}
    for query in queries:
        unknown = metric_names(query.expr) - exported
        if unknown:
            missing[query.where] = unknown
    return missing
