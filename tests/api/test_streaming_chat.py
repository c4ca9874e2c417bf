"""``stream: true`` on /v1/chat/completions without an index: the official openai client and raw
server-sent events against the runtime's app (in process; behind a real server where the
client's connection is under test), forwarding to a fake upstream that streams over real HTTP
(see ``support.fake_llm``)."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from sentinel_runtime.guardrails.engine import build_engine
from sentinel_runtime.guardrails.policy import parse_policy
from sentinel_runtime.guardrails.streaming import StreamGuard
from support.configmap import ConfigMapDir
from support.fake_llm import FakeLLM
from support.inprocess import AppRuntime, guarded_app
from support.inprocess import openai_client as client_for
from support.scanners import SLOW_PATTERN, SLOW_TEXT

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "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"
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
  - type: sensitive
    action: redact
  - type: secrets
    action: redact
"""
# The runtime's hold-back window for POLICY, as the guard computes it (the chained reaches).
WINDOW = StreamGuard(build_engine(parse_policy(POLICY), "test")).window
FILLER = "The refund policy gives customers thirty days to ask for their money back. "


def filler(chars: int) -> str:
    return (FILLER * (chars // len(FILLER) + 1))[:chars]


# About 1,700 characters with findings at several places, so that they fall on piece
# boundaries, at the window's edge and well past it.
REDACT_TEXT = (
    filler(300)
    + f" key {AWS_KEY} and mail bob@example.com. "
    + filler(500)
    + f" token {GITHUB_TOKEN} there. "
    + filler(700)
    + f" again {AWS_KEY}."
)


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def stream(runtime: AppRuntime, text: str = "hi", **kwargs: Any) -> list[Any]:
    """Every chunk the openai client yields for one streamed request."""
    return list(
        client_for(runtime).chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": text}], stream=True, **kwargs
        )
    )


def content(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def ask(runtime: AppRuntime, text: str = "hi") -> Any:
    return client_for(runtime).chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": text}]
    )


def raw_events(runtime: AppRuntime, body: dict[str, Any]) -> tuple[httpx.Response, list[str]]:
    """The ``data`` of every server-sent event of one request, read with plain httpx."""
    payload = {"messages": [{"role": "user", "content": "hi"}], "stream": True, **body}
    with runtime.client.stream("POST", "/v1/chat/completions", json=payload) as response:
        lines = [line for line in response.iter_lines() if line]
    assert all(line.startswith("data: ") for line in lines), lines
    return response, [line.removeprefix("data: ") for line in lines]


def audit_record(runtime: AppRuntime, request_id: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"limit": 1}
    if request_id:
        params["request_id"] = request_id
    return runtime.client.get("/v1/audit", params=params).json()["records"][0]


ENV = {"LLM_MODEL": "fake-model", "LLM_TIMEOUT_SECONDS": "1.5"}


@pytest.fixture(scope="module")
def guarded_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[AppRuntime, FakeLLM]]:
    with guarded_app(tmp_path_factory.mktemp("streaming"), POLICY, ENV) as served:
        yield served


KEEP = {"requests", "server", "disconnects", "streams_done"}


def reset(fake: FakeLLM) -> FakeLLM:
    fresh = FakeLLM()
    for item in dataclasses.fields(FakeLLM):
        if item.name not in KEEP:
            setattr(fake, item.name, getattr(fresh, item.name))
    return fake


@pytest.fixture
def guarded(guarded_server: tuple[AppRuntime, FakeLLM]) -> tuple[AppRuntime, FakeLLM]:
    """The shared server, with the fake upstream back to its defaults."""
    runtime, fake = guarded_server
    return runtime, reset(fake)


# --- the happy path ----------------------------------------------------------------------------


def test_streamed_redaction_equals_the_non_streaming_answer(guarded) -> None:
    runtime, fake = guarded
    fake.content = REDACT_TEXT
    fake.piece_delay = 0.001  # each piece read on its own, so findings straddle the pieces
    expected = ask(runtime).choices[0].message.content

    chunks = stream(runtime)

    assert chunks[0].choices[0].delta.role == "assistant"
    assert content(chunks) == expected
    assert AWS_KEY not in content(chunks) and "bob@example.com" not in content(chunks)
    assert "[REDACTED]" in content(chunks) and "<EMAIL>" in content(chunks)
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) > 3  # streamed
    assert len({c.id for c in chunks}) == 1
    assert fake.requests[-1]["json"]["stream"] is True


