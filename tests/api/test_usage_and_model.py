"""What a chat response says about itself (issue 17): its ``usage`` and its ``model``, the
same whether it is streamed or not, and ``n``, which Sentinel refuses rather than ignores.

``usage`` is the upstream's when it reports it; otherwise it is counted with cl100k_base:
the prompt is the messages the generator got (4 tokens per message plus its text), the
completion the text the generator wrote, before the output guardrails. ``model`` is the
model the upstream says it used, else ``LLM_MODEL``, else the request's, else
``sentinel-embedded``. Requests go through the official ``openai`` client over the app in
process (``TestClient``); the upstream is the fake OpenAI-protocol peer over real HTTP.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import openai
import pytest

from sentinel_runtime.guardrails.scanners.token_limit import offline_encoding
from sentinel_runtime.pipeline.conversation import TOKENS_PER_MESSAGE
from support.fake_llm import FakeLLM, cite_chunk_with, sse
from support.inprocess import AppRuntime, app_runtime

ENCODING = offline_encoding("cl100k_base")
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
MESSAGES = [
    {"role": "system", "content": "You are a terse assistant."},
    {"role": "user", "content": "Please repeat: the quick brown fox jumps over the lazy dog."},
]
REFUND = [{"role": "user", "content": "Within how many days can customers get a refund?"}]


def tokens(text: str) -> int:
    return len(ENCODING.encode(text))


def prompt_tokens(messages: Iterable[dict[str, Any]]) -> int:
    return sum(TOKENS_PER_MESSAGE + tokens(m["content"]) for m in messages)


def usage_of(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def create(runtime: AppRuntime, **body: Any) -> Any:
    body = {"model": "client-model", "messages": MESSAGES, **body}
    return runtime.openai().chat.completions.create(**body)


def streamed(runtime: AppRuntime, **body: Any) -> list[Any]:
    return list(create(runtime, stream=True, **body))


def content(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def usage_chunk(chunks: list[Any]) -> dict[str, Any]:
    """The usage of a stream asked for it: its last chunk, with no choices, as OpenAI's."""
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert all(c.usage is None for c in chunks[:-1])
    return last.usage.model_dump(exclude_none=True)


