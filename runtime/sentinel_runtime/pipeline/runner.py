"""Compose the stages: canonicalise -> introspect -> gate -> retrieve -> filter -> generate -> cite.

The HTTP layer resolves the index and the LLM peer and hands them in through
:class:`PipelineContext`; everything here is plain data in and out, so ``sentinel eval``,
the benchmarks and the routes run the very same code. Output scanners run after this, in
the HTTP layer, over the final text.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from sentinel_runtime.guard.types import GuardJudgement
from sentinel_runtime.index.types import Chunk, Hit, SearchFilter
from sentinel_runtime.llm import calls
from sentinel_runtime.observability import events, metrics, tracing
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.pipeline import conversation
from sentinel_runtime.pipeline.cite import citations, markers, support
from sentinel_runtime.pipeline.config import PipelineConfig
from sentinel_runtime.pipeline.evidence import quality, scoring
from sentinel_runtime.pipeline.gate import decision, fallback, planner
from sentinel_runtime.pipeline.generate import (
    extractive,
    model_answer,
    refusal,
    selection,
)
from sentinel_runtime.pipeline.placement import Placement, Searchable
from sentinel_runtime.pipeline.types import (
    Answer,
    CanonicalPrompt,
    Claim,
    Decision,
    EvidenceBundle,
    Introspection,
    RetrievalPlan,
)
from sentinel_runtime.pipeline.understand import (
    canonical,
    examples,
    guarded,
    introspection,
    introspection_llm,
)

logger = logging.getLogger(__name__)

# messages, n -> n assistant texts (the upstream LLM for introspection, wired by the HTTP
# layer); the grounded answer is generated through a richer calls.GenerateFn.
ChatFn = Callable[[list[dict[str, str]], int], Awaitable[list[str]]]


NO_ANSWER = Answer(decision="answer", text="", generator="none")


@dataclass(frozen=True)
class PipelineRequest:
    query: str
    index_name: str | None = None
    top_k: int | None = None
    freshness_days: int = quality.DEFAULT_FRESHNESS_DAYS
    metadata_filter: Mapping[str, Any] | None = None  # equality on metadata, ANDed with the plan
    # The chat around the question (system messages, history, parameters): None for /answer.
    conversation: conversation.Conversation | None = None


@dataclass
class PipelineContext:
    config: PipelineConfig
    store: Searchable | None = None  # None when the request names no index
    chat: ChatFn | None = None
    generate: calls.GenerateFn | None = None  # the upstream model; None: built-in generators
    context_window: int = 0  # the upstream's, in tokens (0: unknown, history is not trimmed)
    now: datetime | None = None
    # The guard model of the policy's guard section (None: no guard server configured).
    guard: guarded.Guard | None = None


@dataclass(frozen=True)
class RetrievalAttempt:
    plan: RetrievalPlan
    retrieved: int
    kept: int
    fallback: str | None
    undated: int = 0  # retrieved chunks that passed the plan's time window without a timestamp


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
    follow_up_query: str | None = None  # the retrieval query a follow-up question became
    usage: calls.Usage = field(default_factory=calls.Usage)  # reported by the upstream, or counted
    generation: dict[str, Any] = field(default_factory=dict)  # how the model was asked
    # The guard model's judgement of the final answer (set by the application layer).
    answer_guard: GuardJudgement | None = None

    @property
    def decision(self) -> Decision:
        return self.answer.decision


class _Timer:
    """Each stage's time (the response's ``latencyMs``), its histogram and its span (named
    ``sentinel.<stage>``, docs/tracing.md): the one place a stage is measured."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    def stage(self, name: str) -> _Stage:
        return _Stage(self, name)


