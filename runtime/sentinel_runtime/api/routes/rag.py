"""Seed 004's RAG MVP API: ``POST /answer``, ``POST /validate``, ``GET /debug/retrieval``.

``/answer`` runs the same pipeline as chat with an ``index_name``; ``/debug/retrieval``
shows what retrieval returns and its quality signals without generating, and honours the
gate (a request the gate keeps from retrieval retrieves nothing here either).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query

from sentinel_runtime.api import answering
from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.api.protocol import AnswerRequest, ValidateRequest
from sentinel_runtime.api.services import Services
from sentinel_runtime.guardrails.engine import FAILURE_DETAIL, OutputGuardrailsError
from sentinel_runtime.llm.upstream import UpstreamError
from sentinel_runtime.pipeline import citations, quality, report, runner

router = APIRouter(tags=["rag"])


def _index_name(services: Services, requested: str | None) -> str:
    if requested is not None:
        return requested
    names = services.indexes.names()
    if len(names) == 1:
        return names[0]
    raise HTTPException(
        422, f"index_name is required: {len(names)} indexes exist ({', '.join(names[:10])})"
    )


def _chunk(hit: Any) -> dict[str, Any]:
    ts = hit.chunk.timestamp
    return {
        "doc_id": hit.chunk.doc_id,
        "chunk_id": hit.chunk.chunk_id,
        "timestamp": ts.isoformat() if ts else None,
        "similarity": round(hit.similarity, 4),
        "score": round(hit.score, 6),
        "text": hit.chunk.text,
        "metadata": dict(hit.chunk.metadata),
    }


@router.post("/answer")
async def answer(request: AnswerRequest, services: ServicesDep) -> dict[str, Any]:
    name = _index_name(services, request.index_name)
    try:
        answered = await answering.answer_question(
            services,
            query=request.query,
            index_name=name,
            top_k=request.top_k,
            freshness_days=request.freshness_days,
            endpoint="answer",
        )
    except OutputGuardrailsError as exc:
        raise HTTPException(500, FAILURE_DETAIL) from exc
    except UpstreamError as exc:
        raise HTTPException(exc.status_code, exc.detail) from exc
    result = answered.result
    kept = result.bundle.kept if result.bundle else ()
    return {
        "query": request.query,
        "index_name": name,
        "decision": result.decision.upper(),
        "answer": answered.text,
        "citations": list(result.answer.citations),
        "retrieval": {"top_k": result.plan.top_k, "chunks": [_chunk(h) for h in kept]},
        "retrieval_quality": result.quality,
        "validation": {k: v for k, v in result.validation.describe().items() if k != "checked"},
        "sentinel": answered.response["sentinel"],
    }


@router.post("/validate")
async def validate(request: ValidateRequest, services: ServicesDep) -> dict[str, Any]:
    engine = answering.active_engine(services)
    config = answering.context_for(services, engine, None).config.citations
    chunks = {c.chunk_id: c.text for c in request.retrieved_chunks}
    result = citations.validate_citations(request.answer, request.citations, chunks, config)
    return {
        "citation_valid": result.valid,
        "errors": list(result.errors),
        "warnings": list(result.warnings),
    }


@router.get("/debug/retrieval")
async def debug_retrieval(
    services: ServicesDep,
    q: Annotated[str, Query(min_length=1, max_length=10_000)],
    top_k: Annotated[int, Query(ge=1, le=100)] = 5,
    freshness_days: Annotated[int, Query(ge=1, le=36_500)] = quality.DEFAULT_FRESHNESS_DAYS,
    index_name: str | None = None,
) -> dict[str, Any]:
    name = _index_name(services, index_name)
    engine = answering.active_engine(services)
    context = answering.context_for(services, engine, name)
    request = runner.PipelineRequest(q, name, top_k=top_k, freshness_days=freshness_days)
    result = await runner.retrieve(request, context)
    return {
        "query": q,
        "index_name": name,
        "top_k": top_k,
        "gate": report.gate(result),
        "introspection": report.introspection(result),
        "evidence": report.evidence(result),
        "chunks": [_chunk(h) for h in result.hits],
        "retrieval_quality": result.quality,
    }