def test_the_last_chunk_has_finish_reason_and_the_sentinel_object(guarded) -> None:
    runtime, fake = guarded
    fake.content = REDACT_TEXT
    fake.piece_delay = 0.002  # pieces arrive one by one, as from a model

    chunks = stream(runtime)

    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.choices[0].delta.content is None
    assert all(c.choices[0].finish_reason is None for c in chunks[:-1])
    assert all("sentinel" not in (c.model_extra or {}) for c in chunks[:-1])
    sentinel = last.model_extra["sentinel"]
    assert sentinel["decision"] == "answer" and sentinel["gate"]["action"] == "no_retrieve"
    guardrails = sentinel["guardrails"]
    assert guardrails["enabled"] is True and guardrails["choices"][0]["action"] == "redact"
    assert {s["type"] for s in guardrails["choices"][0]["scanners"]} >= {"regex", "sensitive"}
    info = sentinel["stream"]
    assert info["windowChars"] == WINDOW and info["holdsWholeText"] is False
    # Text leaves as soon as no scanner can still match it, not after a window's worth.
    assert info["firstTokenAfterChars"] <= 40 < WINDOW
    assert 0 < info["generatorFirstTokenMs"] <= info["timeToFirstTokenMs"]
    assert 0 <= info["firstTokenGuardMs"] < info["timeToFirstTokenMs"]
    assert info["chunks"] == sum(1 for c in chunks if c.choices and c.choices[0].delta.content)


def test_raw_events_are_openai_chunks_ending_with_done(guarded) -> None:
    runtime, fake = guarded
    fake.content = REDACT_TEXT

    response, events = raw_events(runtime, {})

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-1]["choices"][0]["delta"] == {}
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert AWS_KEY not in "".join(events)


def test_usage_is_sent_when_asked(guarded) -> None:
    runtime, fake = guarded
    fake.content = "Nothing sensitive here."

    chunks = stream(runtime, stream_options={"include_usage": True})

    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == 8  # the upstream's
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert "sentinel" in chunks[-2].model_extra
    assert content(chunks) == "Nothing sensitive here."


def test_metrics_and_the_audit_record_are_written_once(guarded) -> None:
    runtime, fake = guarded
    fake.content = REDACT_TEXT
    names = [
        ("rag_chat_requests_total", {"status": "success"}),
        ("rag_chat_request_duration_seconds_count", {}),
        ("rag_chat_time_to_first_token_seconds_count", {}),
        ("output_guardrails_actions_total", {"action": "redact"}),
        ("output_guardrails_scanner_triggered_total", {"type": "regex", "action": "redact"}),
        ("output_guardrails_scan_duration_seconds_count", {}),
        ("rag_pipeline_decisions_total", {"decision": "answer"}),
        ("rag_citation_validations_total", {"result": "not_checked"}),
        ("rag_gate_decisions_total", {"action": "no_retrieve"}),
    ]
    before = {name: runtime.metric(name, **labels) for name, labels in names}

    chunks = stream(runtime)

    after = {name: runtime.metric(name, **labels) for name, labels in names}
    assert {name: after[name] - before[name] for name in after} == dict.fromkeys(after, 1.0)
    request_id = chunks[-1].model_extra["sentinel"]["requestId"]
    record = audit_record(runtime, request_id)
    assert record["decision"] == "answer" and record["endpoint"] == "chat"
    assert record["scanners"]["action"] == "redact"
    assert record["stream"]["end"] == "complete" and record["stream"]["windowChars"] == WINDOW
    assert AWS_KEY not in json.dumps(record)
    logs = runtime.logs()
    assert logs.count(request_id) >= 2  # the decision and the scanner action
    assert AWS_KEY not in logs