class _Stage:
    def __init__(self, timer: _Timer, name: str) -> None:
        self.timer, self.name = timer, name

    def __enter__(self) -> tracing.Handle:
        self.span = tracing.span(STAGE_SPANS[self.name])
        handle = self.span.__enter__()
        self.started = time.perf_counter()
        return handle

    def __exit__(self, *exc: Any) -> None:
        elapsed = time.perf_counter() - self.started
        self.timer.timings[self.name] = self.timer.timings.get(self.name, 0.0) + elapsed
        metrics.STAGE_DURATION.labels(self.name).observe(elapsed, exemplar=tracing.exemplar())
        self.span.__exit__(*exc)


STAGE_SPANS = {
    stage: f"sentinel.{stage}"
    for stage in ("introspect", "gate", "retrieve", "filter", "generate", "cite")
}


@dataclass
class Preflight:
    """Stages 0-2: what the pipeline knows before touching an index or a generator."""

    request_id: str
    prompt: CanonicalPrompt
    state: Introspection
    plan: RetrievalPlan
    now: datetime
    timer: _Timer
    follow_up_query: str | None = None


async def preflight(request: PipelineRequest, context: PipelineContext) -> Preflight:
    config = context.config
    now = context.now or datetime.now().astimezone()
    timer = _Timer()
    with timer.stage("introspect") as span:
        with tracing.span("sentinel.canonicalise") as canonicalised:
            prompt = canonical.canonicalise(request.query, config.introspection.max_prompt_chars)
            canonicalised.set(**{"sentinel.prompt.chars": len(prompt.text)})
            if tracing.capture_content():
                canonicalised.set(**{"sentinel.prompt": prompt.text})
        state = await _introspect(prompt, context)
        if span.recording:
            span.set(**_introspection_attributes(state))
    with timer.stage("gate") as span:
        plan = planner.plan_retrieval(prompt, state, config.gate, now)
        if request.top_k is not None and plan.action != "no_retrieve":
            plan = dataclasses.replace(plan, top_k=min(plan.top_k, request.top_k))
        follow_up = None
        if request.conversation is not None and plan.action != "no_retrieve":
            # The question is judged as asked; only what retrieval looks up borrows context.
            previous = conversation.leans_on(request.conversation, prompt.text)
            if previous is not None:
                follow_up = f"{previous.strip()} {plan.query}"
                plan = dataclasses.replace(plan, query=follow_up)
        span.set(**{"sentinel.gate.action": plan.action, "sentinel.gate.top_k": plan.top_k})
    metrics.GATE_DECISIONS.labels(plan.action).inc()
    request_id = request_id_now()
    return Preflight(request_id, prompt, state, plan, now, timer, follow_up)


def request_id_now() -> str:
    """The turn's id in its audit record and response: the trace id when tracing is on (so a
    turn found in the audit log opens in the tracing UI, docs/tracing.md), else ``req-`` and
    16 random hex digits."""
    return tracing.trace_id() or f"req-{uuid.uuid4().hex[:16]}"


def _introspection_attributes(state: Introspection) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "sentinel.intent": state.intent,
        "sentinel.risk_category": state.risk_category,
        "sentinel.severity": state.severity,
        "sentinel.introspection.backend": state.backend,
    }
    if state.attack_families:
        attributes["sentinel.attack_families"] = list(state.attack_families)
    if state.fallback_reason:
        attributes["sentinel.introspection.fallback"] = _reason_label(state.fallback_reason)
    return attributes


def _answer_attributes(answer: Answer) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "sentinel.decision": answer.decision,
        "sentinel.generator": answer.generator,
        "sentinel.answer.chars": len(answer.text),
    }
    if tracing.capture_content():
        attributes["sentinel.answer"] = answer.text
    return attributes


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


@dataclass(frozen=True)
class Gathered:
    """Stage 3 after :func:`preflight`: the evidence and the decision it leads to."""

    plan: RetrievalPlan
    bundle: EvidenceBundle | None
    hits: tuple[Hit, ...]
    attempts: tuple[RetrievalAttempt, ...]
    quality: dict[str, Any]
    decision: Decision

    @property
    def kept(self) -> tuple[Hit, ...]:
        return self.bundle.kept if self.bundle is not None else ()


