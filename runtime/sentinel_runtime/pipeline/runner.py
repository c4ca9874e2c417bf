"""Compose the stages: canonicalise -> introspect -> gate -> retrieve -> filter -> generate -> cite.

The HTTP layer resolves the index and the LLM peer and hands them in through
:class:`PipelineContext`; everything here is plain data in and out, so ``sentinel eval``,
the benchmarks and the routes run the very same code. Output scanners run after this, in
the HTTP layer, over the final text.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from sentinel_runtime.index.types import Chunk, Hit, SearchFilter
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.pipeline import (
    canonical,
    citations,
    decision,
    evidence,
    fallback,
    gate,
    generation,
    introspection,
    introspection_llm,
    quality,
    refusal,
    selection,
)
from sentinel_runtime.pipeline.config import PipelineConfig
from sentinel_runtime.pipeline.types import (
    Answer,
    CanonicalPrompt,
    Decision,
    EvidenceBundle,
    Introspection,
    RetrievalPlan,
)

logger = logging.getLogger(__name__)

# messages, n -> n assistant texts (the upstream LLM, wired by the HTTP layer).
ChatFn = Callable[[list[dict[str, str]], int], Awaitable[list[str]]]


class Searchable(Protocol):
    """What the runner needs of an index: ``index.store.IndexStore`` (and any later store)."""

    def search(self, query: str, top_k: int = 5, flt: SearchFilter | None = None) -> list[Hit]: ...


NO_ANSWER = Answer(decision="answer", text="", generator="none")


@dataclass(frozen=True)
class PipelineRequest:
    query: str
    index_name: str | None = None
    top_k: int | None = None
    freshness_days: int = quality.DEFAULT_FRESHNESS_DAYS
    metadata_filter: Mapping[str, Any] | None = None  # equality on metadata, ANDed with the plan


@dataclass
class PipelineContext:
    config: PipelineConfig
    store: Searchable | None = None  # None when the request names no index
    chat: ChatFn | None = None
    now: datetime | None = None


@dataclass(frozen=True)
class RetrievalAttempt:
    plan: RetrievalPlan
    retrieved: int
    kept: int
    fallback: str | None


@dataclass
class PipelineResult:
    request_id: str
    prompt: CanonicalPrompt
    state: Introspection
    plan: RetrievalPlan
    answer: Answer
    validation: citations.CitationValidation
    bundle: EvidenceBundle | None = None
    hits: tuple[Hit, ...] = ()
    attempts: tuple[RetrievalAttempt, ...] = ()
    quality: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    rewards: tuple[selection.Reward, ...] = ()
    retrieval_performed: bool = False

    @property
    def decision(self) -> Decision:
        return self.answer.decision


class _Timer:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    def stage(self, name: str) -> _Stage:
        return _Stage(self, name)


class _Stage:
    def __init__(self, timer: _Timer, name: str) -> None:
        self.timer, self.name = timer, name

    def __enter__(self) -> None:
        self.started = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        elapsed = time.perf_counter() - self.started
        self.timer.timings[self.name] = self.timer.timings.get(self.name, 0.0) + elapsed
        metrics.STAGE_DURATION.labels(self.name).observe(elapsed)


@dataclass
class Preflight:
    """Stages 0-2: what the pipeline knows before touching an index or a generator."""

    request_id: str
    prompt: CanonicalPrompt
    state: Introspection
    plan: RetrievalPlan
    now: datetime
    timer: _Timer


async def preflight(request: PipelineRequest, context: PipelineContext) -> Preflight:
    config = context.config
    now = context.now or datetime.now().astimezone()
    timer = _Timer()
    with timer.stage("introspect"):
        prompt = canonical.canonicalise(request.query, config.introspection.max_prompt_chars)
        state = await _introspect(prompt, context)
    with timer.stage("gate"):
        plan = gate.plan_retrieval(prompt, state, config.gate, now)
        if request.top_k is not None and plan.action != "no_retrieve":
            plan = dataclasses.replace(plan, top_k=min(plan.top_k, request.top_k))
    metrics.GATE_DECISIONS.labels(plan.action).inc()
    return Preflight(f"req-{uuid.uuid4().hex[:16]}", prompt, state, plan, now, timer)


def passthrough(pre: Preflight, text: str, generator: str) -> PipelineResult:
    """A result for an answer the HTTP layer generated itself (chat without an index)."""
    chosen = decision.decide(pre.state, pre.plan, None)
    if chosen == "refuse":
        raise ValueError("a refused request is completed by the pipeline, not passed through")
    answer = Answer(decision=chosen, text=text, generator=generator)
    metrics.CITATION_VALIDATIONS.labels("not_checked").inc()
    metrics.PIPELINE_DECISIONS.labels(answer.decision).inc()
    return PipelineResult(
        request_id=pre.request_id,
        prompt=pre.prompt,
        state=pre.state,
        plan=pre.plan,
        answer=answer,
        validation=citations.NOT_CHECKED,
        timings=pre.timer.timings,
    )


async def run(request: PipelineRequest, context: PipelineContext) -> PipelineResult:
    pre = await preflight(request, context)
    return await complete(pre, request, context)


async def retrieve(request: PipelineRequest, context: PipelineContext) -> PipelineResult:
    """Stages 0-3 without generation: what a request may see of the index, and why."""
    pre = await preflight(request, context)
    return await complete(pre, request, context, generate=False)


async def complete(
    pre: Preflight,
    request: PipelineRequest,
    context: PipelineContext,
    *,
    generate: bool = True,
) -> PipelineResult:
    """Stages 3-5 after :func:`preflight`: retrieve, filter, generate, validate citations.

    With ``generate=False`` (KAITO's ``/retrieve``) it stops after the evidence filter: the
    caller gets the kept chunks, and the gate and the filter still decide what it may see.
    """
    config = context.config
    prompt, state, plan, now, timer = pre.prompt, pre.state, pre.plan, pre.now, pre.timer
    bundle: EvidenceBundle | None = None
    hits: tuple[Hit, ...] = ()
    attempts: list[RetrievalAttempt] = []
    store = context.store
    if plan.action != "no_retrieve" and store is not None:
        hits, bundle, plan, attempts = await asyncio.to_thread(
            _retrieve_and_filter,
            store,
            plan,
            state=state,
            now=now,
            config=config,
            timer=timer,
            metadata=request.metadata_filter,
        )
        for _, verdict in bundle.dropped:
            for reason in verdict.reasons:
                metrics.EVIDENCE_DROPPED.labels(reason).inc()

    result_quality = quality.retrieval_quality(hits, now, request.freshness_days)
    chosen = decision.decide(state, plan, bundle)
    rewards: tuple[selection.Reward, ...] = ()
    kept = bundle.kept if bundle is not None else ()
    if not generate:
        answer, validation = dataclasses.replace(NO_ANSWER, decision=chosen), citations.NOT_CHECKED
    else:
        with timer.stage("generate"):
            if chosen == "refuse":
                answer = refusal.refuse(state)
            else:
                answer, rewards = await _generate(prompt.text, kept, chosen, bundle, context)
        with timer.stage("cite"):
            answer, validation = _validate(answer, kept, store is not None, config)
        metrics.PIPELINE_DECISIONS.labels(answer.decision).inc()
    return PipelineResult(
        request_id=pre.request_id,
        prompt=prompt,
        state=state,
        plan=plan,
        answer=answer,
        validation=validation,
        bundle=bundle,
        hits=hits,
        attempts=tuple(attempts),
        quality=result_quality,
        timings=timer.timings,
        rewards=rewards,
        retrieval_performed=bool(attempts),
    )


def warm_up(config: PipelineConfig) -> None:
    """Build what the stages build lazily (the harm judge's index, the evidence scanners),
    so that the first request does not pay about a second for it."""
    text = "Warm-up: how do I reset my password? Contact support@example.com."
    prompt = canonical.canonicalise(text, config.introspection.max_prompt_chars)
    state = introspection.introspect(prompt, config.introspection)
    chunk = Chunk(chunk_id="warm-up#p0", doc_id="warm-up", position=0, text=text)
    hit = Hit(chunk=chunk, score=1.0, similarity=0.5, lexical=0.0, rank=0)
    plan = RetrievalPlan(action="retrieve", query=text, top_k=1)
    evidence.filter_evidence([hit], text, state, plan, datetime.now().astimezone(), config.evidence)


async def _introspect(prompt: CanonicalPrompt, context: PipelineContext) -> Introspection:
    settings = context.config.introspection
    if settings.backend == "llm" and context.chat is not None:
        chat = context.chat

        async def one_reply(messages: list[dict[str, str]]) -> str:
            return (await chat(messages, 1))[0]

        state = await introspection_llm.introspect_with_llm(prompt, settings, one_reply)
        if state.fallback_reason is not None:
            metrics.INTROSPECTION_FALLBACKS.labels(_reason_label(state.fallback_reason)).inc()
            log_event(
                logger,
                events.INTROSPECTION_FALLBACK,
                logging.WARNING,
                reason=state.fallback_reason,
            )
        return state
    return introspection.introspect(prompt, settings)


def _reason_label(reason: str) -> str:
    # Bounded label values: the reason's first word ("malformed", "timeout", ...).
    return reason.split(":", 1)[0].split(maxsplit=1)[0][:32] if reason.strip() else "unknown"


def _retrieve_and_filter(
    store: Searchable,
    plan: RetrievalPlan,
    *,
    state: Introspection,
    now: datetime,
    config: PipelineConfig,
    timer: _Timer,
    metadata: Mapping[str, Any] | None = None,
) -> tuple[tuple[Hit, ...], EvidenceBundle, RetrievalPlan, list[RetrievalAttempt]]:
    attempts: list[RetrievalAttempt] = []
    tried: set[tuple[Any, ...]] = set()
    while True:
        with timer.stage("retrieve"):
            hits = tuple(store.search(plan.query, plan.top_k, _search_filter(plan, metadata)))
        with timer.stage("filter"):
            bundle = evidence.filter_evidence(hits, plan.query, state, plan, now, config.evidence)
        attempts.append(RetrievalAttempt(plan, len(hits), len(bundle.kept), bundle.fallback))
        tried.add(_plan_key(plan))
        retry = fallback.fallback_plan(plan, bundle.fallback, state, config.gate, now)
        if retry is None or _plan_key(retry) in tried:
            return hits, bundle, plan, attempts
        plan = retry


def _plan_key(plan: RetrievalPlan) -> tuple[Any, ...]:
    return (plan.action, plan.query, plan.top_k, plan.sources, plan.not_before)


def _search_filter(
    plan: RetrievalPlan, metadata: Mapping[str, Any] | None = None
) -> SearchFilter | None:
    if plan.sources is None and plan.not_before is None and not metadata:
        return None
    return SearchFilter(sources=plan.sources, not_before=plan.not_before, metadata=metadata or {})


async def _generate(
    query: str,
    kept: Sequence[Hit],
    chosen: Decision,
    bundle: EvidenceBundle | None,
    context: PipelineContext,
) -> tuple[Answer, tuple[selection.Reward, ...]]:
    config = context.config
    conflicts = bundle.conflicts if bundle is not None else ()
    if context.chat is None:
        answer = generation.extractive_answer(
            query,
            kept,
            decision=chosen,
            conflicts=conflicts,
            max_sentences=config.generation.max_sentences,
        )
        return answer, ()
    messages = generation.grounded_messages(query, kept, decision=chosen, conflicts=conflicts)
    replies = await context.chat(messages, config.generation.best_of_n)
    candidates = []
    for reply in replies:
        try:
            candidates.append(generation.parse_llm_answer(reply, decision=chosen))
        except generation.AnswerFormatError as exc:
            candidates.append(
                Answer(
                    decision=chosen,
                    text=reply,
                    generator="llm",
                    details={"format_error": str(exc)},
                )
            )
    chunks = {h.chunk.chunk_id: h.chunk.text for h in kept}
    if len(candidates) == 1:
        return candidates[0], ()
    best, rewards = selection.select_best(candidates, query, chunks, config.citations)
    return best, tuple(rewards)


def _validate(
    answer: Answer, kept: Sequence[Hit], indexed: bool, config: PipelineConfig
) -> tuple[Answer, citations.CitationValidation]:
    """Seed 004's hard block: an answer whose citations fail is replaced by the fallback."""
    if answer.decision == "refuse" or not indexed or not config.citations.enabled:
        metrics.CITATION_VALIDATIONS.labels("not_checked").inc()
        return answer, citations.NOT_CHECKED
    format_error = answer.details.get("format_error")
    if format_error:
        validation = citations.CitationValidation(valid=False, errors=(str(format_error),))
    else:
        chunks = {h.chunk.chunk_id: h.chunk.text for h in kept}
        validation = citations.validate_citations(
            answer.text, answer.citations, chunks, config.citations
        )
    if validation.valid:
        metrics.CITATION_VALIDATIONS.labels("valid").inc()
        return answer, validation
    metrics.CITATION_VALIDATIONS.labels("invalid").inc()
    blocked = Answer(
        decision="block",
        text=config.citations.blocked_answer,
        generator=answer.generator,
        details={"blocked_citations": list(answer.citations)},
    )
    return blocked, validation