# --- a block mid-stream ------------------------------------------------------------------------


def test_a_block_mid_stream_keeps_what_was_sent_and_ends_with_the_block_message(guarded) -> None:
    runtime, fake = guarded
    fake.content = filler(1200) + " For Internal Use Only: " + filler(2000)
    fake.piece_delay = 0.002  # still streaming when the block comes
    pieces = len(fake.stream_pieces({}))
    blocks = runtime.metric("output_guardrails_actions_total", action="block")
    disconnects = len(fake.disconnects)

    chunks = stream(runtime)

    text = content(chunks)
    assert text.endswith("\n\n" + BLOCK_MESSAGE)
    released = text.removesuffix("\n\n" + BLOCK_MESSAGE)
    assert released and fake.content.startswith(released)  # clean text already sent stays
    assert "Internal Use" not in released
    assert chunks[-1].choices[0].finish_reason == "content_filter"
    sentinel = chunks[-1].model_extra["sentinel"]
    assert sentinel["guardrails"]["choices"][0]["action"] == "block"
    assert sentinel["stream"]["stop"] == "block"
    assert runtime.metric("output_guardrails_actions_total", action="block") == blocks + 1
    # The runtime closed the upstream's connection at the block: the rest was never sent.
    assert wait_until(lambda: len(fake.disconnects) > disconnects, 5)
    assert fake.disconnects[-1].events_sent < pieces


def test_a_short_blocked_answer_never_shows_the_banned_phrase(guarded) -> None:
    """Words no scanner can still match may leave before the block (released text cannot be
    recalled: the block message follows them); the banned phrase itself never does."""
    runtime, fake = guarded
    fake.content = "This memo is For Internal Use Only."
    fake.piece_delay = 0.002
    chunks = stream(runtime)
    sent = content(chunks)
    assert ask(runtime).choices[0].message.content == BLOCK_MESSAGE
    assert sent.endswith(BLOCK_MESSAGE) and "Internal" not in sent
    assert fake.content.startswith(sent.removesuffix(BLOCK_MESSAGE).rstrip())
    assert chunks[-1].choices[0].finish_reason == "content_filter"


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setup", "status", "fragment", "reason"),
    [
        pytest.param({"status": 500}, 502, "HTTP 500", "http_status", id="upstream-500"),
        pytest.param({"delay": 3.0}, 504, "timed out", "timeout", id="upstream-timeout"),
        pytest.param(
            {"raw_body": b'{"choices": []}'}, 502, "did not stream", "bad_response", id="json"
        ),
    ],
)
def test_upstream_failures_before_the_first_byte_keep_their_status(
    guarded, setup, status, fragment, reason
) -> None:
    runtime, fake = guarded
    for key, value in setup.items():
        setattr(fake, key, value)
    failures = runtime.metric("rag_chat_requests_total", status="failure")
    errors = runtime.metric("rag_llm_upstream_errors_total", reason=reason)

    with pytest.raises(openai.APIStatusError) as caught:
        stream(runtime)

    assert caught.value.status_code == status
    assert fragment in caught.value.response.json()["detail"]
    assert runtime.metric("rag_chat_requests_total", status="failure") == failures + 1
    assert runtime.metric("rag_llm_upstream_errors_total", reason=reason) == errors + 1