async def gather(pre: Preflight, request: PipelineRequest, context: PipelineContext) -> Gathered:
    """Retrieve and filter the evidence (when the plan and an index allow), then decide."""
    config = context.config
    plan = pre.plan
    bundle: EvidenceBundle | None = None
    hits: tuple[Hit, ...] = ()
    attempts: list[RetrievalAttempt] = []
    store = context.store
    if plan.action != "no_retrieve" and store is not None:
        work = functools.partial(
            _retrieve_and_filter,
            store,
            plan,
            state=pre.state,
            now=pre.now,
            config=config,
            timer=pre.timer,
            metadata=request.metadata_filter,
        )
        hits, bundle, plan, attempts = await PLACEMENT.run(store, work)
        for _, verdict in bundle.dropped:
            for reason in verdict.reasons:
                metrics.EVIDENCE_DROPPED.labels(reason).inc()
    result_quality = quality.retrieval_quality(hits, pre.now, request.freshness_days)
    chosen = decision.decide(pre.state, plan, bundle)
    return Gathered(plan, bundle, hits, tuple(attempts), result_quality, chosen)


def uses_model(gathered: Gathered, context: PipelineContext) -> bool:
    """Whether stage 4 asks the upstream model (else a refusal or the extractive
    generator answers: with no kept evidence there is nothing to ground a model's answer in)."""
    return gathered.decision != "refuse" and context.generate is not None and bool(gathered.kept)


