"""``POST /v1/chat/completions`` and ``GET /v1/models``: parse, hand the turn to
``answer.chat``, render its answer as JSON or its stream as server-sent events. Errors are
rendered by the handlers ``api.app`` registers."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter
from starlette.responses import StreamingResponse

from sentinel_runtime.answer import chat
from sentinel_runtime.answer.stream import ChatStream
from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.api.json_body import OrjsonResponse
from sentinel_runtime.api.protocol import ChatCompletionRequest
from sentinel_runtime.api.streaming import EventStreamResponse

router = APIRouter(prefix="/v1", tags=["chat"])


@router.post("/chat/completions", response_model=None)
async def chat_completions(
    request: ChatCompletionRequest, services: ServicesDep
) -> OrjsonResponse | StreamingResponse:
    started = time.perf_counter()
    turn = chat.ChatTurn(
        body=request.model_dump(exclude_none=True, exclude={"index_name", "sentinel_session"}),
        index_name=request.index_name,
        session=request.sentinel_session,
    )
    answered = await chat.run(services, turn, started=started)
    if isinstance(answered, ChatStream):
        return EventStreamResponse(answered)
    return OrjsonResponse(answered)


@router.get("/models")
async def list_models(services: ServicesDep) -> dict[str, Any]:
    return await services.generator.models()
