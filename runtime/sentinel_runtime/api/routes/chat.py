"""``POST /v1/chat/completions`` and ``GET /v1/models``: generate, then guard the answer.

``stream: true`` is served by :mod:`sentinel_runtime.api.streaming`, which counts and times
the request itself when the stream ends. ``sentinel_session`` names a governance session: its
fact summary goes upstream, and the tool calls the model proposes are judged in it.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from fastapi import APIRouter, HTTPException
from starlette.responses import StreamingResponse

from sentinel_runtime.api import answering, streaming
from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.api.protocol import ChatCompletionRequest
from sentinel_runtime.api.services import Services
from sentinel_runtime.guardrails.engine import FAILURE_DETAIL, OutputGuardrailsError
from sentinel_runtime.guardrails.scanners.token_limit import offline_encoding
from sentinel_runtime.llm import embedded
from sentinel_runtime.llm.embedded import message_text
from sentinel_runtime.llm.upstream import UpstreamError
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.pipeline import runner
from sentinel_runtime.pipeline.conversation import Conversation

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["chat"])


def _check_context_window(services: Services, body: dict[str, Any], *, rag: bool) -> None:
    """400 when the messages cannot fit the upstream's window. A RAG turn's history is trimmed
    to fit instead (oldest first): there only its system messages and question must fit."""
    window = services.settings.LLM_CONTEXT_WINDOW
    if not window:
        return
    messages = body["messages"]
    if rag:
        last_user = max(i for i, m in enumerate(messages) if m.get("role") == "user")
        messages = [
            m for i, m in enumerate(messages) if i == last_user or m.get("role") == "system"
        ]
    encoding = offline_encoding("cl100k_base")
    tokens = sum(len(encoding.encode(message_text(m), disallowed_special=())) for m in messages)
    if tokens > window:
        raise HTTPException(
            400, f"messages are about {tokens} tokens; the context window is {window}"
        )


def _last_user_text(body: dict[str, Any]) -> str:
    turns = [m for m in body["messages"] if m.get("role") == "user"]
    if not turns:
        raise HTTPException(422, "messages must contain at least one user message")
    text = message_text(turns[-1])
    if not text.strip():
        raise HTTPException(422, "the last user message has no text")
    return text


async def _answer(
    request: ChatCompletionRequest,
    services: Services,
    body: dict[str, Any],
    query: str,
    session: str | None,
) -> dict[str, Any]:
    if request.index_name is not None:
        answered = await answering.answer_question(
            services,
            query=query,
            index_name=request.index_name,
            model=request.model or "",
            endpoint="chat",
            conversation=Conversation.from_messages(body["messages"], body),
        )
        return answered.response
    # No index: the introspection and the gate still judge the request; a refused one never
    # reaches the generator, a restricted one is told to stay high-level.
    engine = answering.active_engine(services)
    pre, context, refused = await answering.preflight(services, engine, query, body)
    tool_calls = None
    if refused:
        result = await answering.refusal(pre, context, query)
        response = embedded.completion(
            result.answer.text, model=request.model or services.generator.default_model
        )
    else:
        response = await services.generator.complete(body)
        tool_calls = await answering.check_tool_calls(services, session, response, pre.request_id)
        result = runner.passthrough(pre, _first_text(response), answering.generator_name(services))
    response["id"] = str(response.get("id") or f"chatcmpl-{uuid.uuid4().hex}")
    answered = await answering.guard(
        services, engine, result, response, index_name=None, endpoint="chat", tool_calls=tool_calls
    )
    return answered.response


def _first_text(response: dict[str, Any]) -> str:
    choices = response.get("choices") or [{}]
    return message_text(choices[0].get("message") or {})


@router.post("/chat/completions", response_model=None)
async def chat_completions(
    request: ChatCompletionRequest, services: ServicesDep
) -> dict[str, Any] | StreamingResponse:
    started = time.perf_counter()
    status = "failure"
    try:
        body = request.model_dump(exclude_none=True, exclude={"index_name", "sentinel_session"})
        query = _last_user_text(body)
        session = answering.governance_session(services, request.sentinel_session)
        answering.add_fact_summary(services, session, body)
        # The summary counts: it goes upstream too.
        _check_context_window(services, body, rag=request.index_name is not None)
        if request.stream:
            stream = await streaming.open_chat_stream(
                services, request, body, query, started=started
            )
            status = "streaming"  # from here the stream accounts for itself, once, at its end
            return stream
        response = await _answer(request, services, body, query, session)
        status = "success"
        return response
    except OutputGuardrailsError as exc:
        raise HTTPException(500, FAILURE_DETAIL) from exc
    except UpstreamError as exc:
        raise HTTPException(exc.status_code, exc.detail) from exc
    finally:
        if status != "streaming":
            metrics.CHAT_REQUESTS.labels(status).inc()
            elapsed = time.perf_counter() - started
            metrics.CHAT_DURATION.observe(elapsed)
            metrics.CHAT_LATENCY.labels(status).observe(elapsed)
            log_event(
                logger, events.CHAT_COMPLETED, status=status, duration_ms=round(elapsed * 1000, 2)
            )


@router.get("/models")
async def list_models(services: ServicesDep) -> dict[str, Any]:
    try:
        return await services.generator.models()
    except UpstreamError as exc:
        raise HTTPException(exc.status_code, exc.detail) from exc
