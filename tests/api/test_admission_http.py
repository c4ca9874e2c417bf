"""Admission control over HTTP: turns beyond capacity are shed at once with OpenAI's error
body and ``Retry-After``; a stream holds its slot while it streams; slots come back after
errors and departed clients; probes are never shed; the metrics and /ready follow.

The app runs in this process behind uvicorn (``served_app``: real connections, so a client
can leave mid-stream) in front of the fake upstream, slowed down."""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Iterator

import httpx
import openai
import pytest

from sentinel_runtime.api.admission_gate import ADMITTED_ROUTES
from sentinel_runtime.api.app import create_app
from support.fake_llm import FakeLLM
from support.inprocess import AppRuntime, served_app

CHAT = "/v1/chat/completions"
BODY = {"model": "m", "messages": [{"role": "user", "content": "What is the capital of France?"}]}
STREAMED = {**BODY, "stream": True}


def admission(slots: int, queue_seconds: float, fake: FakeLLM) -> dict[str, object]:
    return {
        "LLM_INFERENCE_URL": fake.base_url,
        "MAX_INFLIGHT_TURNS": slots,
        "LLM_MAX_CONNECTIONS": slots,  # as few as allowed: none to spare
        "MAX_QUEUE_SECONDS": queue_seconds,
        "DEMO_CORPUS": False,
    }


@pytest.fixture
def slow_llm() -> Iterator[FakeLLM]:
    fake = FakeLLM(delay=1.5).start()
    yield fake
    fake.stop()


@pytest.fixture
def streaming_llm() -> Iterator[FakeLLM]:
    # A stream of about 2 s: 20 pieces, 0.1 s apart.
    fake = FakeLLM(pieces=[f"word{i} " for i in range(20)], piece_delay=0.1).start()
    yield fake
    fake.stop()


def post(base_url: str, path: str = CHAT) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = httpx.post(f"{base_url}{path}", json=BODY, timeout=30)
    return response, time.monotonic() - started


def in_flight(runtime: AppRuntime) -> int:
    return int(runtime.client.get("/ready").json()["admission"]["inFlight"])


def wait_for_in_flight(runtime: AppRuntime, expected: int, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while in_flight(runtime) != expected:
        assert time.monotonic() < deadline, f"in flight stayed {in_flight(runtime)}"
        time.sleep(0.02)


def test_beyond_capacity_turns_are_shed_at_once_with_retry_after(slow_llm: FakeLLM) -> None:
    # Two slots, two queue places, a second of wait; six turns at once, each 2.5 s.
    slow_llm.delay = 2.5
    with served_app(admission(2, 1.0, slow_llm)) as runtime:
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            answers = list(pool.map(lambda _: post(runtime.base_url), range(6)))
        by_status: dict[int, list[tuple[httpx.Response, float]]] = {}
        for response, took in answers:
            by_status.setdefault(response.status_code, []).append((response, took))
        assert sorted((s, len(a)) for s, a in by_status.items()) == [(200, 2), (429, 2), (503, 2)]
        for response, took in by_status[429]:
            assert took < 0.9  # at once, not after the wait
            assert response.headers["Retry-After"] == "1"
            error = response.json()["error"]
            assert (error["type"], error["code"]) == ("rate_limit_exceeded", "queue_full")
        for response, took in by_status[503]:
            assert 0.95 <= took < 2.3  # after MAX_QUEUE_SECONDS, before a slot frees
            assert response.headers["Retry-After"] == "1"
            error = response.json()["error"]
            assert (error["type"], error["code"]) == ("server_error", "queue_timeout")
            assert "within 1 s" in response.json()["detail"]
        assert runtime.counted("rag_turns_shed_total", route=CHAT, reason="queue_full") == 2
        assert runtime.counted("rag_turns_shed_total", route=CHAT, reason="queue_timeout") == 2
        assert runtime.counted("rag_turn_queue_wait_seconds_count") == 2  # the admitted
        for status in ("429", "503"):  # counted under their route, not "other"
            labels = {"route": CHAT, "method": "POST", "status": status}
            assert runtime.counted("rag_http_requests_total", **labels) == 2
        assert runtime.metric("rag_turns_in_flight") == 0
        assert runtime.metric("rag_turns_queued") == 0
        assert runtime.metric("rag_turns_max_in_flight") == 2


def test_the_openai_client_sees_a_rate_limit_error(slow_llm: FakeLLM) -> None:
    with (
        served_app(admission(1, 0, slow_llm)) as runtime,
        concurrent.futures.ThreadPoolExecutor(1) as pool,
    ):
        first = pool.submit(post, runtime.base_url)
        wait_for_in_flight(runtime, 1)
        client = openai.OpenAI(base_url=f"{runtime.base_url}/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.RateLimitError) as refused:
            client.chat.completions.create(model="m", messages=BODY["messages"])
        assert refused.value.response.headers["Retry-After"] == "1"
        assert first.result()[0].status_code == 200


def test_a_stream_holds_its_slot_until_it_ends(streaming_llm: FakeLLM) -> None:
    with served_app(admission(1, 0, streaming_llm)) as runtime:
        with httpx.stream("POST", f"{runtime.base_url}{CHAT}", json=STREAMED, timeout=30) as s:
            assert s.status_code == 200
            lines = s.iter_lines()
            next(line for line in lines if line.startswith("data:"))  # streaming now
            ready = runtime.client.get("/ready")
            assert ready.status_code == 200  # saturated is not unready
            assert ready.json()["admission"]["saturated"] is True
            assert runtime.metric("rag_turns_in_flight") == 1
            assert post(runtime.base_url)[0].status_code == 429
            # Probes, metrics and the index API are never admitted, so never shed.
            for path in ("/health", "/metrics", "/indexes"):
                assert runtime.client.get(path).status_code == 200, path
            assert [line for line in lines if line][-1] == "data: [DONE]"
        wait_for_in_flight(runtime, 0)
        assert post(runtime.base_url)[0].status_code == 200


def test_a_client_that_leaves_mid_stream_gives_its_slot_back(streaming_llm: FakeLLM) -> None:
    with served_app(admission(1, 0, streaming_llm)) as runtime:
        with httpx.stream("POST", f"{runtime.base_url}{CHAT}", json=STREAMED, timeout=30) as s:
            lines = s.iter_lines()  # kept: dropping the iterator closes the response
            next(line for line in lines if line.startswith("data:"))
            assert in_flight(runtime) == 1
        # Closed after the first event, with about 2 s of stream still to come.
        left = time.monotonic()
        wait_for_in_flight(runtime, 0)
        assert time.monotonic() - left < 1.5
        assert post(runtime.base_url)[0].status_code == 200


def test_a_failed_turn_gives_its_slot_back() -> None:
    fake = FakeLLM(status=500).start()
    try:
        with served_app(admission(1, 0, fake)) as runtime:
            for _ in range(3):  # each failure frees the one slot for the next turn
                assert post(runtime.base_url)[0].status_code == 502
            assert in_flight(runtime) == 0
    finally:
        fake.stop()


def test_every_admitted_route_is_a_route_of_the_app() -> None:
    paths = create_app().openapi()["paths"]
    routes = {(method.upper(), path) for path, methods in paths.items() for method in methods}
    assert routes >= ADMITTED_ROUTES
