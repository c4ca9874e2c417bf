"""One legacy completion (``/v1/completions``): a chat turn in OpenAI's older shape.

The prompt becomes the one user message of a :class:`chat.ChatTurn`, so the same guarded
pipeline answers it (``chat.run``: introspection, gate, RAG with ``index_name``, output
scanners, audit, metrics). Its ``chat.completion`` is rendered as a ``text_completion``
(``choices[i].text``, ``logprobs: null``), and a stream's ``chat.completion.chunk`` events as
``text_completion`` chunks; the ``sentinel`` object (and a RAG answer's ``source_nodes``) is
kept as in chat. Errors chat names ``messages`` name ``prompt`` here.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

from sentinel_runtime.answer import chat
from sentinel_runtime.answer import stream as streaming
from sentinel_runtime.answer.errors import TurnError, UnprocessableRequestError
from sentinel_runtime.answer.services import Services

OBJECT = "text_completion"
# A chunk with only these fields and no text says nothing a completion chunk can carry.
_PLAIN_CHUNK = frozenset({"id", "object", "created", "model", "choices"})
# What a completion request passes to the chat turn (the rest are this layer's own).
CHAT_PARAMETERS = (
    "model",
    "stream",
    "stream_options",
    "max_tokens",
    "temperature",
    "top_p",
    "n",
    "presence_penalty",
    "frequency_penalty",
    "stop",
    "seed",
)


@dataclass(frozen=True)
class CompletionTurn:
    """A legacy completion request: its prompt, parameters and Sentinel's extensions."""

    prompt: str
    parameters: dict[str, Any]  # those of CHAT_PARAMETERS the client sent
    index_name: str | None = None
    session: str | None = None

    def chat_turn(self) -> chat.ChatTurn:
        body = {key: self.parameters[key] for key in CHAT_PARAMETERS if key in self.parameters}
        body["messages"] = [{"role": "user", "content": self.prompt}]
        return chat.ChatTurn(body=body, index_name=self.index_name, session=self.session)


async def run(
    services: Services, turn: CompletionTurn, *, started: float
) -> dict[str, Any] | CompletionStream:
    """The answer (a scanned ``text_completion``), or a stream that yields its chunks."""
    if not turn.prompt.strip():
        raise UnprocessableRequestError("the prompt has no text", param="prompt")
    try:
        answered = await chat.run(services, turn.chat_turn(), started=started)
    except TurnError as exc:
        if exc.param == "messages":
            exc.param = "prompt"
        raise
    if isinstance(answered, streaming.ChatStream):
        return CompletionStream(answered)
    return render(answered)


def completion_id(chat_id: str) -> str:
    return "cmpl-" + chat_id.removeprefix("chatcmpl-")


def render(response: dict[str, Any]) -> dict[str, Any]:
    """A ``chat.completion`` as a ``text_completion``; its other fields are kept."""
    rendered = dict(response)
    rendered["id"] = completion_id(str(response.get("id") or ""))
    rendered["object"] = OBJECT
    rendered["choices"] = [
        {
            "text": _text((choice.get("message") or {}).get("content")),
            "index": choice.get("index", index),
            "logprobs": None,
            "finish_reason": choice.get("finish_reason"),
        }
        for index, choice in enumerate(response.get("choices") or [])
    ]
    return rendered


def render_chunk(chunk: dict[str, Any]) -> dict[str, Any] | None:
    """A ``chat.completion.chunk`` as a ``text_completion`` chunk; None for one that carries
    nothing a completion has (the opening ``role`` delta). Error events pass unchanged."""
    if "error" in chunk or chunk.get("object") != "chat.completion.chunk":
        return chunk
    choices = []
    for choice in chunk.get("choices") or []:
        text = _text((choice.get("delta") or {}).get("content"))
        if not text and choice.get("finish_reason") is None and set(chunk) <= _PLAIN_CHUNK:
            return None
        choices.append(
            {
                "text": text,
                "index": choice.get("index", 0),
                "logprobs": None,
                "finish_reason": choice.get("finish_reason"),
            }
        )
    return {
        **chunk,
        "id": completion_id(str(chunk.get("id") or "")),
        "object": OBJECT,
        "choices": choices,
    }


def _text(content: Any) -> str:
    return content if isinstance(content, str) else ""


class CompletionStream:
    """A :class:`streaming.ChatStream` whose events are ``text_completion`` chunks."""

    def __init__(self, stream: streaming.ChatStream) -> None:
        self.chat = stream
        self._events = self._rendered()

    def events(self) -> AsyncIterator[streaming.Event]:
        return self._events

    async def _rendered(self) -> AsyncGenerator[streaming.Event, None]:
        async for event in self.chat.events():
            if isinstance(event, dict):
                rendered = render_chunk(event)
                if rendered is not None:
                    yield rendered
            else:
                yield event

    async def close(self) -> None:
        """The response is over: close this generator, then the chat stream (which
        accounts for the turn)."""
        try:
            await self._events.aclose()
        finally:
            await self.chat.close()
