"""``stream: true`` with ``index_name`` and an upstream model: the answer streams as the model
writes it. Each sentence leaves once it is complete and its inline citation markers pass
(known chunks, the support check, the policy's rules), then through the output scanners; a
sentence that fails ends the stream with the policy's ``citations.blockedAnswer``. The
official openai client against the runtime's app (in process) over the demo corpus, in front
of a fake upstream that streams over real HTTP at a set pace and notes when it wrote its
last piece (``support.fake_llm``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest

from sentinel_runtime.pipeline.cite.citations import BLOCKED_ANSWER
from support.fake_llm import FakeLLM, inline_marker
from support.inprocess import AppRuntime, app_runtime, guarded_app
from support.inprocess import openai_client as client_for

QUESTION = "How long do customers have to request a refund?"
CHUNK = "refund-policy-2026#p0"
BLOCK_MESSAGE = "Blocked by the test policy."
POLICY = f"""\
blockMessage: {BLOCK_MESSAGE}
scanners:
  - type: ban_substrings
    action: block
    substrings: [original payment method]
"""
# Sentences the refund chunk holds, numbers and words alike (the support check passes them).
HELD = [
    "Customers may request a full refund within 30 days of purchase",
    "A full refund may be requested within 30 days of purchase",
    "Gift cards and custom orders cannot be refunded",
    "Refunds are issued within 5 business days",
]
UNSUPPORTED = "Customers may request a full refund within 90 days of purchase"
BANNED = "Refunds are issued to the original payment method within 5 business days"

Answer = Callable[[str], str]  # the chunk's marker -> the model's reply


def sentences(*texts: str) -> Answer:
    """A reply of ``texts``, each citing the refund chunk (one that ends with a full stop
    already carries its own marker, or none)."""

    def reply(marker: str) -> str:
        return " ".join(t if t.endswith(".") else f"{t} {marker}." for t in texts)

    return reply


def answers(fake: FakeLLM, reply: Answer, *, pace: float = 0.004) -> None:
    """The fake model writes ``reply`` four characters at a time, ``pace`` seconds apart."""
    fake.responder = lambda payload, index: reply(inline_marker(payload, "30 days"))
    fake.piece_chars, fake.piece_delay = 4, pace


def expected(reply: Answer) -> str:
    """What the client reads of a reply that passes: its markers written as chunk ids."""
    return reply(f"[{CHUNK}]")


def ask(client: openai.OpenAI) -> Iterator[Any]:
    return client.chat.completions.create(
        model="any",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        extra_body={"index_name": "demo"},
    )


def streamed(runtime: AppRuntime) -> tuple[list[Any], list[float]]:
    """Every chunk of one streamed answer, and when each content chunk arrived."""
    chunks: list[Any] = []
    arrived: list[float] = []
    for chunk in ask(client_for(runtime)):
        if chunk.choices and chunk.choices[0].delta.content:
            arrived.append(time.monotonic())
        chunks.append(chunk)
    return chunks, arrived


def content(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def sentinel(chunks: list[Any]) -> dict[str, Any]:
    return chunks[-1].model_extra["sentinel"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppRuntime, FakeLLM]]:
    with guarded_app(tmp_path_factory.mktemp("llm"), POLICY) as pair:
        yield pair


@pytest.fixture(scope="module")
def dropping(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppRuntime, FakeLLM]]:
    policy = POLICY + "citations:\n  unsupported: drop\n"
    with guarded_app(tmp_path_factory.mktemp("drop"), policy) as pair:
        yield pair


# --- streaming while the model writes ---------------------------------------------------------


def test_a_rag_answer_streams_before_the_model_has_finished(served) -> None:
    runtime, fake = served
    reply = sentences(*HELD, *HELD)
    answers(fake, reply)

    chunks, arrived = streamed(runtime)

    # The upstream was asked to stream, and several pieces reached the client before it
    # wrote its last one.
    request = fake.requests[-1]["json"]
    assert request["stream"] is True and "response_format" not in request
    finished = fake.last_piece_sent[-1]
    assert sum(1 for at in arrived if at < finished) >= 3
    assert content(chunks) == expected(reply)
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    trace = sentinel(chunks)
    assert trace["stream"]["rag"] == "incremental"
    assert trace["decision"] == "answer" and trace["generator"] == "llm"
    assert trace["citations"]["ids"] == [CHUNK]
    assert trace["citations"]["validation"]["citation_valid"] is True
    assert trace["generation"]["citationMode"] == "inline"
    assert CHUNK in {k["chunkId"] for k in trace["evidence"]["kept"]}
    assert trace["guardrails"]["enabled"] is True
    assert CHUNK in {n["node_id"] for n in last.model_extra["source_nodes"]}
    # The trace and the evidence arrive in the final event only.
    assert all("sentinel" not in (c.model_extra or {}) for c in chunks[:-1])
    assert all("source_nodes" not in (c.model_extra or {}) for c in chunks[:-1])
    records = runtime.client.get("/v1/audit", params={"request_id": trace["requestId"]})
    record = records.json()["records"][0]
    assert record["decision"] == "answer" and record["stream"]["rag"] == "incremental"


# --- citations that fail ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param("[7]", id="number-past-the-chunks"),
        pytest.param("[made-up#p9]", id="id-of-no-chunk"),
    ],
)
def test_an_unknown_citation_ends_the_stream_before_its_sentence(served, bad: str) -> None:
    runtime, fake = served
    answers(fake, sentences(HELD[0], HELD[2], f"Refunds take 45 days {bad}.", HELD[3]))

    chunks, _ = streamed(runtime)

    # What passed before stays (it cannot be recalled); the sentence with the unknown id and
    # everything after it never leave; the policy's citation block message ends the stream.
    before = sentences(HELD[0], HELD[2])
    assert content(chunks) == f"{expected(before)}\n\n{BLOCKED_ANSWER}"
    assert "45 days" not in content(chunks) and bad not in content(chunks)
    assert chunks[-1].choices[0].finish_reason == "content_filter"
    trace = sentinel(chunks)
    assert trace["decision"] == "block" and trace["stream"]["rag"] == "incremental"
    errors = trace["citations"]["validation"]["errors"]
    assert any("does not match any retrieved chunk" in e for e in errors)


def test_an_unknown_citation_in_the_first_sentence_sends_only_the_block_message(served) -> None:
    runtime, fake = served
    answers(fake, sentences("Refunds take 45 days [9].", *HELD))

    chunks, _ = streamed(runtime)

    assert content(chunks) == BLOCKED_ANSWER
    assert chunks[-1].choices[0].finish_reason == "content_filter"


def test_an_unsupported_sentence_blocks_where_it_stands(served) -> None:
    runtime, fake = served
    answers(fake, sentences(HELD[0], HELD[2], UNSUPPORTED, HELD[3]))

    chunks, _ = streamed(runtime)

    assert content(chunks) == f"{expected(sentences(HELD[0], HELD[2]))}\n\n{BLOCKED_ANSWER}"
    assert "90 days" not in content(chunks)
    assert chunks[-1].choices[0].finish_reason == "content_filter"
    validation = sentinel(chunks)["citations"]["validation"]
    assert [u["sentence"] for u in validation["unsupported"]] == [UNSUPPORTED + "."]


def test_an_unsupported_sentence_is_dropped_when_the_policy_says_drop(dropping) -> None:
    runtime, fake = dropping
    answers(fake, sentences(HELD[0], UNSUPPORTED, HELD[2]))

    chunks, _ = streamed(runtime)

    assert content(chunks) == expected(sentences(HELD[0], HELD[2]))
    assert chunks[-1].choices[0].finish_reason == "stop"
    validation = sentinel(chunks)["citations"]["validation"]
    assert validation["citation_valid"] is True and validation["droppedSentences"] == 1


def test_an_answer_that_cites_nothing_never_leaves(served) -> None:
    runtime, fake = served
    answers(fake, lambda marker: " ".join(f"{s}." for s in HELD))

    chunks, _ = streamed(runtime)

    assert content(chunks) == BLOCKED_ANSWER
    validation = sentinel(chunks)["citations"]["validation"]
    assert validation["uncited"] is True and validation["citation_valid"] is False


# --- the output scanners after the citations ----------------------------------------------------


def test_validated_sentences_still_pass_the_output_scanners(served) -> None:
    runtime, fake = served
    answers(fake, sentences(HELD[0], HELD[2], BANNED, HELD[3]))

    chunks, _ = streamed(runtime)

    assert "original payment method" not in content(chunks)
    assert content(chunks).endswith(BLOCK_MESSAGE)
    assert chunks[-1].choices[0].finish_reason == "content_filter"
    trace = sentinel(chunks)
    assert trace["guardrails"]["choices"][0]["action"] == "block"


# --- answers generated whole, and why -----------------------------------------------------------


def test_without_an_upstream_the_answer_is_generated_whole() -> None:
    with app_runtime() as runtime:
        chunks, _ = streamed(runtime)
    stream = sentinel(chunks)["stream"]
    assert stream["rag"] == "whole" and stream["ragWhole"] == "embedded_generator"


def test_a_policy_that_judges_claims_with_the_model_generates_whole(tmp_path) -> None:
    policy = POLICY + "citations:\n  support: llm\n"
    with guarded_app(tmp_path, policy) as (runtime, fake):
        fake.content = "The indexed documents do not say."
        chunks, _ = streamed(runtime)
        assert fake.requests[0]["json"]["stream"] is False
    stream = sentinel(chunks)["stream"]
    assert stream["rag"] == "whole" and stream["ragWhole"] == "support_llm"
