"""``/v1/completions`` (OpenAI's legacy completions) through the official openai client and
LlamaIndex's ``OpenAILike`` (whose default, ``is_chat_model=False``, calls it), against the
app in process; and ``LLM_INFERENCE_URL`` written as KAITO writes it (a full endpoint)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import openai
import pytest

from sentinel_runtime.settings import Settings
from support.fake_llm import FakeLLM
from support.inprocess import DEFAULTS, AppRuntime, app_runtime, guarded_app

BLOCK_MESSAGE = "Blocked by the test policy."
POLICY = f"""\
blockMessage: {BLOCK_MESSAGE}
scanners:
  - type: ban_substrings
    action: block
    substrings: [For Internal Use Only]
  - type: regex
    action: redact
    patterns: ['\\bAKIA[0-9A-Z]{{16}}\\b']
"""
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"


@pytest.fixture(scope="module")
def guarded_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[AppRuntime, FakeLLM]]:
    with guarded_app(tmp_path_factory.mktemp("completions"), POLICY) as served:
        yield served


@pytest.fixture
def guarded(guarded_server: tuple[AppRuntime, FakeLLM]) -> tuple[AppRuntime, FakeLLM]:
    """The shared app, its fake upstream back to its defaults."""
    runtime, fake = guarded_server
    fresh = FakeLLM()
    for name in ("content", "message", "pieces", "piece_delay"):
        setattr(fake, name, getattr(fresh, name))
    return runtime, fake


@pytest.fixture(scope="module")
def demo() -> Iterator[AppRuntime]:
    """The app as ``sentinel serve`` starts it: the built-in generator, the demo index."""
    with app_runtime() as runtime:
        yield runtime


def test_a_prompt_is_answered_as_a_text_completion(guarded) -> None:
    runtime, fake = guarded
    fake.content = f"Your key is {AWS_KEY}, keep it safe."
    sent = len(fake.requests)

    completion = runtime.openai().completions.create(
        model="fake-model", prompt="Which key?", max_tokens=50, temperature=0.2, stop=["\n\n"]
    )

    assert completion.object == "text_completion" and completion.id.startswith("cmpl-")
    choice = completion.choices[0]
    assert choice.text == "Your key is [REDACTED], keep it safe."  # the same guardrails
    assert choice.index == 0 and choice.logprobs is None and choice.finish_reason == "stop"
    assert completion.usage.total_tokens == 2  # the upstream's own count
    sentinel = completion.model_extra["sentinel"]
    assert sentinel["guardrails"]["choices"][0]["action"] == "redact"
    # The upstream got one chat turn: the prompt as the user message, the parameters kept.
    (request,) = fake.requests[sent:]
    assert request["path"] == "/v1/chat/completions"
    assert request["json"]["messages"] == [{"role": "user", "content": "Which key?"}]
    assert request["json"]["max_tokens"] == 50 and request["json"]["stop"] == ["\n\n"]
    assert request["json"]["temperature"] == 0.2


def test_a_blocked_answer_is_the_block_message_with_content_filter(guarded) -> None:
    runtime, fake = guarded
    fake.content = "This memo is For Internal Use Only."

    completion = runtime.openai().completions.create(model="fake-model", prompt=["The memo?"])

    assert completion.choices[0].text == BLOCK_MESSAGE
    assert completion.choices[0].finish_reason == "content_filter"
    assert completion.model_extra["sentinel"]["guardrails"]["choices"][0]["action"] == "block"


def test_a_streamed_completion_is_text_completion_chunks_ending_with_done(guarded) -> None:
    runtime, fake = guarded
    fake.content = f"Your key is {AWS_KEY}, keep it safe."

    chunks = list(
        runtime.openai().completions.create(
            model="fake-model",
            prompt="Which key?",
            stream=True,
            stream_options={"include_usage": True},
        )
    )

    assert {c.object for c in chunks} == {"text_completion"}
    assert len({c.id for c in chunks}) == 1 and chunks[0].id.startswith("cmpl-")
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert text == "Your key is [REDACTED], keep it safe."
    last = chunks[-2]
    assert last.choices[0].finish_reason == "stop"
    assert last.model_extra["sentinel"]["stream"]["stop"] is None
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == 8
    with runtime.client.stream(
        "POST", "/v1/completions", json={"prompt": "Which key?", "stream": True}
    ) as response:
        events = [line.removeprefix("data: ") for line in response.iter_lines() if line]
    assert response.headers["content-type"].startswith("text/event-stream")
    assert events[-1] == "[DONE]"
    assert all(json.loads(e)["choices"][0]["logprobs"] is None for e in events[:-1])


def test_a_streamed_block_ends_with_the_block_message(guarded) -> None:
    runtime, fake = guarded
    fake.content = "This memo is For Internal Use Only."

    chunks = list(
        runtime.openai().completions.create(model="fake-model", prompt="The memo?", stream=True)
    )

    text = "".join(c.choices[0].text for c in chunks)
    assert "For Internal Use Only" not in text and text.endswith(BLOCK_MESSAGE)
    assert chunks[-1].choices[0].finish_reason == "content_filter"


def test_index_name_answers_from_the_index(demo: AppRuntime) -> None:
    completion = demo.openai().completions.create(
        model="sentinel",
        prompt="How many days do customers have to request a refund?",
        extra_body={"index_name": "demo"},
    )

    assert "30 days" in completion.choices[0].text
    assert completion.model_extra["sentinel"]["indexName"] == "demo"
    assert completion.model_extra["source_nodes"]
    assert completion.usage.prompt_tokens > 0


@pytest.mark.parametrize(
    ("body", "param"),
    [
        pytest.param({"prompt": ["one", "two"]}, "prompt", id="two-prompts"),
        pytest.param({"prompt": [1, 2, 3]}, "prompt", id="token-array"),
        pytest.param({"prompt": [[1, 2]]}, "prompt", id="token-arrays"),
        pytest.param({"prompt": "hi", "n": 2}, "n", id="n"),
        pytest.param({"prompt": "hi", "logprobs": 1}, "logprobs", id="logprobs"),
        pytest.param({"prompt": "hi", "echo": True}, "echo", id="echo"),
        pytest.param({"prompt": "hi", "best_of": 2}, "best_of", id="best-of"),
        pytest.param({"prompt": "hi", "temperature": 3}, "temperature", id="temperature"),
        pytest.param({"prompt": "hi", "index_name": "no such"}, "index_name", id="index"),
    ],
)
def test_what_cannot_be_served_is_a_400_naming_the_parameter(demo, body, param) -> None:
    response = demo.client.post("/v1/completions", json=body)

    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == param


def test_the_openai_client_reads_a_refusal(demo: AppRuntime) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        demo.openai().completions.create(model="sentinel", prompt=["one", "two"])

    assert caught.value.body["param"] == "prompt"


def test_llamaindex_openai_like_completes_and_streams(demo: AppRuntime) -> None:
    """LlamaIndex's ``OpenAILike()``: its default ``is_chat_model=False`` calls
    ``/v1/completions``. ``llama-index-llms-openai`` pins ``openai<3``, which the test extra
    cannot (the real-model tests need openai 3), so this runs only where it is installed."""
    openai_like = pytest.importorskip("llama_index.llms.openai_like")
    llm = openai_like.OpenAILike(
        model="sentinel",
        api_base=f"{demo.base_url}/v1",
        api_key="unused",
        max_retries=0,
        http_client=demo.client,
        additional_kwargs={"extra_body": {"index_name": "demo"}},
    )
    assert llm.is_chat_model is False

    answered = llm.complete("How many days do customers have to request a refund?")
    streamed = "".join(r.delta or "" for r in llm.stream_complete("hello there"))

    assert "30 days" in answered.text
    assert streamed.strip()


# -- LLM_INFERENCE_URL as KAITO writes it -------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("http://llm:8000/v1", id="base"),
        pytest.param("http://llm:8000/v1/", id="base-slash"),
        pytest.param("http://llm:8000/v1/chat/completions", id="chat-endpoint"),
        pytest.param("http://llm:8000/v1/completions", id="completions-endpoint"),
        pytest.param("http://llm:8000/v1/completions/", id="completions-endpoint-slash"),
    ],
)
def test_llm_inference_url_may_be_the_base_or_either_endpoint(url: str) -> None:
    settings = Settings(**{**DEFAULTS, "LLM_INFERENCE_URL": url})

    assert settings.llm_base_url() == "http://llm:8000/v1"
    assert settings.chat_completions_url() == "http://llm:8000/v1/chat/completions"


def test_the_legacy_endpoint_url_reaches_the_upstream_chat_and_models() -> None:
    fake = FakeLLM().start()
    try:
        settings = {"LLM_INFERENCE_URL": f"{fake.base_url}/completions"}
        with app_runtime(settings) as runtime:
            chat = runtime.openai().chat.completions.create(
                model="fake-model", messages=[{"role": "user", "content": "hi"}]
            )
            models = runtime.openai().models.list()
    finally:
        fake.stop()

    assert chat.choices[0].message.content == FakeLLM.content
    assert [m.id for m in models.data] == ["fake-model"]  # the upstream's list
    assert [r["path"] for r in fake.requests] == ["/v1/chat/completions"]
    # The first chat looks up the context window (max_model_len), then the client's listing.
    assert fake.gets == ["/v1/models", "/v1/models"]
