"""``POST /v1/chat/completions`` and ``GET /v1/models``: generate, then guard the answer."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from fastapi import APIRouter, HTTPException

from sentinel_runtime.api import answering
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
from sentinel_runtime.pipeline import decision, runner

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["chat"])
HIGH_LEVEL = (
    "Answer only at a high level, without operational detail: no steps, quantities, "
    "code or procedures."
)


def _check_context_window(services: Services, body: dict[str, Any]) -> None:
    window = services.settings.LLM_CONTEXT_WINDOW
    if not window:
        return
    encoding = offline_encoding("cl100k_base")
    tokens = sum(
        len(encoding.encode(message_text(m), disallowed_special=())) for m in body["messages"]
    )
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


async def _answer(request: ChatCompletionRequest, services: Services) -> dict[str, Any]:
    body = request.model_dump(exclude_none=True, exclude={"index_name"})
    _check_context_window(services, body)
    query = _last_user_text(body)
    if request.index_name is not None:
        answered = await answering.answer_question(
            services,
            query=query,
            index_name=request.index_name,
            model=request.model or "",
            endpoint="chat",
        )
        return answered.response
    # No index: the introspection and the gate still judge the request; a refused one never
    # reaches the generator, a restricted one is told to stay high-level.
    engine = answering.active_engine(services)
    pre, context, refused = await answering.preflight(services, engine, query)
    if refused:
        result = await runner.complete(pre, runner.PipelineRequest(query), context)
        response = embedded.completion(
            result.answer.text, model=request.model or services.generator.default_model
        )
    else:
        if decision.decide(pre.state, pre.plan, None) == "summary":
            body["messages"] = [{"role": "system", "content": HIGH_LEVEL}, *body["messages"]]
        response = await services.generator.complete(body)
        result = runner.passthrough(pre, _first_text(response), _generator_name(services))
    response["id"] = str(response.get("id") or f"chatcmpl-{uuid.uuid4().hex}")
    answered = await answering.guard(
        services, engine, result, response, index_name=None, endpoint="chat"
    )
    return answered.response


def _first_text(response: dict[str, Any]) -> str:
    choices = response.get("choices") or [{}]
    return message_text(choices[0].get("message") or {})


def _generator_name(services: Services) -> str:
    return "upstream" if services.settings.LLM_INFERENCE_URL else "embedded"


@router.post("/chat/completions")
async def chat_completions(request: ChatCompletionRequest, services: ServicesDep) -> dict[str, Any]:
    started = time.perf_counter()
    status = "failure"
    try:
        if request.stream:
            raise HTTPException(400, "stream=true is not supported yet; send stream=false")
        response = await _answer(request, services)
        status = "success"
        return response
    except OutputGuardrailsError as exc:
        raise HTTPException(500, FAILURE_DETAIL) from exc
    except UpstreamError as exc:
        raise HTTPException(exc.status_code, exc.detail) from exc
    finally:
        metrics.CHAT_REQUESTS.labels(status).inc()
        elapsed = time.perf_counter() - started
        metrics.CHAT_DURATION.observe(elapsed)
        log_event(
            logger, events.CHAT_COMPLETED, status=status, duration_ms=round(elapsed * 1000, 2)
        )


@router.get("/models")
async def list_models(services: ServicesDep) -> dict[str, Any]:
    try:
        return await services.generator.models()
    except UpstreamError as exc:
        raise HTTPException(exc.status_code, exc.detail) from exc
