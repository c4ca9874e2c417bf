"""A streamed chat completion on the wire: the events of ``answer.stream.ChatStream`` as
``text/event-stream``, one ``data:`` line of JSON each, ``data: [DONE]`` last."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Protocol

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from sentinel_runtime.answer.stream import DONE, Event

HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class EventSource(Protocol):
    """What a response streams: a ``ChatStream`` or a stream rendered from one."""

    def events(self) -> AsyncIterator[Event]: ...

    async def close(self) -> None: ...


def sse(payload: dict[str, Any]) -> bytes:
    """One server-sent event carrying ``payload`` as JSON."""
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


async def _frames(stream: EventSource) -> AsyncIterator[bytes]:
    async for event in stream.events():
        yield b"data: [DONE]\n\n" if event == DONE else sse(event)  # type: ignore[arg-type]


class EventStreamResponse(StreamingResponse):
    """``text/event-stream`` of an :class:`EventSource` (a ``ChatStream``), closed and
    accounted for however the response ends (sent, failed, or the client gone before or
    while it streamed)."""

    def __init__(self, stream: EventSource) -> None:
        super().__init__(_frames(stream), media_type="text/event-stream", headers=HEADERS)
        self.stream = stream

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                await self.stream.close()