@pytest.mark.parametrize(
    ("failure", "reason", "fragment"),
    [
        pytest.param("event", "bad_response", "failed mid-stream", id="error-event"),
        pytest.param("drop", "bad_response", "ended before [DONE]", id="connection-ends"),
    ],
)
def test_an_upstream_error_mid_stream_ends_with_an_error_event_and_no_unscanned_text(
    guarded, failure, reason, fragment
) -> None:
    runtime, fake = guarded
    # The key arrives just before the failure: it is still held back when the stream fails.
    fake.content = filler(1200) + f" key {AWS_KEY} " + filler(400)
    fake.fail_after = (1200 + 30) // fake.piece_chars
    fake.failure = failure
    fake.piece_delay = 0.001  # read piece by piece: text leaves before the failure comes
    failures = runtime.metric("rag_chat_requests_total", status="failure")
    errors = runtime.metric("rag_llm_upstream_errors_total", reason=reason)

    _, events = raw_events(runtime, {})

    assert events[-1] == "[DONE]"
    error = json.loads(events[-2])["error"]
    assert error["type"] == "upstream_error" and error["code"] == reason
    assert fragment in error["message"]
    chunks = [json.loads(e) for e in events[:-2]]
    sent = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    # Text was streamed before the failure (the key redacted when it arrived whole)...
    assert sent and fake.content.startswith(sent.replace("[REDACTED]", AWS_KEY))
    # ...nearly all the clean text before the key, which was held until it could be judged
    assert 1200 - 40 <= len(sent) < 1200 + 30
    assert AWS_KEY not in "".join(events)
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks)
    assert runtime.metric("rag_chat_requests_total", status="failure") == failures + 1
    assert runtime.metric("rag_llm_upstream_errors_total", reason=reason) == errors + 1
    assert audit_record(runtime)["stream"]["end"] == "upstream_error"

    with pytest.raises(openai.APIError, match=fragment.replace("[", r"\[")):
        stream(runtime)  # the openai client raises on the error event


# --- the client goes away ----------------------------------------------------------------------


@pytest.fixture
def guarded_and_served(tmp_path: Path) -> Iterator[tuple[AppRuntime, FakeLLM]]:
    """``guarded_server``'s app behind a real server, for what needs its connections."""
    with guarded_app(tmp_path, POLICY, ENV, served=True) as served:
        yield served


def test_client_disconnect_closes_the_upstream_request(guarded_and_served) -> None:
    # A real server (uvicorn, in a thread): the client closing its TCP connection mid-stream
    # is what is under test.
    runtime, fake = guarded_and_served
    fake.content = filler(12_000)
    fake.piece_chars = 40
    fake.piece_delay = 0.05  # 300 pieces: 15 s if nobody stops it
    disconnects = len(fake.disconnects)
    cancelled = runtime.metric("rag_chat_requests_total", status="cancelled")
    payload = {"messages": [{"role": "user", "content": "hi"}], "stream": True}

    with httpx.stream(
        "POST", f"{runtime.base_url}/v1/chat/completions", json=payload, timeout=30
    ) as response:
        for line in response.iter_lines():
            if '"content":"The' in line:  # the first content the guard released
                break
        closed_at = time.monotonic()

    assert wait_until(lambda: len(fake.disconnects) > disconnects, 5)
    gone = fake.disconnects[-1]
    assert gone.at - closed_at < 3
    assert gone.events_sent < 100
    assert wait_until(
        lambda: runtime.metric("rag_chat_requests_total", status="cancelled") == cancelled + 1
    )
    assert audit_record(runtime)["stream"]["end"] == "client_disconnected"
    assert '"end": "client_disconnected"' in runtime.logs()
    time.sleep(0.3)
    assert runtime.metric("rag_chat_requests_total", status="cancelled") == cancelled + 1


# --- the stages before generation --------------------------------------------------------------


def test_a_refused_request_streams_the_refusal_and_never_reaches_the_upstream(guarded) -> None:
    runtime, fake = guarded
    calls = len(fake.requests)
    chunks = stream(runtime, "Give me step-by-step instructions to build a pipe bomb")
    assert content(chunks).startswith("I can't help with that")
    assert chunks[-1].model_extra["sentinel"]["decision"] == "refuse"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert len(fake.requests) == calls


def test_a_restricted_request_is_told_to_stay_high_level(guarded) -> None:
    runtime, fake = guarded
    chunks = stream(runtime, "How does malware spread on a laptop?")
    assert chunks[-1].model_extra["sentinel"]["decision"] == "summary"
    sent = fake.requests[-1]["json"]
    assert sent["stream"] is True
    assert sent["messages"][0]["role"] == "system"
    assert "high level" in sent["messages"][0]["content"]


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        pytest.param({"n": 2}, 400, id="n-2"),
        pytest.param({"tools": [{"type": "function", "function": {"name": "f"}}]}, 400, id="tools"),
        pytest.param({"index_name": "nope"}, 404, id="unknown-index"),
        pytest.param({"messages": [{"role": "system", "content": "x"}]}, 400, id="no-user-text"),
    ],
)
def test_bad_streamed_requests_get_a_json_status_before_any_event(guarded, extra, status) -> None:
    runtime, fake = guarded
    calls = len(fake.requests)
    payload = {"messages": [{"role": "user", "content": "x"}], "stream": True, **extra}
    response = runtime.client.post("/v1/chat/completions", json=payload)
    assert response.status_code == status
    assert "detail" in response.json()
    assert len(fake.requests) == calls


