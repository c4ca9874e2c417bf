"""A fake LLM upstream that speaks the OpenAI chat protocol over real HTTP.

The LLM is a peer, not our code: this stands in for vLLM. Tests set what it answers
(content, a whole message, an HTTP status, a delay or a raw body) and read what it got.
A request with ``stream: true`` is answered with server-sent ``chat.completion.chunk``
events: the role, the answer in pieces (``pieces``, or the content cut every
``piece_chars`` characters), each after ``piece_delay`` seconds, the ``finish_reason``, the
usage when ``stream_options.include_usage`` asks for it, and ``[DONE]``. With ``fail_after``
the stream fails after that many pieces: an ``error`` event (``failure="event"``, as vLLM
does) or a connection that just ends (``failure="drop"``). ``disconnects`` (from
``JsonPeer``) notes a client that closed the connection before the end; ``last_piece_sent``
notes when each stream's last content piece had been written (``time.monotonic()``), so a
test can tell what its client received before the upstream finished.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from support.json_peer import JsonPeer


def sse(payload: Any) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One OpenAI tool call as a model proposes it (the arguments as a JSON string)."""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def tool_calls_message(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    """An assistant message proposing ``calls`` (for :attr:`FakeLLM.message`)."""
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


@dataclass
class FakeLLM(JsonPeer):
    content: str | list[dict[str, Any]] | None = "Hello from the fake LLM."
    message: dict[str, Any] | None = None  # overrides content when set; with tool_calls,
    # the choice ends with finish_reason "tool_calls" (see tool_call() for one such call)
    # Computes each answer from the request (as a model would); gets the choice's index.
    responder: Callable[[dict[str, Any], int], str] | None = None
    # Streaming (requests with "stream": true).
    pieces: list[str] | None = None  # the streamed deltas; default: the content cut up
    piece_chars: int = 4
    piece_delay: float = 0.0  # seconds before each piece
    fail_after: int | None = None  # pieces sent before the stream fails
    max_model_len: int | None = None  # reported by GET /v1/models, as vLLM does
    failure: Literal["event", "drop"] = "event"
    # Servers differ: llama.cpp answers OpenAI's json_schema response_format with a 500 and
    # returns one choice whatever n asks for.
    refused_formats: tuple[str, ...] = ()  # response_format types answered with HTTP 500
    ignores_n: bool = False
    # time.monotonic() once each stream's last content piece was written, in stream order.
    last_piece_sent: list[float] = field(default_factory=list)

    failure_body = b'{"error": {"message": "upstream exploded"}}'

    def completion(self, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        payload = payload or {}
        count = 1 if self.ignores_n else int(payload.get("n") or 1)
        choices = []
        for index in range(count):
            message = self.message or {"role": "assistant", "content": self.content}
            if self.responder is not None:
                message = {"role": "assistant", "content": self.responder(payload, index)}
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            choices.append({"index": index, "message": message, "finish_reason": finish})
        return {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "fake-model",
            "choices": choices,
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def answer(self, method: str, path: str, payload: Any) -> tuple[int, Any]:
        if method == "GET":
            if path.endswith("/models"):
                model: dict[str, Any] = {"id": "fake-model", "object": "model"}
                if self.max_model_len is not None:
                    model["max_model_len"] = self.max_model_len
                return 200, {"object": "list", "data": [model]}
            return 404, None
        response_format = payload.get("response_format") if isinstance(payload, dict) else None
        if (
            isinstance(response_format, dict)
            and response_format.get("type") in self.refused_formats
        ):
            return 500, {"error": {"message": "response_format not supported"}}
        return 200, self.completion(payload)

    def text(self, payload: dict[str, Any]) -> str:
        """The whole answer the stream carries (what a non-streaming request gets)."""
        content = self.completion(payload)["choices"][0]["message"].get("content")
        if isinstance(content, list):
            return "".join(str(part.get("text", "")) for part in content)
        return content or ""

    def stream_pieces(self, payload: dict[str, Any]) -> list[str]:
        if self.pieces is not None:
            return list(self.pieces)
        text = self.text(payload)
        return [text[i : i + self.piece_chars] for i in range(0, len(text), self.piece_chars)]

    def stream(self, path: str, payload: Any) -> Iterable[tuple[float, bytes]] | None:
        if not isinstance(payload, dict) or not payload.get("stream"):
            return None
        return self._events(payload)

    def _events(self, payload: dict[str, Any]) -> Iterator[tuple[float, bytes]]:
        base = {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": "fake-model",
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return sse({**base, "choices": [choice]})

        yield 0.0, chunk({"role": "assistant", "content": ""})
        for sent, piece in enumerate(self.stream_pieces(payload)):
            if self.fail_after is not None and sent >= self.fail_after:
                if self.failure == "event":
                    error = {"message": "upstream exploded mid-stream", "type": "server_error"}
                    yield 0.0, sse({"error": error})
                return
            yield self.piece_delay, chunk({"content": piece})
        # Resumed only once the server wrote (and flushed) the piece before.
        self.last_piece_sent.append(time.monotonic())
        yield 0.0, chunk({}, "stop")
        options = payload.get("stream_options") or {}
        if options.get("include_usage"):
            usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
            yield 0.0, sse({**base, "choices": [], "usage": usage})
        yield 0.0, b"data: [DONE]\n\n"


def cite_chunk_with(needle: str, answer: str) -> Callable[[dict[str, Any], int], str]:
    """A model that answers in JSON citing the chunk holding ``needle``."""

    def respond(payload: dict[str, Any], index: int) -> str:
        system = payload["messages"][0]["content"]
        parts = re.split(r"^\[([^\]\n]+#p\d+)\]\n", system, flags=re.MULTILINE)
        ids = [i for i, text in zip(parts[1::2], parts[2::2], strict=True) if needle in text]
        return json.dumps({"answer": answer, "citations": ids[:1]})

    return respond


def inline_marker(payload: dict[str, Any], needle: str) -> str:
    """The marker (``[n]``) of the context chunk holding ``needle`` in a request that asks
    for inline citations (its context numbers the chunks ``[1]``, ``[2]``, ...)."""
    system = payload["messages"][0]["content"]
    parts = re.split(r"^\[(\d+)\]\n", system, flags=re.MULTILINE)
    for number, text in zip(parts[1::2], parts[2::2], strict=True):
        if needle in text:
            return f"[{number}]"
    raise AssertionError(f"no context chunk holds {needle!r}")
