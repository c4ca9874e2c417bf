"""The Grafana dashboard is one a platform engineer can import and read: a Prometheus
datasource variable, every panel titled, described and with a unit, no overlapping panels,
and the views issue 5 asks for."""

from __future__ import annotations

from typing import Any

from support.observability import DASHBOARD, dashboard, panels

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def _content_panels() -> list[dict[str, Any]]:
    return [panel for panel in panels() if panel["type"] != "row"]


def test_dashboard_is_importable_json_with_a_datasource_variable() -> None:
    board = dashboard()
    assert board["schemaVersion"] >= 36
    assert board["uid"] and board["title"] == "Sentinel"
    assert board["id"] is None  # a fixed id would clash with dashboards already in Grafana
    variables = {variable["name"]: variable for variable in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    namespace = variables["namespace"]
    assert namespace["datasource"] == DATASOURCE
    assert namespace["includeAll"] and namespace["allValue"] == ".*"
    assert DASHBOARD.read_text(encoding="utf-8").endswith("}\n")


def test_every_panel_has_title_description_unit_and_the_variable_datasource() -> None:
    problems = []
    for panel in _content_panels():
        name = panel.get("title") or f"panel {panel['id']}"
        if not panel.get("title"):
            problems.append(f"{name}: no title")
        if len(panel.get("description", "")) < 40:
            problems.append(f"{name}: no useful description")
        if not panel["fieldConfig"]["defaults"].get("unit"):
            problems.append(f"{name}: no unit")
        if panel.get("datasource") != DATASOURCE:
            problems.append(f"{name}: datasource {panel.get('datasource')}")
        if not panel.get("targets"):
            problems.append(f"{name}: no query")
        for target in panel.get("targets", []):
            if target.get("datasource") != DATASOURCE or not target.get("expr"):
                problems.append(f"{name}: target {target.get('refId')} incomplete")
        ref_ids = [target["refId"] for target in panel.get("targets", [])]
        if len(ref_ids) != len(set(ref_ids)):
            problems.append(f"{name}: duplicate refIds")
    assert problems == []


def test_panels_have_unique_ids_and_do_not_overlap() -> None:
    every = list(panels())
    ids = [panel["id"] for panel in every]
    assert len(ids) == len(set(ids))
    cells: dict[tuple[int, int], str] = {}
    for panel in every:
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["x"] + grid["w"] <= 24, panel["title"]
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                assert (x, y) not in cells, f"{panel['title']} overlaps {cells[(x, y)]}"
                cells[(x, y)] = panel["title"]


def test_the_views_a_platform_engineer_needs_are_there() -> None:
    exprs = " ".join(target["expr"] for panel in panels() for target in panel.get("targets", []))
    for needed in (
        "rag_http_requests_total",
        "histogram_quantile(0.5, sum by (le, route, method) (rate(rag_http_request_duration",
        "histogram_quantile(0.95, sum by (le, route, method) (rate(rag_http_request_duration",
        "histogram_quantile(0.99, sum by (le, route, method) (rate(rag_http_request_duration",
        "sum by (action) (rate(rag_gate_decisions_total",
        "sum by (decision) (rate(rag_pipeline_decisions_total",
        "sum by (reason) (rate(rag_evidence_dropped_total",
        'rag_citation_validations_total{namespace=~"$namespace", result="invalid"}',
        "sum by (action) (rate(output_guardrails_actions_total",
        "sum by (type, action) (rate(output_guardrails_scanner_triggered_total",
        'output_guardrails_scanner_errors_total{namespace=~"$namespace", fail_mode="closed"}',
        "sum by (result) (increase(guardrails_policy_reload_total",
        "guardrails_policy_ready",
        "guardrails_active_policy_info",
        "sum by (reason) (rate(rag_llm_upstream_errors_total",
        "rag_pipeline_stage_duration_seconds_bucket",
        "sum by (result) (rate(sentinel_operator_reconciles_total",
        "sentinel_operator_reconcile_duration_seconds_bucket",
        "sum by (ready) (sentinel_operator_engines)",
        "sum by (subject, verdict) (rate(sentinel_guard_requests_total",
        'sum by (outcome) (rate(sentinel_guard_requests_total{namespace=~"$namespace", '
        'outcome!~"ok|skipped"}',
        "histogram_quantile(0.5, sum by (le, subject) (rate(sentinel_guard_request_duration",
        "histogram_quantile(0.99, sum by (le, subject) (rate(sentinel_guard_request_duration",
        'sentinel_guard_circuit_open{namespace=~"$namespace"}',
    ):
        assert needed in exprs, needed
    # The active policy hash is shown as a table of the info metric's labels.
    policy = next(panel for panel in panels() if panel["title"] == "Active policy")
    assert policy["type"] == "table"
    assert "sha256" in policy["targets"][0]["expr"]
    assert policy["targets"][0]["format"] == "table"
