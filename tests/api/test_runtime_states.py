"""Runtime states a platform engineer must be able to see: missing policy, disabled
guardrails, fail-closed and fail-open scanners, API key protection. The app runs in process
(``support.inprocess``), its policy file hot-reloaded by its own reloader thread."""

from __future__ import annotations

import time

import httpx
import pytest

from support.configmap import ConfigMapDir
from support.inprocess import AppRuntime

FAILURE_DETAIL = "Output guardrails failed while scanning the model response."
# Passes the load-time backtracking probe, then needs exponential time on "abc"*40 + "!".
SLOW_PATTERN = r"(?:abc|ab(?:c))+$"
SLOW_TEXT = "abc" * 40 + "!"


def chat(runtime: AppRuntime, text: str, **headers: str) -> httpx.Response:
    return runtime.client.post(
        "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": text}]},
        headers=headers,
    )


def wait_until(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_missing_policy_is_a_loud_error_until_the_file_appears(
    app_factory, configmap: ConfigMapDir
) -> None:
    runtime = app_factory(
        {
            "OUTPUT_GUARDRAILS_ENABLED": "true",
            "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
        }
    )
    ready = runtime.client.get("/ready")
    assert ready.status_code == 503
    assert ready.json()["guardrails"]["error"]["status"] == "missing"
    refused = chat(runtime, "hello")
    assert refused.status_code == 503
    assert "refusing to return unscanned output" in refused.json()["detail"]
    assert runtime.metric("guardrails_policy_ready") == 0
    assert runtime.counted("output_guardrails_policy_load_total", policy_status="missing") == 1
    assert '"event": "output_guardrails_policy_missing"' in runtime.logs()

    configmap.write("scanners:\n  - type: regex\n    patterns: ['secret-\\d+']\n")

    assert wait_until(lambda: runtime.client.get("/ready").status_code == 200)
    assert chat(runtime, "it is secret-42").json()["choices"][0]["message"]["content"] == (
        "it is [REDACTED]"
    )
    assert runtime.metric("guardrails_policy_ready") == 1
    assert runtime.counted("guardrails_policy_reload_total", result="success") == 1


def test_disabled_guardrails_load_nothing_and_pass_text_through(app_factory) -> None:
    runtime = app_factory({"OUTPUT_GUARDRAILS_ENABLED": "false"})
    answer = chat(runtime, "key AKIAIOSFODNN7EXAMPLE").json()
    assert answer["choices"][0]["message"]["content"] == "key AKIAIOSFODNN7EXAMPLE"
    assert answer["sentinel"]["guardrails"] == {"enabled": False}
    scan = runtime.client.post("/v1/guardrails/scan", json={"text": "x"})
    assert scan.status_code == 409
    assert 'enabled="false"' in runtime.metrics()
    assert '"event": "output_guardrails_hot_reload_disabled"' in runtime.logs()


@pytest.mark.parametrize(
    ("fail_mode", "status"),
    [pytest.param("closed", 500, id="fail-closed"), pytest.param("open", 200, id="fail-open")],
)
def test_scanner_exception_honours_fail_mode(
    app_factory, configmap: ConfigMapDir, fail_mode: str, status: int
) -> None:
    configmap.write(
        "scanners:\n"
        f"  - type: regex\n    failMode: {fail_mode}\n    patterns: ['{SLOW_PATTERN}']\n"
        "  - type: ban_substrings\n    substrings: [abcabc]\n    match_type: str\n"
    )
    runtime = app_factory(
        {
            "OUTPUT_GUARDRAILS_ENABLED": "true",
            "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
        }
    )
    response = chat(runtime, SLOW_TEXT)
    assert response.status_code == status
    if fail_mode == "closed":
        assert response.json()["detail"] == FAILURE_DETAIL
        assert response.json()["error"]["type"] == "server_error"
        assert runtime.counted("rag_chat_requests_total", status="failure") == 1
    else:
        body = response.json()
        # The failing scanner is skipped; the next one still redacts.
        assert body["choices"][0]["message"]["content"].startswith("[REDACTED]")
        failures = body["sentinel"]["guardrails"]["choices"][0]["failOpen"]
        assert failures == [
            {"index": 0, "type": "regex", "error": "TimeoutError", "failMode": "open"}
        ]
    assert (
        runtime.counted("output_guardrails_scanner_errors_total", type="regex", fail_mode=fail_mode)
        == 1
    )
    assert f'"fail_open": {str(fail_mode == "open").lower()}' in runtime.logs()


def test_api_key_protects_everything_but_probes_and_metrics(app_factory) -> None:
    runtime = app_factory({"RUNTIME_API_KEY": "s3cret-key"})
    assert chat(runtime, "hi").status_code == 401
    assert chat(runtime, "hi", Authorization="Bearer wrong").status_code == 401
    for path in ("/health", "/ready", "/metrics"):
        assert runtime.client.get(path).status_code == 200
    reply = runtime.openai("s3cret-key").chat.completions.create(
        model="x", messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.choices[0].message.content == "hi"


def test_policy_endpoint_and_scan_endpoint_use_the_default_policy(app_factory) -> None:
    runtime = app_factory()  # as `sentinel serve` with no env: the shipped default policy
    policy = runtime.client.get("/v1/guardrails/policy").json()
    assert [s["type"] for s in policy["scanners"]] == ["regex", "secrets", "sensitive"]
    assert policy["skipped"] == []
    assert 'scanner_count="3"' in runtime.metrics()
    scan = runtime.client.post(
        "/v1/guardrails/scan", json={"text": "mail bob@example.com from 10.0.0.1"}
    ).json()
    assert scan["text"] == "mail <EMAIL> from <IP_ADDRESS>"
    assert scan["action"] == "redact"
    assert scan["policyHash"] == policy["sha256"]
    too_big = runtime.client.post("/v1/guardrails/scan", json={"text": "x" * 1_000_001})
    assert too_big.status_code == 400
