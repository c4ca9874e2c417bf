"""The request edge (``api.request_guard`` and the validation handler): bad input is a 400 in
OpenAI's error shape before any work starts, bodies are held to the limit as they arrive,
and an unexpected error answers 500 without costing the client its connection."""

from __future__ import annotations

import http.client
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import httpx
import openai
import pytest

from sentinel_runtime.answer import chat
from sentinel_runtime.api.app import create_app
from support.fake_llm import FakeLLM
from support.inprocess import DEFAULTS, AppRuntime, app_runtime, served_app

LONE_SURROGATE = "\\ud800"  # as JSON writes it: one half of a UTF-16 pair, alone
QUESTION = [{"role": "user", "content": "What is the refund window?"}]


@pytest.fixture(scope="module")
def runtime() -> Iterator[AppRuntime]:
    with app_runtime() as served:
        yield served


def post_raw(runtime: AppRuntime, path: str, raw: str | bytes) -> httpx.Response:
    return runtime.client.post(path, content=raw, headers={"content-type": "application/json"})


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert body["detail"] == body["error"]["message"]
    assert isinstance(body["error"]["message"], str)
    return body["error"]


@pytest.mark.parametrize(
    ("path", "raw", "param"),
    [
        (
            "/v1/chat/completions",
            '{"messages":[{"role":"user","content":"hi %s"}]}',
            "messages.0.content",
        ),
        ("/answer", '{"query":"refund %s"}', "query"),
        ("/v1/guardrails/scan", '{"text":"a %s b"}', "text"),
        ("/index", '{"index_name":"fresh","documents":[{"text":"doc %s"}]}', "documents.0.text"),
    ],
)
@pytest.mark.parametrize("bad", [LONE_SURROGATE, "\\u0000", "\\uDFFF tail"])
def test_text_with_nul_or_lone_surrogate_is_400_naming_the_field(
    runtime: AppRuntime, path: str, raw: str, param: str, bad: str
) -> None:
    response = post_raw(runtime, path, raw % bad)
    assert response.status_code == 400, response.text
    error = error_of(response)
    assert error["param"] == param
    assert "surrogate" in error["message"]
    assert "fresh" not in runtime.client.get("/indexes").json()  # nothing half-made


def test_raw_surrogate_bytes_in_the_body_are_refused_too(runtime: AppRuntime) -> None:
    # Python's JSON reader decodes UTF-8-encoded surrogates instead of failing on them.
    raw = b'{"text":"a \xed\xa0\x80 b"}'
    response = post_raw(runtime, "/v1/guardrails/scan", raw)
    assert response.status_code == 400
    assert error_of(response)["param"] == "text"


def test_a_properly_paired_surrogate_escape_is_ordinary_text(runtime: AppRuntime) -> None:
    response = post_raw(runtime, "/v1/guardrails/scan", '{"text":"smile \\ud83d\\ude00"}')
    assert response.status_code == 200, response.text
    assert response.json()["text"] == "smile \U0001f600"


def test_an_escaped_backslash_before_u_is_not_a_surrogate(runtime: AppRuntime) -> None:
    response = post_raw(runtime, "/v1/guardrails/scan", '{"text":"C:\\\\ud800"}')
    assert response.status_code == 200, response.text


def test_nul_in_a_query_parameter_is_400(runtime: AppRuntime) -> None:
    response = runtime.client.get("/debug/retrieval", params={"q": "refund\x00\x01"})
    assert response.status_code == 400
    assert error_of(response)["param"] == "q"


@pytest.mark.parametrize("name", ["../etc", "a/b", "-lead", "x" * 64, ""])
def test_malformed_index_name_in_chat_is_400_with_param(runtime: AppRuntime, name: str) -> None:
    body = {"messages": QUESTION, "index_name": name}
    response = runtime.client.post("/v1/chat/completions", json=body)
    assert response.status_code == 400, response.text
    assert error_of(response)["param"] == "index_name"


