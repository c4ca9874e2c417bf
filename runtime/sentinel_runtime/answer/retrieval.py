"""The turns that answer from an index without chat: KAITO's ``/retrieve`` and the RAG MVP's
``/answer``, ``/validate`` and ``/debug/retrieval`` (``docs/contracts.md``, "RAG MVP"), all
under the same policy version, gate and evidence filter as a chat answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from sentinel_runtime.access import caller
from sentinel_runtime.answer import turn as answering
from sentinel_runtime.answer.errors import UnprocessableRequestError
from sentinel_runtime.answer.services import Services
from sentinel_runtime.guardrails.scanners.token_limit import offline_encoding
from sentinel_runtime.index.types import Hit
from sentinel_runtime.pipeline import report, runner
from sentinel_runtime.pipeline.cite import citations
from sentinel_runtime.pipeline.evidence import quality

DEFAULT_FRESHNESS_DAYS = quality.DEFAULT_FRESHNESS_DAYS
# KAITO's context selection (ContextSelectionProcessor): the tokens of prompt around the
# nodes, and the window assumed when none is configured.
PROMPT_OVERHEAD_TOKENS = 150
KAITO_DEFAULT_CONTEXT_WINDOW = 64_000


@dataclass(frozen=True)
class Retrieved:
    hits: tuple[Hit, ...]
    sentinel: dict[str, Any]  # requestId, introspection, gate, evidence


async def retrieve(
    services: Services,
    *,
    index_name: str,
    query: str,
    node_count: int,
    metadata_filter: Mapping[str, Any] | None = None,
    context_token_ratio: float | None = None,
) -> Retrieved:
    """KAITO's retrieval, behind the same gate and evidence filter as an answer: a request
    the gate refuses retrieves nothing, and dropped chunks are reported, never returned.
    At most ``node_count`` nodes (and never more than the policy's ``gate.topK``); with
    ``context_token_ratio``, only those that fit KAITO's token budget."""
    engine = answering.active_engine(services)
    context = answering.context_for(services, engine, index_name)  # IndexNotFound: 404
    request = runner.PipelineRequest(query, index_name, node_count, metadata_filter=metadata_filter)
    result = await runner.retrieve(request, context)
    kept: Sequence[Hit] = result.bundle.kept if result.bundle is not None else ()
    if context_token_ratio is not None:
        window = await services.window.resolve() or KAITO_DEFAULT_CONTEXT_WINDOW
        kept = await anyio.to_thread.run_sync(
            within_budget, query, kept, context_token_ratio, window
        )
    described = report.sentinel(result, index_name=index_name)
    sentinel = {k: described[k] for k in ("requestId", "introspection", "gate", "evidence")}
    return Retrieved(tuple(kept), sentinel)


def within_budget(
    query: str, hits: Sequence[Hit], ratio: float, context_window: int
) -> tuple[Hit, ...]:
    """KAITO's context selection (``ContextSelectionProcessor``): the nodes may fill
    ``ratio`` of the context window left after the query and the 150 tokens of prompt
    around them; in relevance order, a node larger than what is left is skipped and a
    smaller one after it may still fit. Tokens are cl100k_base's."""
    encoding = offline_encoding("cl100k_base")

    def tokens(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    budget = int((context_window - tokens(query) - PROMPT_OVERHEAD_TOKENS) * ratio)
    if budget <= 0:
        return ()
    chosen: list[Hit] = []
    for hit in hits:
        size = tokens(hit.chunk.text)
        if size > budget:
            continue
        budget -= size
        chosen.append(hit)
    return tuple(chosen)


def index_name_for(services: Services, requested: str | None) -> str:
    """The index a request means: the one it names, or the only one its key may read."""
    if requested is not None:
        return requested
    names = [name for name in services.indexes.names() if caller.may_read(name)]
    if len(names) == 1:
        return names[0]
    raise UnprocessableRequestError(
        f"index_name is required: {len(names)} indexes exist ({', '.join(names[:10])})",
        param="index_name",
    )


def _chunk(hit: Hit) -> dict[str, Any]:
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


async def answer(
    services: Services,
    *,
    query: str,
    index_name: str | None,
    top_k: int,
    freshness_days: int,
) -> dict[str, Any]:
    """``POST /answer``: the pipeline's answer with its retrieval, quality and validation."""
    name = index_name_for(services, index_name)
    answered = await answering.answer_question(
        services,
        query=query,
        index_name=name,
        top_k=top_k,
        freshness_days=freshness_days,
        endpoint="answer",
    )
    result = answered.result
    kept = result.bundle.kept if result.bundle else ()
    return {
        "query": query,
        "index_name": name,
        "decision": result.decision.upper(),
        "answer": answered.text,
        "citations": list(result.answer.citations),
        "retrieval": {"top_k": result.plan.top_k, "chunks": [_chunk(h) for h in kept]},
        "retrieval_quality": result.quality,
        "validation": {k: v for k, v in result.validation.describe().items() if k != "checked"},
        "sentinel": answered.response["sentinel"],
    }


def validate(
    services: Services, answer_text: str, cited: Sequence[str], chunks: Mapping[str, str]
) -> dict[str, Any]:
    """``POST /validate``: the citation rules under the active policy's settings."""
    engine = answering.active_engine(services)
    config = answering.context_for(services, engine, None).config.citations
    result = citations.validate_citations(answer_text, list(cited), chunks, config)
    return {
        "citation_valid": result.valid,
        "errors": list(result.errors),
        "warnings": list(result.warnings),
    }


async def debug_retrieval(
    services: Services, *, query: str, top_k: int, freshness_days: int, index_name: str | None
) -> dict[str, Any]:
    """``GET /debug/retrieval``: what retrieval returns and why, without generating."""
    name = index_name_for(services, index_name)
    engine = answering.active_engine(services)
    context = answering.context_for(services, engine, name)
    request = runner.PipelineRequest(query, name, top_k=top_k, freshness_days=freshness_days)
    result = await runner.retrieve(request, context)
    return {
        "query": query,
        "index_name": name,
        "top_k": top_k,
        "gate": report.gate(result),
        "introspection": report.introspection(result),
        "evidence": report.evidence(result),
        "chunks": [_chunk(h) for h in result.hits],
        "retrieval_quality": result.quality,
    }
