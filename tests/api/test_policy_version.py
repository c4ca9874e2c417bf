"""One policy version per request (issue 16): a policy reloaded while an answer streams does
not reach that answer; the next request runs under the new version.

In-process app (``TestClient``), the policy file hot-reloaded by the runtime's own reloader,
a fake upstream that streams slowly enough for the reload to land mid-stream.
"""

from __future__ import annotations

import json
import time
from typing import Any

from fastapi.testclient import TestClient

from sentinel_runtime.api.app import create_app
from sentinel_runtime.settings import Settings
from support.configmap import ConfigMapDir
from support.fake_llm import FakeLLM

OLD_POLICY = "scanners: []\n"
# The new version redacts a word the streamed answer carries near its end.
NEW_POLICY = """\
scanners:
  - type: regex
    action: redact
    patterns: ['\\bpelican\\b']
"""
ANSWER = "The first part of the answer comes now. " * 6 + "The code word is pelican."


def _policy_hash(client: TestClient) -> str:
    return str(client.get("/v1/guardrails/policy").json()["sha256"])


def _events(lines: Any) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in lines if line.startswith("data: {")]


def test_a_reload_mid_stream_leaves_the_stream_on_its_version(
    fake_llm: FakeLLM, configmap: ConfigMapDir
) -> None:
    configmap.write(OLD_POLICY)
    fake_llm.content = ANSWER
    fake_llm.piece_chars = 8
    fake_llm.piece_delay = 0.2  # about 6 s of streaming
    settings = Settings(
        LLM_INFERENCE_URL=fake_llm.base_url,
        OUTPUT_GUARDRAILS_ENABLED=True,
        OUTPUT_GUARDRAILS_POLICY_PATH=str(configmap.policy_path),
    )
    body = {"model": "m", "messages": [{"role": "user", "content": "Say it."}], "stream": True}
    with TestClient(create_app(settings)) as client:
        old_hash = _policy_hash(client)
        with client.stream("POST", "/v1/chat/completions", json=body) as response:
            lines = response.iter_lines()
            first = next(lines)
            assert first.startswith("data: ")
            configmap.write(NEW_POLICY)
            deadline = time.monotonic() + 10
            while _policy_hash(client) == old_hash and time.monotonic() < deadline:
                time.sleep(0.05)
            new_hash = _policy_hash(client)
            assert new_hash != old_hash, "the reloader did not pick up the new policy"
            assert fake_llm.streams_done == 0, "the reload must land while the answer streams"
            events = _events(lines)
        streamed = "".join(
            e["choices"][0]["delta"].get("content") or "" for e in events if e.get("choices")
        )
        last = next(e for e in reversed(events) if "sentinel" in e)
        # The stream finished under the version it started with: nothing redacted.
        assert last["sentinel"]["guardrails"]["policyHash"] == old_hash
        assert streamed.endswith("The code word is pelican.")

        after = client.post("/v1/chat/completions", json={**body, "stream": False}).json()
        assert after["sentinel"]["guardrails"]["policyHash"] == new_hash
        assert "pelican" not in after["choices"][0]["message"]["content"]
