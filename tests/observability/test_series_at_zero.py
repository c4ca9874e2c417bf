"""The series the alerts read exist before their first event, with values that raise no
false alarm.

Prometheus 2.x sees no increase in a series that first appears with the value 1, so an
alert on the first fail-closed error, reload failure, upstream error or reconcile error
would stay silent if the series were born with that event. And every `sentinel` process
defines the runtime's metrics, the operator included, so their starting values must not
page anyone.
"""

from __future__ import annotations

import subprocess
import sys

from prometheus_client import REGISTRY

import sentinel_operator.metrics as operator_metrics
from sentinel_runtime.guardrails.engine import build_engine
from sentinel_runtime.guardrails.policy import parse_policy


def _exists(name: str, **labels: str) -> bool:
    return any(
        registry.get_sample_value(name, labels) is not None
        for registry in (REGISTRY, operator_metrics.REGISTRY)
    )


def test_alerted_counters_exist_before_their_first_event() -> None:
    for reason in ("unreachable", "timeout", "http_status", "bad_response"):
        assert _exists("rag_llm_upstream_errors_total", reason=reason)
    assert _exists("guardrails_policy_reload_total", result="failure")
    assert _exists("sentinel_operator_reconciles_total", result="error")


def test_a_built_scanner_has_its_error_series_at_zero() -> None:
    labels = {"type": "ban_substrings", "fail_mode": "open"}
    before = REGISTRY.get_sample_value("output_guardrails_scanner_errors_total", labels)
    policy = "scanners:\n  - type: ban_substrings\n    failMode: open\n    substrings: [x]\n"
    build_engine(parse_policy(policy), "test")
    after = REGISTRY.get_sample_value("output_guardrails_scanner_errors_total", labels)
    assert after == (before or 0.0)
    assert after is not None


def test_a_process_that_loads_no_policy_reports_policy_ready() -> None:
    # A runtime before its first policy load: only a failed load may say 0.
    code = (
        "import sentinel_runtime.cli\n"
        "from prometheus_client import REGISTRY\n"
        "print(REGISTRY.get_sample_value('guardrails_policy_ready'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "1.0"
