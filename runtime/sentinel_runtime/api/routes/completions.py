"""``POST /v1/completions`` (OpenAI's legacy completions): parse, hand the prompt to
``answer.completions`` (a chat turn underneath), render its answer as JSON or its stream as
server-sent events. Errors are rendered by the handlers ``api.app`` registers."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter
from starlette.responses import StreamingResponse

from sentinel_runtime.answer import completions
from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.api.protocol import CompletionRequest
from sentinel_runtime.api.streaming import EventStreamResponse

router = APIRouter(prefix="/v1", tags=["completions"])


@router.post("/completions", response_model=None)
async def create_completion(
    request: CompletionRequest, services: ServicesDep
) -> dict[str, Any] | StreamingResponse:
    started = time.perf_counter()
    sent = request.model_dump(exclude_none=True, include=set(completions.CHAT_PARAMETERS))
    turn = completions.CompletionTurn(
        prompt=request.text(),
        parameters=sent,
        index_name=request.index_name,
        session=request.sentinel_session,
    )
    answered = await completions.run(services, turn, started=started)
    if isinstance(answered, completions.CompletionStream):
        return EventStreamResponse(answered)
    return answered
