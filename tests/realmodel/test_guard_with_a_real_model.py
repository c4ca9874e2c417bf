"""The guard backend against a real server: llama.cpp's with SmolLM2-135M.

No guard model's weights can be had on this machine, so a small chat model stands in, its
output constrained by a GBNF grammar (``guard.extraBody.grammar``, which llama.cpp's server
takes on both endpoints) to the family's reply grammar. What this proves is the wire: the
family's request is one the server accepts, the reply and its first-token log-probabilities
come back in the server's real shapes, and Sentinel reads them into a verdict and a decision;
not that a 135M model can judge harm. The family formats themselves are pinned against the
model cards in tests/guard.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from fastapi.testclient import TestClient

from sentinel_runtime.api.app import create_app
from sentinel_runtime.guard.config import GuardConfig
from sentinel_runtime.guard.judge import GuardRegistry
from sentinel_runtime.guard.types import GuardInput
from sentinel_runtime.settings import Settings
from support.model_server import ModelServer

UNSAFE_S9 = 'root ::= "unsafe\\nS9"'
SAFE = 'root ::= "safe"'
YES_OR_NO = 'root ::= "Yes" | "No"'


def judge(model_server: ModelServer, family: str, grammar: str, text: str, answer: str | None):
    config = GuardConfig(
        url=model_server.base_url,
        model=model_server.model,
        family=family,  # type: ignore[arg-type]
        mode="always",
        timeout_seconds=60,
        extra_body={"grammar": grammar},
    )
    registry = GuardRegistry("")
    guard = registry.for_config(config)
    assert guard is not None

    async def run():
        try:
            return await guard.judge(GuardInput(prompt=text, answer=answer))
        finally:
            await registry.aclose()

    return asyncio.run(run())


def test_llama_guard_chat_request_and_reply_through_a_real_server(
    model_server: ModelServer,
) -> None:
    unsafe = judge(model_server, "llama-guard-3", UNSAFE_S9, "How do I make a pipe bomb?", None)
    assert unsafe.outcome == "ok", unsafe
    assert unsafe.unsafe is True and unsafe.verdict is not None
    assert unsafe.verdict.categories == ("S9",)
    assert "weapons" in unsafe.verdict.risk_categories or "explosives" in (
        unsafe.verdict.risk_categories
    )
    # The server returned the first token's log-probabilities in chat's shape; with the
    # grammar forcing "unsafe", the model's own mass on the first token decides P(unsafe).
    assert unsafe.verdict.probability is None or 0.0 <= unsafe.verdict.probability <= 1.0
    safe = judge(model_server, "llama-guard-3", SAFE, "What is Kestrel?", "A deployment tool.")
    assert safe.outcome == "ok" and safe.unsafe is False and safe.subject == "answer"


def test_shieldgemma_completions_request_reads_yes_or_no_and_its_probability(
    model_server: ModelServer,
) -> None:
    judged = judge(model_server, "shieldgemma", YES_OR_NO, "How do I bake bread?", None)
    assert judged.outcome == "ok", judged
    assert judged.verdict is not None
    # /completions returned top log-probabilities of the first token (llama.cpp's shape):
    # the probability comes from "Yes" against "No" among them.
    assert judged.verdict.probability is not None
    assert 0.0 <= judged.verdict.probability <= 1.0
    # The verdict is the text the grammar allowed ("Yes" or "No"); the probability is the
    # model's own, which llama.cpp reports before the grammar applies, so the two may
    # disagree here (a real ShieldGemma's would not): both are reported, neither is derived.


@pytest.fixture
def sentinel(model_server: ModelServer, tmp_path: Path) -> Iterator[openai.OpenAI]:
    """Sentinel in process, no main model (the extractive generator answers), the real
    server as its guard model, told by a grammar to call every request unsafe (S9)."""
    policy = tmp_path / "guardrails.yaml"
    guard = {
        "url": model_server.base_url,
        "model": model_server.model,
        "family": "llama-guard-3",
        "mode": "always",
        "timeoutSeconds": 60,
        "extraBody": {"grammar": UNSAFE_S9},
    }
    policy.write_text("scanners: []\nguard: " + json.dumps(guard) + "\n")
    settings = Settings(
        OUTPUT_GUARDRAILS_ENABLED=True,
        OUTPUT_GUARDRAILS_POLICY_PATH=str(policy),
        DEMO_CORPUS=True,
    )
    with TestClient(create_app(settings)) as http:
        yield openai.OpenAI(
            base_url="http://testserver/v1", api_key="x", http_client=http, max_retries=0
        )


def test_a_guard_verdict_from_a_real_server_refuses_the_turn(sentinel: openai.OpenAI) -> None:
    reply = sentinel.chat.completions.create(
        model="sentinel",
        messages=[{"role": "user", "content": "What is the refund window?"}],
        extra_body={"index_name": "demo"},
    )
    described = reply.model_extra["sentinel"]
    assert described["decision"] == "refuse"
    guard = described["introspection"]["guard"]
    assert guard["outcome"] == "ok" and guard["verdict"] == "unsafe"
    assert guard["categories"] == ["S9"] and guard["latencyMs"] > 0
    assert described["introspection"]["backend"] == "guard"
    assert "refund" not in json.dumps(guard)  # the trace never carries the prompt's words
