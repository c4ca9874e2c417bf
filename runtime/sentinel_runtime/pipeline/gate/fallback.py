"""What the runner retries when the evidence filter dropped too much (RAI-RAG's fallbacks).

- ``restricted_retry``: an unrestricted retrieval is retried once as the gate's Restrict
  would run it: procedural triggers removed from the query, trusted sources only (when the
  policy names some), the restricted time window and top_k; the answer becomes a summary;
- ``rewrite``: the query is retried once with procedural triggers removed;
- ``high_level`` (or a retry that would repeat itself): no retry; the decision becomes a
  high-level summary from whatever evidence was kept.
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
    if fallback in ("rewrite", "restricted_retry"):
        query = planner.rewrite_query(plan.query)
        if query and query != plan.query:
            return dataclasses.replace(plan, query=query, reasons=(*plan.reasons, reason))
    return None
