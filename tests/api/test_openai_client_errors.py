"""Every error class the runtime answers a chat client with, as the official ``openai`` client
sees it: the exception class it raises (from the status), and what it reads from OpenAI's
``error`` object (``message``, ``type``, ``param``, ``code``; ``exc.body`` is that object).

The client talks to the app in process (its ``TestClient`` is the client's ``http_client``),
without retries. Its exception text is ``Error code: <status> - <error.message>``, so the
message must be one readable sentence: never pydantic's list of errors nor a JSON dump.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from support.fake_llm import FakeLLM
from support.inprocess import AppRuntime, app_runtime

QUESTION = [{"role": "user", "content": "What is the refund window?"}]


@pytest.fixture(scope="module")
def runtime() -> Iterator[AppRuntime]:
    """``sentinel serve``'s app: the shipped policy, the demo corpus, the built-in generator."""
    with app_runtime() as served:
        yield served


@pytest.fixture
def client(runtime: AppRuntime) -> openai.OpenAI:
    return runtime.openai()


def readable(error: openai.APIStatusError, status: int) -> str:
    """The error's message, checked to be what a person can read, and what the client shows."""
    assert error.status_code == status
    body = error.body
    assert isinstance(body, dict), body  # the client hands over OpenAI's ``error`` object
    assert set(body) >= {"message", "type", "param", "code"}, body
    message = body["message"]
    assert isinstance(message, str) and message.strip(), body
    assert not message.lstrip().startswith(("[", "{")), message  # no list or JSON dump
    assert "'loc'" not in message and '"loc"' not in message, message  # no pydantic errors
    assert "\n" not in message, message
    assert error.message == f"Error code: {status} - {message}"
    return message


def chat(client: openai.OpenAI, **extra: Any) -> Any:
    return client.chat.completions.create(model="sentinel", messages=QUESTION, **extra)


# -- 400 ---------------------------------------------------------------------------------


def test_missing_messages_is_bad_request_naming_them(client: openai.OpenAI) -> None:
    # The typed method cannot leave out ``messages``; the client's own ``post`` can.
    with pytest.raises(openai.BadRequestError) as caught:
        client.post("/chat/completions", body={"model": "sentinel"}, cast_to=object)
    message = readable(caught.value, 400)
    assert caught.value.param == "messages"
    assert caught.value.type == "invalid_request_error"
    assert "messages" in message


def test_broken_json_is_bad_request_without_a_param(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.post(
            "/chat/completions",
            content=b'{"model": "sentinel", "messages": [',
            options={"headers": {"Content-Type": "application/json"}},
            cast_to=object,
        )
    message = readable(caught.value, 400)
    assert caught.value.param is None
    assert "JSON" in message


def test_negative_max_tokens_is_bad_request_naming_it(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        chat(client, max_tokens=-1)
    message = readable(caught.value, 400)
    assert caught.value.param == "max_tokens"
    assert "max_tokens" in message


def test_malformed_index_name_is_bad_request_naming_it(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        chat(client, extra_body={"index_name": "../etc"})
    readable(caught.value, 400)
    assert caught.value.param == "index_name"


def test_context_overflow_is_bad_request_with_openais_code() -> None:
    with app_runtime({"LLM_CONTEXT_WINDOW": 16}) as runtime:
        long = [{"role": "user", "content": "Tell me about refunds. " * 20}]
        with pytest.raises(openai.BadRequestError) as caught:
            runtime.openai().chat.completions.create(model="sentinel", messages=long)
    message = readable(caught.value, 400)
    assert caught.value.code == "context_length_exceeded"
    assert caught.value.param == "messages"
    # OpenAI's wording, which client libraries (LangChain) match to classify the overflow.
    assert "maximum context length is 16 tokens" in message


# -- 400, 401, 404, 413 ------------------------------------------------------------------


def test_wrong_api_key_is_authentication_error() -> None:
    with app_runtime({"RUNTIME_API_KEY": "the-right-key"}) as runtime:
        with pytest.raises(openai.AuthenticationError) as caught:
            chat(runtime.openai(api_key="a-wrong-key"))
        assert chat(runtime.openai(api_key="the-right-key")).choices[0].message.content
    readable(caught.value, 401)
    assert caught.value.type == "authentication_error"


def test_unknown_index_is_not_found_naming_the_index(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        chat(client, extra_body={"index_name": "no-such-index"})
    message = readable(caught.value, 404)
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["param"] == "index_name"
    assert caught.value.param == "index_name"
    assert caught.value.type == "not_found_error"
    assert "no-such-index" in message


def test_body_over_the_limit_is_413() -> None:
    with app_runtime({"MAX_REQUEST_BYTES": 1024}) as runtime:
        big = [{"role": "user", "content": "x" * 4096}]
        with pytest.raises(openai.APIStatusError) as caught:
            runtime.openai().chat.completions.create(model="sentinel", messages=big)
    assert type(caught.value) is openai.APIStatusError  # the client has no class for 413
    message = readable(caught.value, 413)
    assert "1024" in message


def test_no_user_message_is_a_bad_request(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model="sentinel", messages=[{"role": "system", "content": "Be brief."}]
        )
    message = readable(caught.value, 400)
    assert caught.value.param == "messages"
    assert "user message" in message


# -- 5xx and the upstream's refusals -----------------------------------------------------


def test_guardrails_without_a_policy_is_503_internal_server_error(tmp_path: Path) -> None:
    settings = {
        "OUTPUT_GUARDRAILS_ENABLED": True,
        "OUTPUT_GUARDRAILS_POLICY_PATH": str(tmp_path / "guardrails" / "missing.yaml"),
    }
    with app_runtime(settings) as runtime, pytest.raises(openai.InternalServerError) as caught:
        chat(runtime.openai())
    message = readable(caught.value, 503)
    assert caught.value.code == "guardrails_unavailable"
    assert "refusing to return unscanned output" in message


@pytest.mark.parametrize(
    ("upstream_status", "error_class", "status"),
    [
        (500, openai.InternalServerError, 502),  # the upstream failing Sentinel
        (429, openai.RateLimitError, 429),  # the upstream's own refusal, relayed
    ],
)
def test_upstream_failures_reach_the_client_classified(
    fake_llm: FakeLLM, upstream_status: int, error_class: type[openai.APIStatusError], status: int
) -> None:
    fake_llm.status = upstream_status
    settings = {"LLM_INFERENCE_URL": fake_llm.base_url}
    with app_runtime(settings) as runtime, pytest.raises(error_class) as caught:
        chat(runtime.openai())
    readable(caught.value, status)
