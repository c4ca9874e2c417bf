"""Stage 1 with a guard model: the built-in judge and a dedicated safety model, as a cascade.

``guard.mode`` says when the guard model is asked (docs/how-sentinel-decides.md):
- ``uncertain``: the built-in judge (or the LLM trace) decides first; the guard model sees
  only requests whose severity falls in ``guard.band`` [low, high). Clear cases cost nothing.
- ``always``: both judge every request, concurrently (the guard's call is in flight while
  the built-in judge reads the prompt).

How the two verdicts combine (:func:`combine`, pure):
- the guard says unsafe: the request is refused (harmful intent, severity 1, the guard's
  category mapped onto Sentinel's);
- the guard says safe: the request is served as benign, unless ``guard.builtinFloor`` holds
  and the built-in judge refused it (then its refusal stands, ``fallbackReason:
  safety_floor``): a prompt that talks one judge into "safe" cannot lower the other's floor;
- the guard said nothing (timeout, HTTP error, unreadable reply, open circuit):
  ``guard.onError`` decides: ``builtin`` keeps the built-in verdict, ``refuse`` refuses,
  ``allow`` proceeds as if the guard had said safe (the floor still holds).
The judgement itself (verdict, categories, probability, latency, model) rides on the
``Introspection`` for the trace and the audit; the prompt's words never do. A request the
deployment's examples settled (``examples``) is not put to the guard: in ``always`` mode
its call, already in flight, is cancelled.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Protocol

from sentinel_runtime.guard.config import GuardConfig
from sentinel_runtime.guard.types import GuardInput, GuardJudgement, Subject
from sentinel_runtime.pipeline.types import CanonicalPrompt, Introspection
from sentinel_runtime.pipeline.understand import retrieval_need
from sentinel_runtime.pipeline.understand.introspection import IntrospectionConfig

HARMFUL = frozenset({"harmful_procedural", "disguised"})
MAX_CATEGORY_SIGNALS = 4


class Guard(Protocol):
    """What the cascade needs of a guard model (``guard.judge.GuardJudge``)."""

    @property
    def config(self) -> GuardConfig: ...

    async def judge(self, item: GuardInput) -> GuardJudgement: ...

    def skipped(self, subject: Subject, detail: str) -> GuardJudgement: ...


def mode_of(guard: GuardConfig, settings: IntrospectionConfig) -> str:
    """The effective mode: ``introspection.backend: guard`` with the guard section's mode
    left off means the uncertain band."""
    if guard.mode == "off" and settings.backend == "guard" and "mode" not in guard.model_fields_set:
        return "uncertain"
    return guard.mode


async def introspect_guarded(
    prompt: CanonicalPrompt,
    settings: IntrospectionConfig,
    guard: Guard,
    builtin: Callable[[], Awaitable[Introspection]],
) -> Introspection:
    """The request's introspection with the guard model's judgement folded in."""
    config = guard.config
    mode = mode_of(config, settings)
    if mode == "off" or not config.url:
        return await builtin()
    item = GuardInput(prompt=prompt.text)
    if mode == "always":
        pending = asyncio.ensure_future(guard.judge(item))
        try:
            first = await builtin()
        except BaseException:
            pending.cancel()
            raise
        if first.example is not None:
            pending.cancel()
            return first
        judgement = await pending
    else:
        first = await builtin()
        if first.example is not None:
            return first
        if not config.band.contains(first.severity):
            side = "below" if first.severity < config.band.low else "above"
            return dataclasses.replace(first, guard=guard.skipped("prompt", f"clear_{side}"))
        judgement = await guard.judge(item)
    return combine(prompt, first, judgement, config, settings)


def combine(
    prompt: CanonicalPrompt,
    first: Introspection,
    judgement: GuardJudgement,
    config: GuardConfig,
    settings: IntrospectionConfig,
) -> Introspection:
    """The built-in verdict ``first`` and the guard's ``judgement`` as one introspection."""
    if judgement.outcome == "ok" and judgement.unsafe:
        return _unsafe(first, judgement)
    if judgement.outcome == "ok":
        return _safe(prompt, first, judgement, config, settings, fallback=None)
    reason = f"guard_{judgement.outcome}"
    if config.on_error == "refuse":
        refused = _unsafe(first, judgement)
        return dataclasses.replace(
            refused,
            risk_category=first.risk_category if first.risk_category != "none" else "other",
            signals=(*first.signals, "guard_unavailable"),
            fallback_reason=reason,
        )
    if config.on_error == "allow":
        return _safe(prompt, first, judgement, config, settings, fallback=reason)
    return dataclasses.replace(first, guard=judgement, fallback_reason=reason)


def _unsafe(first: Introspection, judgement: GuardJudgement) -> Introspection:
    verdict = judgement.verdict
    mapped = [c for c in (verdict.risk_categories if verdict else ()) if c != "none"]
    if mapped:
        category = mapped[0]
    else:
        category = first.risk_category if first.risk_category != "none" else "other"
    codes = tuple(f"guard_category:{c}" for c in (verdict.categories if verdict else ()))
    probability = verdict.probability if verdict else None
    return dataclasses.replace(
        first,
        intent=first.intent if first.intent in HARMFUL else "harmful_procedural",
        risk_category=category,
        severity=1.0,
        confidence=1.0 if probability is None else min(1.0, max(0.0, probability)),
        retrieval_need="none",
        retrieval_need_reason="",
        signals=(*first.signals, "guard:unsafe", *codes[:MAX_CATEGORY_SIGNALS]),
        backend="guard",
        guard=judgement,
    )


def _safe(
    prompt: CanonicalPrompt,
    first: Introspection,
    judgement: GuardJudgement,
    config: GuardConfig,
    settings: IntrospectionConfig,
    *,
    fallback: str | None,
) -> Introspection:
    refused_by_builtin = first.intent in HARMFUL and first.severity >= settings.harmful_severity
    if refused_by_builtin and config.builtin_floor:
        return dataclasses.replace(
            first,
            signals=(*first.signals, f"guard:{judgement.verdict_label}"),
            guard=judgement,
            fallback_reason=fallback or "safety_floor",
        )
    need, need_reason = first.retrieval_need, first.retrieval_need_reason
    if first.intent in HARMFUL:  # a harmful verdict retrieved nothing: judge the need afresh
        judged = retrieval_need.assess(prompt.text)
        need, need_reason = judged.need, judged.reason
    probability = judgement.verdict.probability if judgement.verdict else None
    severity = min(first.severity, probability if probability is not None else 0.0)
    return dataclasses.replace(
        first,
        intent="benign",
        risk_category="none",
        severity=severity,
        confidence=1.0 if probability is None else min(1.0, max(0.0, 1.0 - probability)),
        retrieval_need=need,
        retrieval_need_reason=need_reason,
        signals=(*first.signals, f"guard:{judgement.verdict_label}"),
        backend="guard",
        guard=judgement,
        fallback_reason=fallback,
    )
