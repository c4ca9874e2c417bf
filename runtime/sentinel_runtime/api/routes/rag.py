"""The RAG MVP's API (``docs/contracts.md``, "RAG MVP"): ``POST /answer``, ``POST /validate``,
``GET /debug/retrieval``; parsed here, answered by ``answer.retrieval``.

``/answer`` runs the same pipeline as chat with an ``index_name``; ``/debug/retrieval``
shows what retrieval returns and its quality signals without generating, and honours the
gate (a request the gate keeps from retrieval retrieves nothing here either).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from sentinel_runtime.answer import retrieval
from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.api.protocol import AnswerRequest, IndexName, ValidateRequest

router = APIRouter(tags=["rag"])


@router.post("/answer")
async def answer(request: AnswerRequest, services: ServicesDep) -> dict[str, Any]:
    return await retrieval.answer(
        services,
        query=request.query,
        index_name=request.index_name,
        top_k=request.top_k,
        freshness_days=request.freshness_days,
    )


@router.post("/validate")
async def validate(request: ValidateRequest, services: ServicesDep) -> dict[str, Any]:
    chunks = {c.chunk_id: c.text for c in request.retrieved_chunks}
    return retrieval.validate(services, request.answer, request.citations, chunks)


@router.get("/debug/retrieval")
async def debug_retrieval(
    services: ServicesDep,
    q: Annotated[str, Query(min_length=1, max_length=10_000)],
    top_k: Annotated[int, Query(ge=1, le=100)] = 5,
    freshness_days: Annotated[int, Query(ge=1, le=36_500)] = retrieval.DEFAULT_FRESHNESS_DAYS,
    index_name: IndexName | None = None,
) -> dict[str, Any]:
    return await retrieval.debug_retrieval(
        services, query=q, top_k=top_k, freshness_days=freshness_days, index_name=index_name
    )
