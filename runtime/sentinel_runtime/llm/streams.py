"""What every generator's ``stream`` returns (:class:`DeltaStream`: the content deltas of one
answer), and :class:`TextStream`, a text that already exists streamed in word-sized pieces (the
echo generator's answer, and the pipeline's whole answers)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any, Protocol

_WORD = re.compile(r"\s*\S+|\s+")


def word_pieces(text: str) -> list[str]:
    """``text`` as word-sized pieces (each word with the whitespace before it); joined, they
    are ``text`` exactly."""
    return _WORD.findall(text)


class DeltaStream(Protocol):
    """The content deltas of one answer, in order (``async for delta in stream``).

    :meth:`start` does what can fail before anything was sent (connecting, the upstream's
    status, its first event), so such failures keep their HTTP status; iteration then yields
    text. After :meth:`start`, ``model`` holds the model the generator says it runs, if it
    says; after the end, ``finish_reason`` and ``usage`` hold what the generator said, if
    anything (None: it said nothing, and the caller counts). :meth:`aclose` stops the
    generation early (a client gone, a block) and is idempotent.
    """

    finish_reason: str | None
    usage: dict[str, Any] | None
    model: str | None

    async def start(self) -> None: ...
    def __aiter__(self) -> AsyncIterator[str]: ...
    async def aclose(self) -> None: ...


class TextStream:
    """A finished text as a :class:`DeltaStream` of word-sized pieces."""

    usage: dict[str, Any] | None = None
    model: str | None = None  # no model ran: the caller names the answer

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
