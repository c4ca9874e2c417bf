"""The issue's acceptance scenario, end to end, as a user would see it.

``sentinel serve`` + the openai client: a secret in the upstream answer comes back
redacted; a ConfigMap-style policy update switches to block within 1.5 s, with no restart;
the output-guardrails contract's metrics move.
"""

from __future__ import annotations

import time

import openai

from support.configmap import ConfigMapDir
from support.fake_llm import FakeLLM

SECRET = "ghp_" + "Zx9" * 12
REDACT_POLICY = """\
blockMessage: "Blocked: the answer contained a credential."
scanners:
  - type: regex
    action: redact
    patterns: ['\\bgh[pousr]_[A-Za-z0-9_]{20,}\\b']
"""
BLOCK_POLICY = REDACT_POLICY.replace("action: redact", "action: block")


def test_redact_then_hot_switch_to_block(
    runtime_factory, fake_llm: FakeLLM, configmap: ConfigMapDir
):
    configmap.write(REDACT_POLICY)
    runtime = runtime_factory(
        {
            "OUTPUT_GUARDRAILS_ENABLED": "true",
            "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
            "LLM_INFERENCE_URL": fake_llm.base_url,
        }
    )
    pid = runtime.process.pid
    fake_llm.content = f"Use the token {SECRET} to push."
    client = openai.OpenAI(base_url=f"{runtime.base_url}/v1", api_key="x", max_retries=0)

    def answer() -> str:
        reply = client.chat.completions.create(
            model="any", messages=[{"role": "user", "content": "How do I push?"}]
        )
        return reply.choices[0].message.content or ""

    assert answer() == "Use the token [REDACTED] to push."
    hash_before = client.get("/guardrails/policy", cast_to=object)["sha256"]

    configmap.write(BLOCK_POLICY)
    swapped = time.monotonic()
    while answer() != "Blocked: the answer contained a credential.":
        assert time.monotonic() - swapped < 1.5, "policy switch took longer than 1.5 s"
        time.sleep(0.02)

    assert runtime.process.pid == pid and runtime.process.poll() is None  # no restart
    metrics = runtime.metrics()
    assert hash_before not in metrics  # guardrails_active_policy_info moved to the new hash
    assert runtime.metric("guardrails_policy_reload_total", result="success") == 1
    assert runtime.metric("output_guardrails_actions_total", action="redact") >= 1
    assert runtime.metric("output_guardrails_actions_total", action="block") >= 1
    assert runtime.metric("output_guardrails_policy_load_total", policy_status="success") == 2
    assert (
        runtime.metric("output_guardrails_scanner_build_total", type="regex", status="success") == 2
    )
    assert runtime.metric("guardrails_policy_loaded_timestamp_seconds") > 0
    assert SECRET not in runtime.logs()
