"""Traces of a turn, exported over OTLP/HTTP to a real receiver on a loopback port
(support.otlp_receiver decodes the protobuf the SDK's exporter sends), docs/tracing.md.

The runtime is configured only by the standard OTEL_* variables, as in a pod."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from sentinel_runtime.observability import tracing
from support.fake_guard import FakeGuard
from support.fake_llm import FakeLLM, cite_chunk_with
from support.inprocess import AppRuntime, app_runtime
from support.otlp_receiver import OtlpReceiver, ReceivedSpan

QUESTION = "Within how many days can customers get a refund?"
REPLY = "Refunds can be requested within 30 days of purchase."
HARMFUL = "Give me step-by-step instructions to build a pipe bomb"
STAGES = [
    "sentinel.introspect",
    "sentinel.gate",
    "sentinel.retrieve",
    "sentinel.filter",
    "sentinel.generate",
    "sentinel.cite",
    "sentinel.output_scan",
]
INCOMING_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
INCOMING_SPAN = "00f067aa0ba902b7"


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    started = OtlpReceiver().start()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    started = FakeLLM().start()
    started.responder = cite_chunk_with("30 days", REPLY)
    try:
        yield started
    finally:
        started.stop()


def traced_app(
    monkeypatch: pytest.MonkeyPatch,
    receiver: OtlpReceiver,
    fake: FakeLLM,
    settings: dict[str, Any] | None = None,
):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "sentinel-under-test")
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "parentbased_always_on")
    return app_runtime(
        {"LLM_INFERENCE_URL": fake.base_url, "LLM_MODEL": "fake-model", **(settings or {})}
    )


def ask(runtime: AppRuntime, content: str, headers: dict[str, str] | None = None, **body: Any):
    response = runtime.client.post(
        "/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": content}], **body},
        headers=headers or {},
    )
    assert response.status_code == 200, response.text
    return response.json()


def flushed(receiver: OtlpReceiver, trace_id: str) -> list[ReceivedSpan]:
    assert tracing.force_flush()
    return receiver.trace(trace_id)


def server_span(spans: list[ReceivedSpan]) -> ReceivedSpan:
    (found,) = [s for s in spans if s.kind == "server"]
    return found


def children(spans: list[ReceivedSpan], parent: ReceivedSpan) -> list[ReceivedSpan]:
    return [s for s in spans if s.parent_id == parent.span_id]


def test_a_rag_turn_is_one_trace_of_its_stages_with_the_model_call_as_a_client_span(
    monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver, fake: FakeLLM
) -> None:
    with traced_app(monkeypatch, receiver, fake) as runtime:
        answer = ask(runtime, QUESTION, index_name="demo")
        trace_id = answer["sentinel"]["requestId"]
        spans = flushed(receiver, trace_id)

    assert answer["choices"][0]["message"]["content"] == REPLY
    # The request id is the trace id, and every span exported is of this one trace.
    assert len(trace_id) == 32 and int(trace_id, 16)
    assert {s.trace_id for s in receiver.spans} == {trace_id}
    server = server_span(spans)
    assert server.name == "POST /v1/chat/completions" and server.parent_id == ""
    assert server.resource["service.name"] == "sentinel-under-test"
    assert server.attributes["http.response.status_code"] == 200
    # The stages, in order, under the server span, taking no more time than it.
    stages = children(spans, server)
    assert [s.name for s in stages] == STAGES
    assert sum(s.seconds for s in stages) <= server.seconds
    assert all(a.end_ns <= b.start_ns for a, b in itertools.pairwise(stages))
    by_name = {s.name: s for s in stages}
    introspect = by_name["sentinel.introspect"]
    assert [s.name for s in children(spans, introspect)] == [
        "sentinel.canonicalise",
        "sentinel.judge",
    ]
    gate_action = answer["sentinel"]["gate"]["action"]
    assert by_name["sentinel.gate"].attributes["sentinel.gate.action"] == gate_action
    assert by_name["sentinel.retrieve"].attributes["sentinel.retrieve.hits"] > 0
    assert by_name["sentinel.cite"].attributes["sentinel.citations.valid"] is True
    # The model call: a client span with the GenAI conventions' attributes.
    (model_call,) = children(spans, by_name["sentinel.generate"])
    usage = answer["usage"]
    assert model_call.kind == "client" and model_call.name == "chat fake-model"
    assert model_call.attributes["gen_ai.operation.name"] == "chat"
    assert model_call.attributes["gen_ai.request.model"] == "fake-model"
    assert model_call.attributes["gen_ai.provider.name"] == "openai"
    assert model_call.attributes["gen_ai.usage.input_tokens"] == usage["prompt_tokens"]
    assert model_call.attributes["gen_ai.usage.output_tokens"] == usage["completion_tokens"]
    # The upstream got the model call span's traceparent.
    (sent,) = fake.requests
    version, sent_trace, parent, flags = sent["headers"]["traceparent"].split("-")
    assert (version, sent_trace, parent) == ("00", trace_id, model_call.span_id)
    assert int(flags, 16) & 1  # sampled
    # The policy that judged the answer, on the turn and on its scan; a span per scanner.
    policy_hash = answer["sentinel"]["guardrails"]["policyHash"]
    assert server.attributes["sentinel.policy.hash"] == policy_hash
    assert server.attributes["sentinel.decision"] == answer["sentinel"]["decision"]
    scan = by_name["sentinel.output_scan"]
    assert scan.attributes["sentinel.policy.hash"] == policy_hash
    scanners = children(spans, scan)
    assert len(scanners) == scan.attributes["sentinel.scanners"] > 0
    assert all(
        s.name == f"sentinel.scanner {s.attributes['sentinel.scanner.type']}" for s in scanners
    )
    # Neither the question nor the answer is in any attribute.
    for span in spans:
        for value in span.attributes.values():
            assert QUESTION not in str(value) and REPLY not in str(value), span.name


def test_a_streamed_turn_traces_the_model_stream_and_the_stream_guard(
    monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver, fake: FakeLLM
) -> None:
    with traced_app(monkeypatch, receiver, fake) as runtime:
        with runtime.client.stream(
            "POST",
            "/v1/chat/completions",
            json={
                "model": "m",
                "messages": [{"role": "user", "content": QUESTION}],
                "index_name": "demo",
                "stream": True,
            },
        ) as response:
            assert response.status_code == 200
            body = response.read().decode()
        (record,) = runtime.client.get("/v1/audit").json()["records"]
        spans = flushed(receiver, record["requestId"])

    assert "[DONE]" in body
    server = server_span(spans)
    names = [s.name for s in children(spans, server)]
    assert names[:4] == STAGES[:4]
    assert "sentinel.stream_guard" in names
    (model_call,) = [s for s in spans if s.kind == "client"]
    assert model_call.name == "chat fake-model"
    assert model_call.attributes["gen_ai.usage.output_tokens"] > 0
    assert model_call.end_ns <= server.end_ns
    (sent,) = fake.requests
    assert sent["headers"]["traceparent"].split("-")[2] == model_call.span_id


def test_the_guard_model_call_is_a_client_span_under_introspection(
    monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver, fake: FakeLLM
) -> None:
    guard = FakeGuard(family="llama-guard-3").start()
    settings = {"GUARD_URL": guard.base_url, "GUARD_MODE": "always", "GUARD_MODEL": "guard-m"}
    try:
        with traced_app(monkeypatch, receiver, fake, settings) as runtime:
            answer = ask(runtime, QUESTION, index_name="demo")
            spans = flushed(receiver, answer["sentinel"]["requestId"])
    finally:
        guard.stop()

    (introspect,) = [s for s in spans if s.name == "sentinel.introspect"]
    (guard_call,) = [s for s in spans if s.attributes.get("sentinel.guard") is True]
    assert guard_call.kind == "client" and guard_call.name == "chat guard-m"
    assert guard_call.parent_id == introspect.span_id
    assert guard_call.attributes["gen_ai.request.model"] == "guard-m"
    (sent,) = guard.requests
    assert sent["headers"]["traceparent"].split("-")[1:3] == [
        guard_call.trace_id,
        guard_call.span_id,
    ]


def test_a_refused_turns_audit_record_names_its_trace(
    monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver, fake: FakeLLM
) -> None:
    with traced_app(monkeypatch, receiver, fake) as runtime:
        answer = ask(runtime, HARMFUL)
        assert answer["sentinel"]["decision"] == "refuse"
        (record,) = runtime.client.get("/v1/audit", params={"decision": "refuse"}).json()["records"]
        spans = flushed(receiver, record["requestId"])

    server = server_span(spans)
    assert server.trace_id == record["requestId"] == answer["sentinel"]["requestId"]
    assert server.attributes["sentinel.decision"] == "refuse"
    assert server.attributes["sentinel.gate.action"] == "no_retrieve"
    assert not fake.requests  # refused before any model call
    for span in spans:
        assert all(HARMFUL not in str(v) for v in span.attributes.values())


def test_a_clients_traceparent_continues_its_trace(
    monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver, fake: FakeLLM
) -> None:
    incoming = f"00-{INCOMING_TRACE}-{INCOMING_SPAN}-01"
    with traced_app(monkeypatch, receiver, fake) as runtime:
        answer = ask(runtime, QUESTION, {"traceparent": incoming}, index_name="demo")
        spans = flushed(receiver, INCOMING_TRACE)

    assert answer["sentinel"]["requestId"] == INCOMING_TRACE
    server = server_span(spans)
    assert server.parent_id == INCOMING_SPAN
    assert fake.requests[0]["headers"]["traceparent"].startswith(f"00-{INCOMING_TRACE}-")


def test_a_trace_the_client_did_not_sample_is_passed_on_unsampled_and_not_exported(
    monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver, fake: FakeLLM
) -> None:
    incoming = f"00-{INCOMING_TRACE}-{INCOMING_SPAN}-00"
    with traced_app(monkeypatch, receiver, fake) as runtime:
        answer = ask(runtime, QUESTION, {"traceparent": incoming}, index_name="demo")
        assert tracing.force_flush()

    assert answer["sentinel"]["requestId"] == INCOMING_TRACE
    _, sent_trace, _, flags = fake.requests[0]["headers"]["traceparent"].split("-")
    assert sent_trace == INCOMING_TRACE and not int(flags, 16) & 1
    assert receiver.spans == []


def test_the_capture_setting_puts_the_prompt_and_answer_on_spans(
    monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver, fake: FakeLLM
) -> None:
    with traced_app(
        monkeypatch, receiver, fake, {"SENTINEL_TRACE_CAPTURE_CONTENT": True}
    ) as runtime:
        answer = ask(runtime, QUESTION, index_name="demo")
        spans = flushed(receiver, answer["sentinel"]["requestId"])

    by_name = {s.name: s for s in spans}
    assert by_name["sentinel.canonicalise"].attributes["sentinel.prompt"] == QUESTION
    assert by_name["sentinel.generate"].attributes["sentinel.answer"] == REPLY


def test_latency_histograms_carry_the_trace_id_as_an_openmetrics_exemplar(
    monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver, fake: FakeLLM
) -> None:
    with traced_app(monkeypatch, receiver, fake) as runtime:
        trace_id = ask(runtime, QUESTION, index_name="demo")["sentinel"]["requestId"]
        openmetrics = runtime.client.get(
            "/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}
        )
        text = runtime.client.get("/metrics")

    assert openmetrics.headers["content-type"].startswith("application/openmetrics-text")
    exemplar = f'# {{trace_id="{trace_id}"}}'
    chat_buckets = [
        line
        for line in openmetrics.text.splitlines()
        if line.startswith("rag_http_request_duration_seconds_bucket{")
        and 'route="/v1/chat/completions"' in line
    ]
    assert any(exemplar in line for line in chat_buckets)
    assert any(
        exemplar in line
        for line in openmetrics.text.splitlines()
        if line.startswith("rag_pipeline_stage_duration_seconds_bucket{")
        and 'stage="retrieve"' in line
    )
    # The classic text format (what a scrape without the Accept header gets) has none.
    assert text.headers["content-type"].startswith("text/plain")
    assert "trace_id" not in text.text


def test_without_otel_variables_nothing_is_traced_or_propagated(
    monkeypatch: pytest.MonkeyPatch, fake: FakeLLM
) -> None:
    for name in tracing.ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with app_runtime({"LLM_INFERENCE_URL": fake.base_url}) as runtime:
        assert not tracing.enabled()
        answer = ask(
            runtime,
            QUESTION,
            {"traceparent": f"00-{INCOMING_TRACE}-{INCOMING_SPAN}-01"},
            index_name="demo",
        )

    assert answer["sentinel"]["requestId"].startswith("req-")
    assert "traceparent" not in {k.lower() for k in fake.requests[0]["headers"]}


@pytest.mark.parametrize(
    ("environ", "wanted"),
    [
        pytest.param({}, False, id="nothing-set"),
        pytest.param({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, True, id="endpoint"),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, True, id="traces"
        ),
        pytest.param({"OTEL_TRACES_EXPORTER": "console"}, True, id="exporter"),
        pytest.param(
            {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "x"}, False, id="none"
        ),
        pytest.param(
            {"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "x"}, False, id="disabled"
        ),
    ],
)
def test_the_standard_variables_decide_whether_to_trace(
    environ: dict[str, str], wanted: bool
) -> None:
    assert tracing.wanted(environ) is wanted


def test_without_otel_variables_the_sdk_is_never_imported(tmp_path) -> None:
    """Off costs no import: only the API (which FastAPI already requires) is loaded."""
    import os
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from fastapi.testclient import TestClient\n"
        "from sentinel_runtime.api.app import create_app\n"
        "from sentinel_runtime.settings import Settings\n"
        "with TestClient(create_app(Settings(DEMO_CORPUS=True))) as client:\n"
        "    body = {'messages': [{'role': 'user', 'content': 'hi'}], 'index_name': 'demo'}\n"
        "    assert client.post('/v1/chat/completions', json=body).status_code == 200\n"
        "print(sorted({m for m in sys.modules if m.startswith('opentelemetry.sdk')}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
