"""One chat turn (``/v1/chat/completions``): generate, then guard the answer.

With ``index_name`` the whole pipeline answers (``turn.answer_question``); without it the
introspection and the gate still judge the request, a refused one never reaches the
generator, and the tool calls the model proposes are judged in the governance session
(``tool_calls``). ``stream`` turns return a :class:`stream.ChatStream`, which counts and
times the request itself when it ends; the others are counted here. Either way the response
is named by ``turn.response_model`` and its tokens are ``turn.usage``; ``n`` other than 1 is
refused (:func:`check_n`).
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from sentinel_runtime.answer import policy, tool_calls
from sentinel_runtime.answer import stream as streaming
from sentinel_runtime.answer import turn as answering
from sentinel_runtime.answer.errors import (
    ContextWindowExceededError,
    InvalidRequestError,
)
from sentinel_runtime.answer.services import Services
from sentinel_runtime.llm.messages import completion, message_text
from sentinel_runtime.observability import events, metrics, tracing
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.pipeline import runner
from sentinel_runtime.pipeline.conversation import Conversation, count_tokens

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChatTurn:
    """A chat request: OpenAI's body (what the generator gets) and Sentinel's extensions."""

    body: dict[str, Any]
    index_name: str | None = None
    session: str | None = None  # the governance session of proposed tool calls

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


async def run(
    services: Services, turn: ChatTurn, *, started: float
) -> dict[str, Any] | streaming.ChatStream:
    """The answer (a scanned ``chat.completion``), or a stream that yields it."""
    status = "failure"
    try:
        body = dict(turn.body)
        check_n(body)
        query = last_user_text(body)
        session = tool_calls.governance_session(services, turn.session)
        tool_calls.add_fact_summary(services, session, body)
        # The summary counts: it goes upstream too.
        await services.window.resolve()
        check_context_window(services, body, rag=turn.index_name is not None)
        if turn.stream:
            opened = await streaming.open_chat_stream(
                services, body, query, index_name=turn.index_name, started=started
            )
            status = "streaming"  # from here the stream accounts for itself, once, at its end
            return opened
        response = await _answer(services, turn, body, query, session)
        status = "success"
        return response
    finally:
        if status != "streaming":
            metrics.CHAT_REQUESTS.labels(status).inc()
            elapsed = time.perf_counter() - started
            metrics.CHAT_DURATION.observe(elapsed, exemplar=tracing.exemplar())
            metrics.CHAT_LATENCY.labels(status).observe(elapsed)
            log_event(
                logger, events.CHAT_COMPLETED, status=status, duration_ms=round(elapsed * 1000, 2)
            )


def check_n(body: dict[str, Any]) -> None:
    """Refuse ``n`` other than 1. A turn has one guarded answer: the pipeline decides,
    validates and audits one answer (a RAG turn's candidates are its best-of-N, not the
    client's choices), and the decision, audit record and stream describe one text."""
    n = body.get("n")
    if n is not None and n != 1:
        raise InvalidRequestError(
            f"n={n} is not supported: Sentinel returns one guarded answer per request "
            "(send n=1 or leave n out, and make several requests for several answers)",
            param="n",
        )


def last_user_text(body: dict[str, Any]) -> str:
    """The question: the last user message's text. A message other than the assistant's
    without content, no user message (only roles a turn cannot answer from, such as
    ``tool`` or ``function``), or a last user message without text is a 400, as on KAITO
    and OpenAI: the request is malformed, not merely unanswerable."""
    for number, message in enumerate(body["messages"]):
        role = message.get("role")
        if role != "assistant" and message.get("content") is None:
            # KAITO's wording, which its clients match on.
            raise InvalidRequestError(
                f"Invalid request format: messages must contain 'content' for role '{role}'.",
                param=f"messages.{number}.content",
            )
    turns = [m for m in body["messages"] if m.get("role") == "user"]
    if not turns:
        raise InvalidRequestError(
            "messages must contain at least one user message", param="messages"
        )
    text = message_text(turns[-1])
    if not text.strip():
        raise InvalidRequestError("the last user message has no text", param="messages")
    return text


def check_context_window(services: Services, body: dict[str, Any], *, rag: bool) -> None:
    """Refuse messages that cannot fit the upstream's window. A RAG turn's history is trimmed
    to fit instead (oldest first): there only its system messages and question must fit."""
    window = services.window.known
    if not window:
        return
    messages = body["messages"]
    if rag:
        last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
        messages = [
            m for i, m in enumerate(messages) if i == last_user or m.get("role") == "system"
        ]
    tokens = count_tokens([{"content": message_text(m)} for m in messages])
    if tokens > window:
        # OpenAI's wording: client libraries recognise a context overflow by it (and by the
        # code ``context_length_exceeded`` the HTTP layer adds).
        raise ContextWindowExceededError(
            f"This model's maximum context length is {window} tokens. However, your "
            f"messages resulted in {tokens} tokens. Please reduce the length of the messages.",
            param="messages",
        )


async def _answer(
    services: Services,
    turn: ChatTurn,
    body: dict[str, Any],
    query: str,
    session: str | None,
) -> dict[str, Any]:
    model = str(body.get("model") or "")
    if turn.index_name is not None:
        answered = await answering.answer_question(
            services,
            query=query,
            index_name=turn.index_name,
            model=model,
            endpoint="chat",
            conversation=Conversation.from_messages(body["messages"], body),
            messages=body["messages"],
        )
        return answered.response
    # No index: the introspection and the gate still judge the request; a refused one never
    # reaches the generator, a restricted one is told to stay high-level.
    version = policy.active(services)  # one version: its scanners and its tools rulebase
    engine = version.engine
    pre, context, refused = await answering.preflight(services, engine, query, body)
    proposed = None
    reported: str | None = None  # the model the upstream says it used
    if refused:
        result = await answering.refusal(pre, context, query)
        response = completion(result.answer.text, model="")
        response["usage"] = answering.usage(None, body["messages"], [result.answer.text])
    else:
        response = await services.generator.complete(body)
        if answering.generator_name(services) == "upstream":
            reported = str(response.get("model") or "") or None
        # Counted as generated: before the tool-call verdicts and the scanners change it.
        generated = [_generated(choice) for choice in response.get("choices") or []]
        response["usage"] = answering.usage(response.get("usage"), body["messages"], generated)
        proposed = await tool_calls.check_tool_calls(
            services, session, response, pre.request_id, version.rules
        )
        result = runner.passthrough(pre, _first_text(response), answering.generator_name(services))
    response["model"] = answering.response_model(services, model, reported)
    response["id"] = str(response.get("id") or f"chatcmpl-{uuid.uuid4().hex}")
    answered = await answering.scan_and_record(
        services, engine, result, response, index_name=None, endpoint="chat", tool_calls=proposed
    )
    return answered.response


def _first_text(response: dict[str, Any]) -> str:
    choices = response.get("choices") or [{}]
    return message_text(choices[0].get("message") or {})


def _generated(choice: Any) -> str:
    """What the generator wrote in one choice: its text and the tool calls it proposes."""
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return ""
    parts = [message_text(message)]
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            parts += [str(function.get("name") or ""), str(function.get("arguments") or "")]
    return "".join(parts)
