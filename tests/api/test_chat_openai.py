"""/v1/chat/completions through the official openai client against the runtime's app (in
process) forwarding to a fake OpenAI-protocol upstream over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from support.fake_llm import FakeLLM
from support.inprocess import AppRuntime, guarded_app
from support.inprocess import openai_client as client_for
from support.runtime import free_port

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
BLOCK_POLICY = """\
blockMessage: Blocked by the test policy.
scanners:
  - type: ban_substrings
    action: block
    substrings: [For Internal Use Only]
  - type: regex
    action: redact
    patterns: ['\\bAKIA[0-9A-Z]{16}\\b']
"""


@pytest.fixture(scope="module")
def guarded_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[AppRuntime, FakeLLM]]:
    env = {
        "LLM_ACCESS_SECRET": "upstream-secret-value",
        "LLM_MODEL": "fake-model",
        "LLM_TIMEOUT_SECONDS": "1.5",
    }
    with guarded_app(tmp_path_factory.mktemp("guarded"), BLOCK_POLICY, env) as served:
        yield served


@pytest.fixture
def guarded(guarded_server: tuple[AppRuntime, FakeLLM]) -> tuple[AppRuntime, FakeLLM]:
    """The shared server, with the fake upstream back to its defaults."""
    runtime, fake = guarded_server
    fresh = FakeLLM()
    for name in ("content", "message", "status", "delay", "raw_body"):
        setattr(fake, name, getattr(fresh, name))
    return runtime, fake


def ask(runtime: AppRuntime, text: str = "hi") -> openai.types.chat.ChatCompletion:
    return client_for(runtime).chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": text}]
    )


def test_upstream_secret_is_redacted_for_the_openai_client(guarded) -> None:
    runtime, fake = guarded
    fake.content = f"Your key is {AWS_KEY}, keep it safe."
    before = runtime.metric("output_guardrails_actions_total", action="redact")

    completion = ask(runtime)

    assert completion.choices[0].message.content == "Your key is [REDACTED], keep it safe."
    assert completion.choices[0].finish_reason == "stop"
    extra = completion.model_extra["sentinel"]["guardrails"]
    assert extra["choices"][0]["action"] == "redact"
    assert extra["choices"][0]["scanners"][0]["type"] == "regex"
    assert runtime.metric("output_guardrails_actions_total", action="redact") == before + 1
    assert AWS_KEY not in runtime.logs()


def test_block_replaces_the_message_and_sets_content_filter(guarded) -> None:
    runtime, fake = guarded
    fake.content = "This memo is For Internal Use Only. Key " + AWS_KEY
    before = runtime.metric("output_guardrails_actions_total", action="block")

    completion = ask(runtime)

    assert completion.choices[0].message.content == "Blocked by the test policy."
    assert completion.choices[0].finish_reason == "content_filter"
    assert runtime.metric("output_guardrails_actions_total", action="block") == before + 1
    assert '"event": "output_guardrails_triggered"' in runtime.logs()


def test_clean_answer_passes_unchanged_and_upstream_gets_bearer_and_model(guarded) -> None:
    runtime, fake = guarded
    fake.content = "Nothing sensitive here."
    completion = client_for(runtime).chat.completions.create(
        model="", messages=[{"role": "user", "content": "hi"}], temperature=0.2
    )
    assert completion.choices[0].message.content == "Nothing sensitive here."
    sent = fake.requests[-1]
    assert sent["headers"]["Authorization"] == "Bearer upstream-secret-value"
    assert sent["json"]["model"] == "fake-model"  # LLM_MODEL fills an empty model
    assert sent["json"]["temperature"] == 0.2
    assert sent["json"]["stream"] is False


def test_list_content_parts_are_scanned_as_one_text(guarded) -> None:
    runtime, fake = guarded
    half = len(AWS_KEY) // 2
    fake.content = [
        {"type": "text", "text": "key " + AWS_KEY[:half]},
        {"type": "text", "text": AWS_KEY[half:] + " end"},
    ]
    completion = ask(runtime)
    assert completion.choices[0].message.content == "key [REDACTED] end"


def test_refusal_parts_are_scanned_too(guarded) -> None:
    runtime, fake = guarded
    fake.content = [{"type": "refusal", "refusal": f"I cannot share {AWS_KEY}."}]
    completion = ask(runtime)
    assert completion.choices[0].message.content == "I cannot share [REDACTED]."


def test_tool_call_only_message_is_not_scanned(guarded) -> None:
    runtime, fake = guarded
    fake.message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"q": "x"}'},
            }
        ],
    }
    completion = ask(runtime)
    assert completion.choices[0].message.tool_calls[0].function.name == "lookup"
    assert completion.model_extra["sentinel"]["guardrails"]["choices"] == []


@pytest.mark.parametrize(
    ("setup", "status", "fragment"),
    [
        pytest.param({"status": 500}, 502, "HTTP 500", id="upstream-500"),
        pytest.param({"status": 401}, 502, "HTTP 401", id="upstream-401-is-ours"),
        # The upstream judged the client's request: its status is relayed, as KAITO does.
        pytest.param({"status": 400}, 400, "HTTP 400", id="upstream-400-relayed"),
        pytest.param({"status": 429}, 429, "HTTP 429", id="upstream-429-relayed"),
        pytest.param({"raw_body": b"not json"}, 502, "invalid JSON", id="upstream-not-json"),
        pytest.param({"raw_body": b'{"no": "choices"}'}, 502, "choices", id="no-choices"),
        pytest.param(
            {"message": {"role": "assistant", "content": {"oops": 1}}},
            502,
            "cannot be scanned",
            id="unscannable-content",
        ),
        pytest.param({"delay": 3.0}, 504, "timed out", id="upstream-timeout"),
    ],
)
def test_upstream_failures_map_to_clear_statuses(guarded, setup, status, fragment) -> None:
    runtime, fake = guarded
    for key, value in setup.items():
        setattr(fake, key, value)
    before = runtime.metric("rag_chat_requests_total", status="failure")
    with pytest.raises(openai.APIStatusError) as caught:
        ask(runtime)
    assert caught.value.status_code == status
    assert fragment in caught.value.response.json()["detail"]
    assert runtime.metric("rag_chat_requests_total", status="failure") == before + 1


def test_unreachable_upstream_is_502(app_factory) -> None:
    runtime = app_factory(
        {"LLM_INFERENCE_URL": f"http://127.0.0.1:{free_port()}/v1/chat/completions"}
    )
    with pytest.raises(openai.APIStatusError) as caught:
        ask(runtime)
    assert caught.value.status_code == 502
    assert "unreachable" in caught.value.response.json()["detail"]
    assert runtime.counted("rag_llm_upstream_errors_total", reason="unreachable") == 1


def test_models_are_listed_from_upstream(guarded) -> None:
    runtime, _ = guarded
    models = client_for(runtime).models.list()
    assert [m.id for m in models.data] == ["fake-model"]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        pytest.param({}, 400, id="no-messages"),
        pytest.param({"messages": []}, 400, id="empty-messages"),
        pytest.param({"messages": [{"role": "wizard", "content": "x"}]}, 400, id="bad-role"),
        pytest.param(
            {"messages": [{"role": "user", "content": "x"}], "stream": True, "n": 2},
            400,
            id="stream-n-2",
        ),
        pytest.param(
            {"messages": [{"role": "user", "content": "x"}], "stream": True, "index_name": "x"},
            404,
            id="stream-index",
        ),
        pytest.param(
            {"messages": [{"role": "user", "content": "x"}], "index_name": "nope"}, 404, id="index"
        ),
    ],
)
def test_bad_requests_get_a_json_detail(guarded, body, status) -> None:
    runtime, fake = guarded
    calls = len(fake.requests)
    response = runtime.client.post("/v1/chat/completions", json=body)
    assert response.status_code == status
    assert "detail" in response.json()
    assert len(fake.requests) == calls  # nothing reached the upstream


def test_invalid_json_body_is_rejected(guarded) -> None:
    runtime, _ = guarded
    response = runtime.client.post(
        "/v1/chat/completions",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "json_invalid"