@dataclass
class QuietLLM(FakeLLM):
    """An upstream that may leave out ``usage`` (streamed or not: it ignores
    ``stream_options``) and its ``model`` name, as some model servers do."""

    reports_usage: bool = True
    reports_model: bool = True

    def completion(self, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        return self._quiet(super().completion(payload))

    def stream(self, path: str, payload: Any) -> Iterable[tuple[float, bytes]] | None:
        if isinstance(payload, dict) and not self.reports_usage:
            payload = {k: v for k, v in payload.items() if k != "stream_options"}
        events = super().stream(path, payload)
        return None if events is None else (self._quiet_event(p, e) for p, e in events)

    def _quiet(self, data: dict[str, Any]) -> dict[str, Any]:
        if not self.reports_usage:
            data.pop("usage", None)
        if not self.reports_model:
            data.pop("model", None)
        return data

    def _quiet_event(self, pause: float, event: bytes) -> tuple[float, bytes]:
        data = event.removeprefix(b"data: ").strip()
        if data == b"[DONE]":
            return pause, event
        return pause, sse(self._quiet(json.loads(data)))


@pytest.fixture(scope="module")
def embedded() -> Iterator[AppRuntime]:
    """The runtime with its embedded generator (no LLM_INFERENCE_URL), the shipped policy
    and the demo corpus, as ``sentinel serve`` starts with nothing configured."""
    with app_runtime() as runtime:
        yield runtime


@pytest.fixture
def upstream(app_factory) -> Iterator[Callable[..., tuple[AppRuntime, QuietLLM]]]:
    """An app in front of a :class:`QuietLLM` built with ``fake`` (its fields), ``settings``
    over ``sentinel serve``'s defaults."""
    fakes: list[QuietLLM] = []

    def start(fake: dict[str, Any] | None = None, **settings: Any) -> tuple[AppRuntime, QuietLLM]:
        peer = QuietLLM(**(fake or {}))
        peer.start()
        fakes.append(peer)
        return app_factory({"LLM_INFERENCE_URL": peer.base_url, **settings}), peer

    yield start
    for peer in fakes:
        peer.stop()


# --- usage ------------------------------------------------------------------------------------


def test_the_embedded_generator_counts_its_usage(embedded: AppRuntime) -> None:
    completion = create(embedded)

    answer = MESSAGES[-1]["content"]  # the embedded generator echoes the question
    assert completion.choices[0].message.content == answer
    assert completion.usage.model_dump(exclude_none=True) == usage_of(
        prompt_tokens(MESSAGES), tokens(answer)
    )


def test_the_completion_is_counted_as_generated_before_redaction(embedded: AppRuntime) -> None:
    said = f"My key is {AWS_KEY} for the record."
    completion = create(embedded, messages=[{"role": "user", "content": said}])

    assert AWS_KEY not in completion.choices[0].message.content  # the shipped policy redacts
    assert completion.usage.completion_tokens == tokens(said)


def test_a_stream_sends_usage_only_when_asked(embedded: AppRuntime) -> None:
    plain = streamed(embedded)
    counted = streamed(embedded, stream_options={"include_usage": True})

    assert all(c.usage is None for c in plain) and plain[-1].choices
    assert usage_chunk(counted) == create(embedded).usage.model_dump(exclude_none=True)
    assert usage_chunk(counted) == usage_of(
        prompt_tokens(MESSAGES), tokens(MESSAGES[-1]["content"])
    )


def test_an_extractive_rag_answer_counts_the_clients_messages(embedded: AppRuntime) -> None:
    completion = create(embedded, messages=REFUND, extra_body={"index_name": "demo"})
    chunks = streamed(
        embedded,
        messages=REFUND,
        stream_options={"include_usage": True},
        extra_body={"index_name": "demo"},
    )

    answer = completion.choices[0].message.content
    assert "30 days" in answer
    expected = usage_of(prompt_tokens(REFUND), tokens(answer))
    assert completion.usage.model_dump(exclude_none=True) == expected
    assert content(chunks) == answer and usage_chunk(chunks) == expected


def test_usage_and_model_the_upstream_reports_are_relayed(upstream) -> None:
    runtime, _ = upstream()

    completion = create(runtime)
    chunks = streamed(runtime, stream_options={"include_usage": True})

    # The fake's numbers: 1/1 answered whole, 3/5 streamed (nothing like a real count).
    assert completion.usage.model_dump(exclude_none=True) == usage_of(1, 1)
    assert usage_chunk(chunks) == usage_of(3, 5)
    assert completion.model == chunks[0].model == "fake-model"


def test_usage_an_upstream_leaves_out_is_counted(upstream) -> None:
    runtime, fake = upstream({"reports_usage": False, "content": "Forty-two, as always."})

    completion = create(runtime)
    sent = fake.requests[-1]["json"]["messages"]
    chunks = streamed(runtime, stream_options={"include_usage": True})

    expected = usage_of(prompt_tokens(sent), tokens("Forty-two, as always."))
    assert completion.usage is not None
    assert completion.usage.model_dump(exclude_none=True) == expected
    assert content(chunks) == "Forty-two, as always." and usage_chunk(chunks) == expected
    assert fake.requests[-1]["json"]["stream_options"] == {"include_usage": True}


def test_a_rag_answer_counts_what_the_upstream_was_sent_when_it_reports_no_usage(
    upstream,
) -> None:
    reply = "Refunds can be requested within 30 days of purchase."
    runtime, fake = upstream({"reports_usage": False})
    fake.responder = cite_chunk_with("30 days", reply)

    completion = create(runtime, messages=REFUND, extra_body={"index_name": "demo"})

    assert completion.choices[0].message.content == reply
    asked = [r["json"] for r in fake.requests]
    assert len(asked) == 1  # one call: its prompt and its JSON reply are what counts
    written = fake.responder(asked[0], 0)
    expected = usage_of(prompt_tokens(asked[0]["messages"]), tokens(written))
    assert completion.usage.model_dump(exclude_none=True) == expected


# --- model ------------------------------------------------------------------------------------


def test_the_embedded_generator_names_the_same_model_streamed_or_not(
    embedded: AppRuntime,
) -> None:
    """``sentinel-embedded``, the name ``/v1/models`` lists, whatever the request names;
    with an index or without."""
    assert [m["id"] for m in embedded.client.get("/v1/models").json()["data"]] == [
        "sentinel-embedded"
    ]
    cases = [
        ({"model": "gpt-4o-mini", "messages": MESSAGES}, "sentinel-embedded"),
        ({"messages": MESSAGES}, "sentinel-embedded"),
        ({"model": "gpt-4o-mini", "messages": REFUND, "index_name": "demo"}, "sentinel-embedded"),
        ({"messages": REFUND, "index_name": "demo"}, "sentinel-embedded"),
    ]
    named = []
    for request, expected in cases:
        whole = embedded.client.post("/v1/chat/completions", json=request)
        events = embedded.client.post("/v1/chat/completions", json={**request, "stream": True})
        assert whole.status_code == events.status_code == 200
        data = re.findall(r"^data: (\{.*)$", events.text, re.MULTILINE)
        models = {json.loads(chunk)["model"] for chunk in data}
        named.append((whole.json()["model"], models, expected))
    assert named == [(expected, {expected}, expected) for _, expected in cases]


@pytest.mark.parametrize(
    ("fake", "settings", "expected"),
    [
        pytest.param({}, {"LLM_MODEL": "pinned-alias"}, "fake-model", id="upstream-names-it"),
        pytest.param(
            {"reports_model": False}, {"LLM_MODEL": "pinned-alias"}, "pinned-alias", id="pinned"
        ),
        pytest.param({"reports_model": False}, {}, "client-model", id="asked"),
    ],
)
def test_an_upstream_answer_names_the_same_model_streamed_or_not(
    upstream, fake: dict[str, Any], settings: dict[str, Any], expected: str
) -> None:
    runtime, _ = upstream(fake, **settings)

    completion = create(runtime)
    chunks = streamed(runtime, stream_options={"include_usage": True})

    assert completion.model == expected
    assert {c.model for c in chunks} == {expected}


# --- n ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param({}, id="chat"),
        pytest.param({"index_name": "demo"}, id="rag"),
        pytest.param({"stream": True}, id="stream"),
    ],
)
def test_n_above_one_is_refused_by_name(embedded: AppRuntime, extra: dict[str, Any]) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        create(embedded, n=3, messages=REFUND, extra_body=extra)

    assert refused.value.status_code == 400
    assert refused.value.param == "n"
    assert "one guarded answer" in refused.value.message


def test_n_is_refused_before_the_upstream_is_asked(upstream) -> None:
    runtime, fake = upstream()

    with pytest.raises(openai.BadRequestError) as refused:
        create(runtime, n=2)

    assert refused.value.param == "n"
    assert fake.requests == []
    assert create(runtime, n=1).choices[0].message.content == "Hello from the fake LLM."
