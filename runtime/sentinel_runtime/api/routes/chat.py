"""``POST /v1/chat/completions`` and ``GET /v1/models``: generate, then guard the answer."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from fastapi import APIRouter, HTTPException
from starlette.concurrency import run_in_threadpool

from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.api.protocol import ChatCompletionRequest
from sentinel_runtime.api.services import Services
from sentinel_runtime.guardrails.chat import guard_chat_completion
from sentinel_runtime.guardrails.engine import FAILURE_DETAIL, OutputGuardrailsError
from sentinel_runtime.guardrails.scanners.token_limit import offline_encoding
from sentinel_runtime.llm.embedded import message_text
from sentinel_runtime.llm.upstream import UpstreamError
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["chat"])


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


@router.post("/chat/completions")
async def chat_completions(request: ChatCompletionRequest, services: ServicesDep) -> dict[str, Any]:
    started = time.perf_counter()
    status = "failure"
    try:
        if request.stream:
            raise HTTPException(400, "stream=true is not supported yet; send stream=false")
        if request.index_name is not None:
            raise HTTPException(404, f"index {request.index_name!r} does not exist")
        state = services.guardrails
        engine = state.engine  # one policy version for the whole request
        if state.enabled and engine is None:
            problem = state.error.message if state.error else "no policy loaded"
            raise HTTPException(
                503,
                f"Output guardrails are enabled but no policy is active ({problem}); "
                "refusing to return unscanned output.",
            )
        body = request.model_dump(exclude_none=True, exclude={"index_name"})
        _check_context_window(services, body)
        response = await services.generator.complete(body)
        response_id = str(response.get("id") or f"chatcmpl-{uuid.uuid4().hex}")
        response["id"] = response_id
        if engine is not None:
            verdicts = await run_in_threadpool(guard_chat_completion, engine, response, response_id)
            response["sentinel"] = {
                "guardrails": {
                    "enabled": True,
                    "policyHash": engine.policy.sha256,
                    "choices": [v.describe() for v in verdicts],
                }
            }
        else:
            response["sentinel"] = {"guardrails": {"enabled": False}}
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
