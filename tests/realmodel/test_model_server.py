"""The real model server (tests/support/model_server.py) through the openai client: a chat
completion and a streamed one, then the behaviours its module docstring records, so that the
table there fails a test when a new llama-cpp-python changes them."""

from __future__ import annotations

import json

import openai
import pytest

from support.model_server import ModelServer

QUESTION = [{"role": "user", "content": "In one sentence: why do people drink tea?"}]
CITATION_IDS = ["refund-policy#p0", "faq#p2"]
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "citations": {"type": "array", "items": {"type": "string", "enum": CITATION_IDS}},
    },
    "required": ["answer", "citations"],
}


@pytest.fixture
def client(model_server: ModelServer) -> openai.OpenAI:
    # max_retries=0: a 500 is an answer to look at here, not a reason to ask three times.
    return openai.OpenAI(base_url=model_server.base_url, api_key="x", max_retries=0)


def test_chat_completion_returns_text_and_usage(
    client: openai.OpenAI, model_server: ModelServer
) -> None:
    reply = client.chat.completions.create(
        model=model_server.model, messages=QUESTION, max_tokens=40, temperature=0
    )
    assert reply.choices[0].message.content.strip()
    assert reply.usage is not None
    assert reply.usage.prompt_tokens > 0
    assert reply.usage.completion_tokens > 0
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


def test_streamed_completion_arrives_in_several_chunks(
    client: openai.OpenAI, model_server: ModelServer
) -> None:
    stream = client.chat.completions.create(
        model=model_server.model, messages=QUESTION, max_tokens=40, temperature=0, stream=True
    )
    pieces = [
        chunk.choices[0].delta.content
        for chunk in stream
        if chunk.choices and chunk.choices[0].delta.content
    ]
    assert len(pieces) > 1
    assert "".join(pieces).strip()


def test_openai_json_schema_response_format_is_refused(
    client: openai.OpenAI, model_server: ModelServer
) -> None:
    with pytest.raises(openai.InternalServerError, match="'text' or 'json_object'"):
        client.chat.completions.create(
            model=model_server.model,
            messages=QUESTION,
            max_tokens=20,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": ANSWER_SCHEMA},
            },
        )


@pytest.mark.parametrize(
    "prompt",
    [
        pytest.param("Cite doc-z#p9 and nothing else, as JSON.", id="asked-for-another-id"),
        pytest.param("Say hello in prose, no JSON.", id="asked-for-prose"),
    ],
)
def test_json_object_with_schema_constrains_the_output(
    client: openai.OpenAI, model_server: ModelServer, prompt: str
) -> None:
    reply = client.chat.completions.create(
        model=model_server.model,
        messages=[{"role": "user", "content": prompt}],
        max_tokens=300,
        temperature=0,
        extra_body={"response_format": {"type": "json_object", "schema": ANSWER_SCHEMA}},
    )
    assert reply.choices[0].finish_reason == "stop"
    data = json.loads(reply.choices[0].message.content)
    assert isinstance(data["answer"], str)
    assert set(data["citations"]) <= set(CITATION_IDS)


def test_n_is_ignored(client: openai.OpenAI, model_server: ModelServer) -> None:
    reply = client.chat.completions.create(
        model=model_server.model, messages=QUESTION, max_tokens=10, n=3
    )
    assert len(reply.choices) == 1


def test_max_tokens_ends_with_length(client: openai.OpenAI, model_server: ModelServer) -> None:
    reply = client.chat.completions.create(
        model=model_server.model, messages=QUESTION, max_tokens=5
    )
    assert reply.choices[0].finish_reason == "length"
    assert reply.usage is not None
    assert reply.usage.completion_tokens == 5


def test_stream_sends_no_usage_even_when_asked(
    client: openai.OpenAI, model_server: ModelServer
) -> None:
    chunks = list(
        client.chat.completions.create(
            model=model_server.model,
            messages=QUESTION,
            max_tokens=10,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert chunks[-1].choices[0].finish_reason == "length"
    assert all(chunk.usage is None for chunk in chunks)


@pytest.mark.parametrize(
    "sampling",
    [
        pytest.param({"temperature": 0}, id="temperature-0"),
        pytest.param({"temperature": 0.8, "seed": 42}, id="seed"),
    ],
)
def test_sampling_is_reproducible(
    client: openai.OpenAI, model_server: ModelServer, sampling: dict[str, float]
) -> None:
    def text() -> str | None:
        reply = client.chat.completions.create(
            model=model_server.model, messages=QUESTION, max_tokens=30, **sampling
        )
        return reply.choices[0].message.content

    assert text() == text()
