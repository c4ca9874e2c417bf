"""What the runner retries when a retrieval kept too little (RAI-RAG's fallbacks, plus one
for restricted plans that find nothing). The evidence filter names the step
(``evidence.scoring.fallback_for``); this module builds the plan it stands for.

- ``restricted_retry``: an unrestricted retrieval is retried once as the gate's Restrict
  would run it: procedural triggers removed from the query, trusted sources only (when the
  policy names some), the restricted time window and top_k; the answer becomes a summary;
- ``rewrite``: the query is retried once with procedural triggers removed;
- ``widen``: a restricted retrieval that found nothing (no hits, or none kept) is retried
  once without its time window and, unless the request was judged harmful, without its
  trusted-source allowlist: the plain plan's sources, before the answer says the documents
  hold nothing;
- ``high_level`` (or a retry that would repeat itself): no retry; the decision becomes a
  high-level summary from whatever evidence was kept.

Why widening is safe, and where it stops. A restriction exists to keep a risky request's
evidence vetted and high level, not to hide what the index says on a subject: a plain
question the judge found ambiguous ("How many days do I have to get a refund?") must not
read "not in the documents" because the one document that answers it is undated, old, or
outside the trusted sources. So the widened plan drops only *where* it may read (sources,
dates) and keeps everything else the restriction imposed: the action stays ``restrict`` (the
decision stays a high-level ``summary``), the query stays stripped of procedural triggers,
top_k stays reduced, and the expected evidence stays what the gate asked for (never
``any``), so every widened hit is scored by the evidence filter with the stricter harm cost
(procedural harm, injected instructions and credentials still drop a chunk). Requests the
gate refused never get here: ``no_retrieve`` plans do not retrieve at all, so nothing widens
them. A harmful request below the refusal line (``widen: "window"``, set by the planner)
loses only its time window: the trusted sources are the operator's list of what such a
request may read, and widening them would undo the one constraint written for it. A
restricted retry of a plain plan is never widened (``widen: "none"``): the plain plan
already read every source and every date.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from sentinel_runtime.pipeline.gate import planner
from sentinel_runtime.pipeline.types import Introspection, RetrievalPlan


def fallback_plan(
    plan: RetrievalPlan,
    fallback: str | None,
    state: Introspection,
    config: planner.GateConfig,
    now: datetime,
) -> RetrievalPlan | None:
    """The next plan to try, or None to stop retrying."""
    reason = f"fallback:{fallback}"
    if fallback == "restricted_retry" and plan.action == "retrieve":
        age = config.restrict_max_age_days
        return RetrievalPlan(
            action="restrict",
            query=planner.rewrite_query(plan.query) or plan.query,
            top_k=min(config.restricted_top_k, plan.top_k),
            sources=config.trusted_sources or None,
            not_before=now - timedelta(days=age) if age is not None else None,
            expected_evidence="non_procedural",
            reasons=(*plan.reasons, reason),
        )
    if fallback == "widen" and plan.action == "restrict":
        return widened(plan)
    if fallback in ("rewrite", "restricted_retry"):
        query = planner.rewrite_query(plan.query)
        if query and query != plan.query:
            return dataclasses.replace(plan, query=query, reasons=(*plan.reasons, reason))
    return None


def widened(plan: RetrievalPlan) -> RetrievalPlan | None:
    """``plan`` without what its ``widen`` lets go (module docstring); None when that
    changes nothing."""
    sources = None if plan.widen == "all" else plan.sources
    if plan.widen == "none" or (sources == plan.sources and plan.not_before is None):
        return None
    reasons = [*plan.reasons, "fallback:widen"]
    if plan.not_before is not None:
        reasons.append("time_window_dropped")
    if sources != plan.sources:
        reasons.append("all_sources")
    return dataclasses.replace(
        plan, sources=sources, not_before=None, widen="none", reasons=tuple(reasons)
    )