def test_malformed_index_name_in_answer_is_400(runtime: AppRuntime) -> None:
    response = runtime.client.post("/answer", json={"query": "refund", "index_name": "../x"})
    assert response.status_code == 400
    assert error_of(response)["param"] == "index_name"


def test_missing_messages_is_a_readable_400(runtime: AppRuntime) -> None:
    response = runtime.client.post("/v1/chat/completions", json={"model": "m"})
    assert response.status_code == 400
    error = error_of(response)
    assert error == {
        "message": "messages: Field required",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "missing",
    }


def test_broken_json_is_a_400_without_a_field(runtime: AppRuntime) -> None:
    response = post_raw(runtime, "/v1/chat/completions", '{"messages": [')
    assert response.status_code == 400
    error = error_of(response)
    assert error["param"] is None and error["code"] == "json_invalid"
    assert error["message"].startswith("the request body is not valid JSON")


@pytest.mark.parametrize(
    ("path", "raw", "where"),
    [
        ("/v1/chat/completions", '{"messages":%s,"logit_bias":{"7":NaN}}', "logit_bias.7"),
        ("/v1/chat/completions", '{"messages":%s,"temperature":-Infinity}', "temperature"),
        ("/v1/chat/completions", '{"messages":%s,"x":[1,{"y":1e999}]}', "x.1.y"),
        ("/v1/completions", '{"prompt":"hi","top_p":NaN,"m":%s}', "top_p"),
        ("/v1/embeddings", '{"input":"hi","dimensions":Infinity,"m":%s}', "dimensions"),
    ],
)
def test_nan_or_infinity_anywhere_is_a_400_and_never_reaches_the_upstream(
    path: str, raw: str, where: str
) -> None:
    fake = FakeLLM().start()
    try:
        with app_runtime({"LLM_INFERENCE_URL": f"{fake.base_url}/chat/completions"}) as served:
            response = post_raw(served, path, raw % json.dumps(QUESTION))
    finally:
        fake.stop()
    assert response.status_code == 400, response.text
    assert error_of(response)["message"].startswith(f"body: {where}: NaN and Infinity")
    assert fake.requests == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_tokens", -1),
        ("max_tokens", 0),
        ("max_completion_tokens", 0),
        ("temperature", "hot"),
        ("temperature", 2.5),
        ("top_p", 1.5),
        ("n", 0),
        ("n", "3"),
        ("presence_penalty", 3),
        ("frequency_penalty", -2.5),
        ("seed", "x"),
        ("stream_options", {"include_usage": "maybe"}),
        ("logprobs", True),
        ("top_logprobs", 3),
        ("modalities", ["text", "audio"]),
        ("audio", {"voice": "alloy", "format": "mp3"}),
    ],
)
def test_out_of_range_or_unhonourable_parameter_is_400_naming_it(
    runtime: AppRuntime, field: str, value: Any
) -> None:
    body = {"messages": QUESTION, field: value}
    response = runtime.client.post("/v1/chat/completions", json=body)
    assert response.status_code == 400, response.text
    assert error_of(response)["param"].split(".")[0] == field


def test_parameters_in_range_are_accepted(runtime: AppRuntime) -> None:
    body = {
        "messages": QUESTION,
        "max_tokens": 64,
        "temperature": 0,
        "top_p": 1,
        "presence_penalty": 0.5,
        "frequency_penalty": -0.5,
        "seed": 7,
        "stop": ["\n\n"],
        "logprobs": False,
        "user": "someone",
        "metadata": {"team": "a"},
    }
    response = runtime.client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text


def test_openai_client_raises_bad_request_with_the_message(runtime: AppRuntime) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        runtime.openai().chat.completions.create(model="m", messages=QUESTION, temperature=9)
    assert caught.value.param == "temperature"
    assert "temperature" in caught.value.message
    assert "less than or equal to 2" in caught.value.message


