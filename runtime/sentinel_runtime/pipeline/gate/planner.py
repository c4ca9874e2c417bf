"""Stage 2: the retrieval gate, {Retrieve | Restrict | No-Retrieve} with a plan.

Reads the validated ``Introspection`` (stage 1) and decides what retrieval (stage 3) may do:
retrieve normally when the risk is low, retrieve under constraints (trusted sources, a time
window that documents without a timestamp pass, fewer chunks, a query stripped of procedural
triggers) when it is moderate or the intent is ambiguous, and not at all when the request
is clearly unsafe (evidence would only amplify harm) or needs no documents. A restricted
plan also says how far ``gate.fallback`` may widen it when it finds nothing (``widen``).
:func:`is_refused` says which plans the generator answers with a refusal; the runner and
the evaluation both use it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from sentinel_runtime.pipeline.signals.query_rewrite import rewrite_query
from sentinel_runtime.pipeline.types import (
    CanonicalPrompt,
    EvidenceType,
    Introspection,
    RetrievalPlan,
)

HARMFUL_INTENTS = frozenset({"harmful_procedural", "disguised"})


class GateConfig(BaseModel):
    """The ``gate`` section of guardrails.yaml."""

    model_config = ConfigDict(
        frozen=True, alias_generator=to_camel, populate_by_name=True, extra="ignore"
    )

    # A harmful or disguised request at or above this severity is not retrieved for (refused).
    no_retrieve_severity: float = Field(default=0.6, ge=0.0, le=1.0)
    # From here up to no_retrieve_severity retrieval is restricted; ambiguous intent always is.
    restrict_severity: float = Field(default=0.3, ge=0.0, le=1.0)
    top_k: int = Field(default=5, ge=1, le=100)
    restricted_top_k: int = Field(default=3, ge=1, le=100)
    # Sources a restricted retrieval may read; empty means no source constraint.
    trusted_sources: tuple[str, ...] = ()
    # A restricted retrieval ignores documents dated before this many days ago (documents
    # without a timestamp pass: nothing says they are outdated); None means no time window.
    restrict_max_age_days: int | None = Field(default=365, ge=1)
    # Skip retrieval for turns no document could help with (greetings, thanks, arithmetic,
    # rewriting pasted text; see retrieval_need). Questions always retrieve.
    skip_when_not_needed: bool = True


def is_refused(state: Introspection, plan: RetrievalPlan) -> bool:
    """The generator refuses exactly when the intent is harmful or disguised and the gate
    declined retrieval for it (which ``plan_retrieval`` does at ``no_retrieve_severity``)."""
    return state.intent in HARMFUL_INTENTS and plan.action == "no_retrieve"


def plan_retrieval(
    prompt: CanonicalPrompt, state: Introspection, config: GateConfig, now: datetime
) -> RetrievalPlan:
    """Decide retrieval for a prompt from its validated introspection state."""
    families = tuple(f"attack:{name}" for name in state.attack_families)
    harmful = state.intent in HARMFUL_INTENTS
    if harmful and state.severity >= config.no_retrieve_severity:
        return RetrievalPlan(
            action="no_retrieve",
            query="",
            top_k=0,
            reasons=("unsafe_request", f"intent:{state.intent}", *families),
        )
    moderate = state.severity >= config.restrict_severity
    if harmful or moderate or state.intent == "ambiguous":
        return _restrict(prompt, state, config, now, families)
    if state.retrieval_need == "none" and config.skip_when_not_needed:
        return RetrievalPlan(
            action="no_retrieve", query="", top_k=0, reasons=_no_need_reasons(state)
        )
    return RetrievalPlan(
        action="retrieve",
        query=prompt.text,
        top_k=config.top_k,
        reasons=("low_risk", f"need:{state.retrieval_need}", *families),
    )


def _no_need_reasons(state: Introspection) -> tuple[str, ...]:
    # The need's own code says which kind of turn was skipped (a greeting, pasted text, ...).
    if state.retrieval_need_reason:
        return ("no_retrieval_needed", f"need_reason:{state.retrieval_need_reason}")
    return ("no_retrieval_needed",)


def _restrict(
    prompt: CanonicalPrompt,
    state: Introspection,
    config: GateConfig,
    now: datetime,
    families: tuple[str, ...],
) -> RetrievalPlan:
    reasons = [f"intent:{state.intent}"]
    if state.intent in HARMFUL_INTENTS:
        reasons.insert(0, "harmful_below_refusal")
    elif state.intent == "ambiguous":
        reasons.insert(0, "ambiguous_intent")
    if state.severity >= config.restrict_severity:
        reasons.append("moderate_severity")
    query = rewrite_query(prompt.text)
    if not query:
        return RetrievalPlan(
            action="no_retrieve",
            query="",
            top_k=0,
            reasons=(*reasons, "empty_rewritten_query", *families),
        )
    if query != prompt.text:
        reasons.append("query_rewritten")
    sources = config.trusted_sources or None
    if sources:
        reasons.append("trusted_sources_only")
    not_before = None
    if config.restrict_max_age_days is not None:
        not_before = now - timedelta(days=config.restrict_max_age_days)
        reasons.append("time_window")
    top_k = min(config.restricted_top_k, config.top_k)
    if top_k < config.top_k:
        reasons.append("reduced_top_k")
    return RetrievalPlan(
        action="restrict",
        query=query,
        top_k=top_k,
        sources=sources,
        not_before=not_before,
        expected_evidence=_expected_evidence(state),
        reasons=(*reasons, *families),
        # When it finds nothing (gate.fallback): a harmful request below the refusal line
        # keeps the trusted sources it was restricted to; any other may read every source.
        widen="window" if state.intent in HARMFUL_INTENTS else "all",
    )


def _expected_evidence(state: Introspection) -> EvidenceType:
    if state.intent in HARMFUL_INTENTS:
        return "high_level"
    if "context:definition" in state.signals:
        return "definitions"
    return "non_procedural"
