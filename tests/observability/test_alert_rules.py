"""The shipped alert rules: valid for promtool, complete for whoever is paged, and each one
proven by `promtool test rules` to fire on its condition and stay quiet otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from support.observability import ALERT_TESTS, ALERTS, alert_rules
from support.tools import run

NEEDED = {
    "SentinelGuardrailsFailClosedErrors",
    "SentinelPolicyReloadFailed",
    "SentinelGuardrailsPolicyMissing",
    "SentinelIndexFilesQuarantined",
    "SentinelKeysFileRejected",
    "SentinelEngineNotReady",
    "SentinelLLMUpstreamErrors",
    "SentinelHighServerErrorRatio",
    "SentinelTurnsShed",
    "SentinelOperatorReconcileErrors",
}


def test_promtool_check_rules_passes() -> None:
    result = run("promtool", "check", "rules", str(ALERTS))
    assert f"SUCCESS: {len(NEEDED)} rules found" in result.stdout


def test_every_alert_has_for_severity_and_its_annotations() -> None:
    rules = alert_rules()
    assert {rule["alert"] for rule in rules} == NEEDED
    for rule in rules:
        assert rule.get("for"), rule["alert"]
        assert rule["labels"]["severity"] in {"warning", "critical"}, rule["alert"]
        assert {"summary", "description", "runbook"} <= set(rule["annotations"]), rule["alert"]


def test_every_alert_is_unit_tested_firing_and_quiet() -> None:
    tests = yaml.safe_load(ALERT_TESTS.read_text(encoding="utf-8"))["tests"]
    checks = [check for test in tests for check in test["alert_rule_test"]]
    fired = {check["alertname"] for check in checks if check["exp_alerts"]}
    quiet = {check["alertname"] for check in checks if not check["exp_alerts"]}
    assert fired == NEEDED
    assert quiet == NEEDED


def test_promtool_unit_tests_pass() -> None:
    result = run("promtool", "test", "rules", str(ALERT_TESTS))
    assert "SUCCESS" in result.stdout


def _with_rule_file(tmp_path: Path, rules: dict) -> Path:
    rule_file = tmp_path / "alerts.yaml"
    rule_file.write_text(yaml.safe_dump(rules, sort_keys=False), encoding="utf-8")
    unit = yaml.safe_load(ALERT_TESTS.read_text(encoding="utf-8"))
    unit["rule_files"] = [str(rule_file)]
    test_file = tmp_path / "alerts_test.yaml"
    test_file.write_text(yaml.safe_dump(unit, sort_keys=False), encoding="utf-8")
    return test_file


@pytest.mark.parametrize("alert", sorted(NEEDED))
def test_the_unit_tests_catch_an_alert_that_never_fires(tmp_path: Path, alert: str) -> None:
    rules = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    for group in rules["groups"]:
        for rule in group["rules"]:
            if rule["alert"] == alert:
                rule["expr"] = f"({rule['expr']}) and on() vector(0) > 1"
    result = run("promtool", "test", "rules", str(_with_rule_file(tmp_path, rules)), check=False)
    assert result.returncode != 0
    assert f"alertname: {alert}," in result.stdout + result.stderr


@pytest.mark.parametrize("alert", sorted(NEEDED))
def test_the_unit_tests_catch_an_alert_that_fires_at_once(tmp_path: Path, alert: str) -> None:
    # Without its `for` and with its threshold gone, an alert fires where the tests say quiet.
    rules = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    for group in rules["groups"]:
        for rule in group["rules"]:
            if rule["alert"] == alert:
                rule["expr"] = rule["expr"].rsplit(">", 1)[0].rsplit("==", 1)[0] + " >= 0"
                del rule["for"]
    result = run("promtool", "test", "rules", str(_with_rule_file(tmp_path, rules)), check=False)
    assert result.returncode != 0
    assert f"alertname: {alert}," in result.stdout + result.stderr