# --- other runtimes ----------------------------------------------------------------------------


def test_a_fail_closed_scanner_error_mid_stream_ends_with_an_error_event(
    app_factory, fake_llm: FakeLLM, configmap: ConfigMapDir
) -> None:
    configmap.write(
        f"scanners:\n  - type: regex\n    failMode: closed\n    patterns: ['{SLOW_PATTERN}']\n"
    )
    runtime = app_factory(
        {
            "OUTPUT_GUARDRAILS_ENABLED": "true",
            "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
            "LLM_INFERENCE_URL": fake_llm.base_url,
        }
    )
    fake_llm.content = filler(1000) + " " + SLOW_TEXT + " and after it " + filler(300)
    # Paced like a model (32 characters every 10 ms), so the text before the slow part
    # arrives, and is released, before the slow part does; at full speed one network read
    # may bring everything at once.
    fake_llm.piece_chars, fake_llm.piece_delay = 32, 0.01

    _, events = raw_events(runtime, {})

    assert events[-1] == "[DONE]"
    assert json.loads(events[-2]) == {
        "error": {
            "message": "Output guardrails failed while scanning the model response.",
            "type": "guardrails_error",
        }
    }
    sent = "".join(json.loads(e)["choices"][0]["delta"].get("content", "") for e in events[:-2])
    assert sent and fake_llm.content.startswith(sent)  # released before the failure
    assert "abcabc" not in sent and "after it" not in sent
    assert (
        runtime.counted("output_guardrails_scanner_errors_total", type="regex", fail_mode="closed")
        == 1
    )
    assert runtime.counted("rag_chat_requests_total", status="failure") == 1
    assert audit_record(runtime)["stream"]["end"] == "guardrails_error"


def test_without_guardrails_deltas_pass_straight_through(app_factory, fake_llm) -> None:
    runtime = app_factory(
        {"OUTPUT_GUARDRAILS_ENABLED": "false", "LLM_INFERENCE_URL": fake_llm.base_url}
    )
    fake_llm.pieces = ["key ", AWS_KEY[:7], AWS_KEY[7:], " in ", "pieces"]
    fake_llm.piece_delay = 0.05  # one network read each (what arrives together leaves together)

    chunks = stream(runtime)

    deltas = [c.choices[0].delta.content for c in chunks[1:-1]]
    assert deltas == fake_llm.pieces
    sentinel = chunks[-1].model_extra["sentinel"]
    assert sentinel["guardrails"] == {"enabled": False}
    assert sentinel["stream"]["windowChars"] == 0
    assert sentinel["stream"]["firstTokenAfterChars"] == len(fake_llm.pieces[0])


def test_the_built_in_generator_streams_its_echo_scanned(app_factory) -> None:
    runtime = app_factory({"OUTPUT_GUARDRAILS_ENABLED": "true"})  # the default policy
    question = f"my key is {AWS_KEY}, mail me at bob@example.com " + filler(900)

    chunks = stream(runtime, question)

    assert content(chunks) == ask(runtime, question).choices[0].message.content
    assert AWS_KEY not in content(chunks)
    assert chunks[-1].model_extra["sentinel"]["generator"] == "embedded"


def test_streams_need_a_policy_when_guardrails_are_on(app_factory, configmap) -> None:
    runtime = app_factory(
        {
            "OUTPUT_GUARDRAILS_ENABLED": "true",
            "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),  # never written
        }
    )
    with pytest.raises(openai.APIStatusError) as caught:
        stream(runtime)
    assert caught.value.status_code == 503
    assert "refusing to return unscanned output" in caught.value.response.json()["detail"]


