"""The built-in generator used when no ``LLM_INFERENCE_URL`` is configured.

It is not a language model: it answers with the text of the last user message, so that
the runtime works with no model at all and the output guardrails can be seen at work (a
secret typed in comes back redacted). Questions asked with an ``index_name`` are answered
by the pipeline's extractive generator instead (``pipeline.generation``).

Streaming: :class:`DeltaStream` is what every generator's ``stream`` returns (the content
deltas of one answer); :class:`TextStream` streams a text that already exists in word-sized
pieces (this generator's echo, and the pipeline's whole answers).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, Protocol

MODEL_NAME = "sentinel-embedded"


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def completion(text: str, *, model: str) -> dict[str, Any]:
    """An OpenAI ``chat.completion`` with one assistant message (tokens are not counted)."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


_WORD = re.compile(r"\s*\S+|\s+")


def word_pieces(text: str) -> list[str]:
    """``text`` as word-sized pieces (each word with the whitespace before it); joined, they
    are ``text`` exactly."""
    return _WORD.findall(text)


class DeltaStream(Protocol):
    """The content deltas of one answer, in order (``async for delta in stream``).

    :meth:`start` does what can fail before anything was sent (connecting, the upstream's
    status), so such failures keep their HTTP status; iteration then yields text. After the
    end, ``finish_reason`` and ``usage`` hold what the generator said, if anything.
    :meth:`aclose` stops the generation early (a client gone, a block) and is idempotent.
    """

    finish_reason: str | None
    usage: dict[str, Any] | None

    async def start(self) -> None: ...
    def __aiter__(self) -> AsyncIterator[str]: ...
    async def aclose(self) -> None: ...


class TextStream:
    """A finished text as a :class:`DeltaStream` of word-sized pieces."""

    usage: dict[str, Any] | None = None

    def __init__(self, text: str, *, finish_reason: str = "stop") -> None:
        self._pieces = word_pieces(text)
        self.finish_reason: str | None = finish_reason

    async def start(self) -> None:
        return None

    async def __aiter__(self) -> AsyncIterator[str]:
        for piece in self._pieces:
            yield piece

    async def aclose(self) -> None:
        self._pieces = []


class EmbeddedGenerator:
    default_model = MODEL_NAME

    async def aclose(self) -> None:
        return None

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        user_turns = [m for m in body.get("messages", []) if m.get("role") == "user"]
        return completion(message_text(user_turns[-1]) if user_turns else "", model=MODEL_NAME)

    def stream(self, body: dict[str, Any]) -> DeltaStream:
        user_turns = [m for m in body.get("messages", []) if m.get("role") == "user"]
        return TextStream(message_text(user_turns[-1]) if user_turns else "")

    async def models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "sentinel"}],
        }
