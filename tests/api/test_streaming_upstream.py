"""``UpstreamGenerator.stream`` against a real loopback peer that writes server-sent events
byte for byte: the framing real servers use (CRLF, comments, ``event:`` fields, multi-line
data, UTF-8 split across network reads), the failures it must report, and the connection it
closes when told to stop."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from sentinel_runtime.llm.upstream import UpstreamError, UpstreamGenerator
from support.json_peer import JsonPeer


@dataclass
class RawSSE(JsonPeer):
    """Streams ``writes``: (pause in seconds, bytes), exactly as given."""

    writes: list[tuple[float, bytes]] = field(default_factory=list)

    def answer(self, method: str, path: str, payload: Any) -> tuple[int, Any]:
        return 200, {}

    def stream(self, path: str, payload: Any) -> Iterable[tuple[float, bytes]] | None:
        return list(self.writes)


@pytest.fixture
def peer() -> Iterator[RawSSE]:
    server = RawSSE().start()
    yield server
    server.stop()


def event(content: str | None = None, finish: str | None = None, **delta: Any) -> bytes:
    if content is not None:
        delta["content"] = content
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


def collect(peer: RawSSE) -> tuple[list[str], Any]:
    """The deltas of one streamed request, and the stream (for finish_reason and usage)."""

    async def run() -> tuple[list[str], Any]:
        generator = UpstreamGenerator(
            chat_url=f"{peer.base_url}/chat/completions", access_secret="", model="m", timeout=2
        )
        try:
            stream = generator.stream({"messages": [{"role": "user", "content": "hi"}]})
            await stream.start()
            return [delta async for delta in stream], stream
        finally:
            await generator.aclose()

    return asyncio.run(run())


def test_framing_of_real_servers_is_read(peer: RawSSE) -> None:
    split = "é€ done".encode()
    peer.writes = [
        (0.0, b": keep-alive comment\r\n\r\n"),
        (0.0, b"event: message\r\nid: 1\r\n" + event("Hello").replace(b"\n", b"\r\n")),
        (0.05, b'data: {"choices": [{"index": 0,\ndata:  "delta": {"content": " wor"}}]}\n\n'),
        (0.05, b'data:{"choices":[{"index":0,"delta":{"content":"ld '),
        (0.05, split[:1]),  # the first byte of a two-byte character, read alone
        (0.05, split[1:] + b'"}}]}\n\n'),
        (0.05, event(finish="stop")),
        (0.0, b'data: {"choices": [], "usage": {"total_tokens": 9}}\n\n' + DONE),
    ]
    deltas, stream = collect(peer)
    assert "".join(deltas) == "Hello world é€ done"
    assert stream.finish_reason == "stop" and stream.usage == {"total_tokens": 9}
    assert peer.requests[-1]["json"]["stream"] is True


def test_events_read_together_come_out_as_one_delta(peer: RawSSE) -> None:
    peer.writes = [
        (0.0, event("a") + event("b") + event("c")),
        (0.1, event("d")),
        (0.1, event("e") + event(finish="stop") + DONE),
    ]
    assert collect(peer)[0] == ["abc", "d", "e"]


def test_a_stream_may_end_after_finish_reason_without_done(peer: RawSSE) -> None:
    peer.writes = [(0.0, event("all") + event(finish="length"))]
    deltas, stream = collect(peer)
    assert deltas == ["all"] and stream.finish_reason == "length"


def test_other_choices_are_never_passed_on(peer: RawSSE) -> None:
    other = {"choices": [{"index": 1, "delta": {"content": "SECRET"}}]}
    peer.writes = [(0.0, event("mine") + b"data: " + json.dumps(other).encode() + b"\n\n")]
    peer.writes.append((0.0, event(finish="stop") + DONE))
    assert collect(peer)[0] == ["mine"]


@pytest.mark.parametrize(
    ("writes", "fragment"),
    [
        pytest.param([event("x")], "ended before [DONE]", id="just-ends"),
        pytest.param([event("x"), b"data: {not json\n\n"], "not JSON", id="not-json"),
        pytest.param([b"data: \xff\xfe\n\n"], "not UTF-8", id="not-utf8"),
        pytest.param([event(content=None, refusal=7)], "cannot be scanned", id="not-text"),
        pytest.param(
            [b'data: {"error": {"message": "overloaded"}}\n\n'], "overloaded", id="error-event"
        ),
    ],
)
def test_broken_streams_are_bad_responses(peer: RawSSE, writes: list[bytes], fragment) -> None:
    peer.writes = [(0.0, w) for w in writes]
    with pytest.raises(UpstreamError) as caught:
        collect(peer)
    assert caught.value.reason == "bad_response" and caught.value.status_code == 502
    assert fragment in caught.value.detail


def test_a_silent_upstream_times_out_between_reads(peer: RawSSE) -> None:
    peer.writes = [(0.0, event("x")), (3.0, event(finish="stop") + DONE)]  # timeout is 2 s
    with pytest.raises(UpstreamError) as caught:
        collect(peer)
    assert (caught.value.status_code, caught.value.reason) == (504, "timeout")


def test_closing_the_stream_closes_the_connection(peer: RawSSE) -> None:
    peer.writes = [(0.0, event("first"))] + [(0.05, event("more")) for _ in range(100)]

    async def run() -> float:
        generator = UpstreamGenerator(
            chat_url=f"{peer.base_url}/chat/completions", access_secret="", model="", timeout=5
        )
        stream = generator.stream({"messages": []})
        await stream.start()
        assert await anext(aiter(stream)) == "first"
        await stream.aclose()
        closed = time.monotonic()
        await generator.aclose()
        return closed

    closed = asyncio.run(run())
    deadline = time.monotonic() + 3
    while not peer.disconnects and time.monotonic() < deadline:
        time.sleep(0.02)
    assert peer.disconnects and peer.disconnects[0].at - closed < 1
    assert peer.disconnects[0].events_sent < 10