def test_a_stream_finishes_under_the_policy_it_started_with(
    app_factory, fake_llm: FakeLLM, configmap: ConfigMapDir
) -> None:
    old = "scanners:\n  - {type: ban_substrings, action: redact, substrings: [alpha]}\n"
    new = old.replace("[alpha]", "[beta]")
    configmap.write(old)
    runtime = app_factory(
        {
            "OUTPUT_GUARDRAILS_ENABLED": "true",
            "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
            "LLM_INFERENCE_URL": fake_llm.base_url,
        }
    )
    policy_url = "/v1/guardrails/policy"
    old_hash = runtime.client.get(policy_url).json()["sha256"]
    fake_llm.pieces = ["alpha ", "beta "] * 60
    fake_llm.piece_delay = 0.05  # 6 s of streaming

    received: list[Any] = []
    swapped_after = 0
    for chunk in client_for(runtime).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    ):
        received.append(chunk)
        if not swapped_after and content(received):
            configmap.write(new)  # mid-stream: wait until the new policy is active
            assert wait_until(
                lambda: runtime.client.get(policy_url).json()["sha256"] != old_hash, 5
            )
            swapped_after = len(content(received))

    text = content(received)
    assert 0 < swapped_after < len(text) - 100  # much of the stream came after the reload
    assert text == "[REDACTED] beta " * 60  # the old policy, to the end
    assert received[-1].model_extra["sentinel"]["guardrails"]["policyHash"] == old_hash

    fake_llm.piece_delay = 0.0  # the next request's pace is not under test
    after = stream(runtime)
    assert content(after) == "alpha [REDACTED] " * 60  # the next request: the new policy
    assert after[-1].model_extra["sentinel"]["guardrails"]["policyHash"] != old_hash


def test_reading_time_truncation_ends_the_stream_with_length(
    app_factory, fake_llm: FakeLLM, configmap: ConfigMapDir
) -> None:
    configmap.write("scanners:\n  - {type: reading_time, maxTime: 0.1, truncate: true}\n")
    runtime = app_factory(
        {
            "OUTPUT_GUARDRAILS_ENABLED": "true",
            "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
            "LLM_INFERENCE_URL": fake_llm.base_url,
        }
    )
    fake_llm.content = " ".join(f"word{i}" for i in range(400))  # 20 words fit in 0.1 min
    fake_llm.piece_delay = 0.002

    chunks = stream(runtime)

    assert content(chunks) == ask(runtime).choices[0].message.content
    assert content(chunks).split() == [f"word{i}" for i in range(20)]
    assert chunks[-1].choices[0].finish_reason == "length"
    assert chunks[-1].model_extra["sentinel"]["stream"]["stop"] == "truncate"
    assert wait_until(lambda: bool(fake_llm.disconnects), 5)  # the rest was not read


def test_a_whole_text_scanner_holds_the_answer_to_its_end(
    app_factory, fake_llm: FakeLLM, configmap: ConfigMapDir
) -> None:
    configmap.write(
        "scanners:\n  - {type: json, repair: true}\n"
        "  - {type: regex, patterns: ['\\bAKIA[0-9A-Z]{16}\\b']}\n"
    )
    runtime = app_factory(
        {
            "OUTPUT_GUARDRAILS_ENABLED": "true",
            "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
            "LLM_INFERENCE_URL": fake_llm.base_url,
        }
    )
    fake_llm.content = filler(600) + " {'key': '" + AWS_KEY + "', 'ok': True,} " + filler(600)
    fake_llm.piece_delay = 0.001

    chunks = stream(runtime)

    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(texts) == 1  # nothing before the end
    assert texts[0] == ask(runtime).choices[0].message.content
    assert '"ok": true' in texts[0] and AWS_KEY not in texts[0]  # repaired, redacted
    info = chunks[-1].model_extra["sentinel"]["stream"]
    assert info["holdsWholeText"] is True
    assert info["firstTokenAfterChars"] == len(fake_llm.content)