# -- body limits -----------------------------------------------------------------------


LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def small_limit() -> Iterator[AppRuntime]:
    with app_runtime({"MAX_REQUEST_BYTES": LIMIT}) as served:
        yield served


def test_declared_length_over_the_limit_is_413(small_limit: AppRuntime) -> None:
    text = "x" * (LIMIT + 1)
    response = small_limit.client.post("/v1/guardrails/scan", json={"text": text})
    assert response.status_code == 413
    assert str(LIMIT) in error_of(response)["message"]


def test_a_chunked_body_is_cut_off_as_soon_as_it_passes_the_limit() -> None:
    """No Content-Length: the guard counts what arrives and stops reading at the limit, so
    a 40 MB body costs the runtime at most the limit (the chunks not read stay unsent)."""
    settings = {**DEFAULTS, "MAX_REQUEST_BYTES": LIMIT, "DEMO_CORPUS": False}
    chunk = b" " * 4096
    sent = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal sent
        yield b'{"text": "'
        for _ in range(40 * 1024 * 1024 // len(chunk)):
            sent += len(chunk)
            yield chunk
        yield b'"}'

    async def post() -> httpx.Response:
        from sentinel_runtime.settings import Settings

        app = create_app(Settings(**settings))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.post(
                "/v1/guardrails/scan",
                content=body(),
                headers={"content-type": "application/json"},
            )

    response = anyio.run(post)
    assert response.status_code == 413
    assert sent <= LIMIT + 2 * len(chunk)


def test_a_chunked_body_under_the_limit_is_served(small_limit: AppRuntime) -> None:
    payload = json.dumps({"text": "a chunked but small body"}).encode()

    def body() -> Iterator[bytes]:
        yield payload[:10]
        yield payload[10:]

    response = small_limit.client.post(
        "/v1/guardrails/scan", content=body(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["text"] == "a chunked but small body"


# -- faults ----------------------------------------------------------------------------


def test_after_a_500_the_keep_alive_connection_stays_usable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Behind uvicorn: an exception no handler takes is a 500 answer, and the very same
    connection then serves the next request (Starlette alone would make uvicorn close it)."""

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(chat, "run", broken)
    with served_app({"DEMO_CORPUS": False}) as served:
        host, port = served.base_url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            body = json.dumps({"messages": QUESTION})
            headers = {"content-type": "application/json"}
            connection.request("POST", "/v1/chat/completions", body, headers)
            first = connection.getresponse()
            answered = json.loads(first.read())
            socket_before = connection.sock
            connection.request("GET", "/health")
            second = connection.getresponse()
            second.read()
            socket_after = connection.sock
        finally:
            connection.close()
    assert first.status == 500
    assert answered["error"]["type"] == "server_error"
    assert "a bug" not in json.dumps(answered)  # internals stay in the log
    assert second.status == 200
    assert socket_before is not None and socket_after is socket_before  # no reconnect
    assert "a bug" in served.logs()


def test_context_overflow_reads_as_openai_words_it() -> None:
    """Client libraries classify an overflow by OpenAI's code and wording."""
    with (
        app_runtime({"LLM_CONTEXT_WINDOW": 20, "DEMO_CORPUS": False}) as served,
        pytest.raises(openai.BadRequestError) as caught,
    ):
        served.openai().chat.completions.create(
            model="m", messages=[{"role": "user", "content": "word " * 50}]
        )
    assert caught.value.code == "context_length_exceeded"
    assert caught.value.param == "messages"
    assert "This model's maximum context length is 20 tokens." in caught.value.message
    assert "Please reduce the length of the messages." in caught.value.message


def test_malformed_index_name_in_a_query_parameter_is_400(runtime: AppRuntime) -> None:
    response = runtime.client.get("/debug/retrieval", params={"q": "refund", "index_name": "\x01"})
    assert response.status_code == 400, response.text
    assert error_of(response)["param"] == "index_name"