async def complete(
    pre: Preflight,
    request: PipelineRequest,
    context: PipelineContext,
    *,
    generate: bool = True,
    gathered: Gathered | None = None,
) -> PipelineResult:
    """Stages 3-5 after :func:`preflight`: retrieve, filter, generate, validate citations
    (``gathered``: stage 3 already done, by :func:`gather`).

    With ``generate=False`` (KAITO's ``/retrieve``) it stops after the evidence filter: the
    caller gets the kept chunks, and the gate and the filter still decide what it may see.
    """
    config = context.config
    prompt, state, timer = pre.prompt, pre.state, pre.timer
    if gathered is None:
        gathered = await gather(pre, request, context)
    plan, bundle, chosen, kept = gathered.plan, gathered.bundle, gathered.decision, gathered.kept
    generated = model_answer.ModelAnswer(NO_ANSWER, ())
    if not generate:
        answer, validation = dataclasses.replace(NO_ANSWER, decision=chosen), citations.NOT_CHECKED
    else:
        with timer.stage("generate") as span:
            if chosen == "refuse":
                answer = refusal.refuse(state)
            else:
                generated = await _generate(
                    prompt.text, kept, chosen, bundle, request=request, context=context
                )
                answer = generated.answer
            if span.recording:
                span.set(**_answer_attributes(answer))
        with timer.stage("cite") as span:
            claims = generated.claims
            judged = await _judged_by_model(answer, claims, kept, context)
            answer, validation = _validate(
                answer, claims, kept, context.store is not None, config, judged=judged
            )
            span.set(
                **{
                    "sentinel.citations.valid": validation.valid,
                    "sentinel.citations.errors": len(validation.errors),
                    "sentinel.citations.count": len(answer.citations),
                    "sentinel.decision": answer.decision,
                }
            )
        metrics.PIPELINE_DECISIONS.labels(answer.decision).inc()
    return PipelineResult(
        request_id=pre.request_id,
        prompt=prompt,
        state=state,
        plan=plan,
        answer=answer,
        validation=validation,
        bundle=bundle,
        hits=gathered.hits,
        attempts=gathered.attempts,
        quality=gathered.quality,
        timings=timer.timings,
        rewards=generated.rewards,
        retrieval_performed=bool(gathered.attempts),
        follow_up_query=pre.follow_up_query,
        usage=generated.usage,
        generation=generated.trace,
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
    scoring.filter_evidence([hit], text, state, plan, datetime.now().astimezone(), config.evidence)


def warm_examples(config: PipelineConfig) -> None:
    """Embed a policy version's ``judge.examples`` before it becomes active."""
    examples.warm(config.judge, config.introspection)


async def _introspect(prompt: CanonicalPrompt, context: PipelineContext) -> Introspection:
    settings = context.config.introspection
    judge = context.config.judge

    async def first() -> Introspection:
        state = await _introspect_first(prompt, context)
        return examples.settle(prompt, state, judge, settings)

    def builtin_with_examples() -> Introspection:
        state = _builtin_judge(prompt, settings)
        return examples.settle(prompt, state, judge, settings)

    async def first_in_a_thread() -> Introspection:
        # The built-in judge is CPU work that never yields: in a worker thread, the event
        # loop sends the guard's request meanwhile instead of after it.
        return await asyncio.to_thread(builtin_with_examples)

    if context.guard is None:
        return await first()
    builtin_only = settings.backend != "llm" or context.chat is None
    concurrent = guarded.mode_of(context.guard.config, settings) == "always"
    chosen = first_in_a_thread if builtin_only and concurrent else first
    state = await guarded.introspect_guarded(prompt, settings, context.guard, chosen)
    if state.fallback_reason is not None and state.fallback_reason.startswith("guard_"):
        metrics.INTROSPECTION_FALLBACKS.labels(_reason_label(state.fallback_reason)).inc()
    return state


async def _introspect_first(prompt: CanonicalPrompt, context: PipelineContext) -> Introspection:
    """The built-in judge, or the upstream model's trace with the built-in floor."""
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
    return _builtin_judge(prompt, settings)


def _builtin_judge(prompt: CanonicalPrompt, settings: Any) -> Introspection:
    with tracing.span("sentinel.judge") as span:
        state = introspection.introspect(prompt, settings)
        span.set(**{"sentinel.intent": state.intent, "sentinel.risk_category": state.risk_category})
        return state


def _reason_label(reason: str) -> str:
    # Bounded label values: the reason's first word ("malformed", "timeout", ...).
    return reason.split(":", 1)[0].split(maxsplit=1)[0][:32] if reason.strip() else "unknown"


T = TypeVar("T")


PLACEMENT = Placement()


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
        with timer.stage("retrieve") as span:
            hits = tuple(store.search(plan.query, plan.top_k, _search_filter(plan, metadata)))
            span.set(**{"sentinel.gate.action": plan.action, "sentinel.retrieve.hits": len(hits)})
        with timer.stage("filter") as span:
            bundle = scoring.filter_evidence(hits, plan.query, state, plan, now, config.evidence)
            span.set(
                **{
                    "sentinel.evidence.kept": len(bundle.kept),
                    "sentinel.evidence.dropped": len(bundle.dropped),
                    "sentinel.evidence.fallback": bundle.fallback,
                }
            )
        undated = sum(1 for v in bundle.verdicts if "undated" in v.notes)
        attempts.append(
            RetrievalAttempt(plan, len(hits), len(bundle.kept), bundle.fallback, undated)
        )
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
    """The index filter of ``plan`` (and the client's metadata equality). A plan's time
    window keeps documents without a timestamp: nothing says they are outdated, and the
    evidence filter notes them (``"undated"``) in the trace."""
    if plan.sources is None and plan.not_before is None and not metadata:
        return None
    return SearchFilter(
        sources=plan.sources,
        not_before=plan.not_before,
        metadata=metadata or {},
        keep_undated=True,
    )


async def _generate(
    query: str,
    kept: Sequence[Hit],
    chosen: Decision,
    bundle: EvidenceBundle | None,
    *,
    request: PipelineRequest,
    context: PipelineContext,
) -> model_answer.ModelAnswer:
    config = context.config
    conflicts = bundle.conflicts if bundle is not None else ()
    # With no kept evidence there is nothing to ground a model's answer in: the extractive
    # generator says so without a model call (and without a citation a schema would force).
    if context.generate is None or not kept:
        answer = extractive.extractive_answer(
            query,
            kept,
            decision=chosen,
            conflicts=conflicts,
            max_sentences=config.generation.max_sentences,
        )
        return model_answer.ModelAnswer(answer, ())
    question = model_answer.Question(
        query,
        kept,
        chosen,
        conflicts,
        request.conversation or conversation.Conversation(),
    )
    return await model_answer.answer(
        question,
        context.generate,
        citations=config.citations,
        best_of_n=config.generation.best_of_n,
        context_window=context.context_window,
    )


async def _judged_by_model(
    answer: Answer, claims: Sequence[Claim], kept: Sequence[Hit], context: PipelineContext
) -> list[support.Unsupported]:
    """With ``citations.support: llm``, the claims the upstream model finds unsupported."""
    chat = context.chat
    if context.config.citations.support != "llm" or chat is None or not claims:
        return []
    if answer.decision == "refuse" or citations.says_insufficient(answer.text):
        return []

    async def ask(messages: list[dict[str, str]]) -> str:
        return (await chat(messages, 1))[0]

    chunks = {h.chunk.chunk_id: h.chunk.text for h in kept}
    return await support.judged_by_model(claims, chunks, answer.citations, ask)


def _validate(
    answer: Answer,
    claims: Sequence[Claim],
    kept: Sequence[Hit],
    indexed: bool,
    config: PipelineConfig,
    *,
    judged: Sequence[support.Unsupported] = (),
) -> tuple[Answer, citations.CitationValidation]:
    """Seed 004's hard block: an answer whose citations fail is replaced by the fallback; so
    is one whose claims the cited chunks do not hold (or those claims are dropped)."""
    if answer.decision == "refuse" or not indexed or not config.citations.enabled:
        metrics.CITATION_VALIDATIONS.labels("not_checked").inc()
        return answer, citations.NOT_CHECKED
    chunks = {h.chunk.chunk_id: h.chunk.text for h in kept}
    format_error = answer.details.get("format_error")
    if format_error:
        validation = citations.CitationValidation(valid=False, errors=(str(format_error),))
    else:
        validation = citations.validate_citations(
            answer.text, answer.citations, chunks, config.citations
        )
    if validation.valid and claims and config.citations.support != "off":
        answer, validation = _check_support(
            answer, claims, chunks, validation, config, judged=judged
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


def _check_support(
    answer: Answer,
    claims: Sequence[Claim],
    chunks: Mapping[str, str],
    validation: citations.CitationValidation,
    config: PipelineConfig,
    *,
    judged: Sequence[support.Unsupported] = (),
) -> tuple[Answer, citations.CitationValidation]:
    if citations.says_insufficient(answer.text):
        return answer, validation
    unsupported = support.check(claims, chunks, answer.citations)
    lexical = {u.sentence for u in unsupported}
    unsupported += [u for u in judged if u.sentence not in lexical]
    if not unsupported:
        return answer, validation
    described = tuple(u.describe() for u in unsupported)
    message = f"{len(unsupported)} sentence(s) state facts their cited chunks do not hold"
    kept_claims = [c for c in claims if all(c.text != u.sentence for u in unsupported)]
    if config.citations.unsupported == "drop" and kept_claims:
        text = markers.without_claims(answer.text, [u.sentence for u in unsupported])
        cited = tuple(c for c in answer.citations if any(c in k.cited for k in kept_claims))
        answer = dataclasses.replace(answer, text=text, citations=cited or answer.citations)
        return answer, dataclasses.replace(
            validation,
            warnings=(*validation.warnings, message + " (dropped)"),
            unsupported=described,
            dropped=len(unsupported),
        )
    return answer, dataclasses.replace(
        validation, valid=False, errors=(*validation.errors, message), unsupported=described
    )
