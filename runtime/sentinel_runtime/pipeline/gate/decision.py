"""Which of the three generation outcomes (plus the citation block) a request gets.

- ``refuse``: the introspection judged the intent harmful or disguised and the gate kept
  retrieval away from it (:func:`is_refused`; ``sentinel eval`` counts with the same rule);
- ``summary``: a high-level, non-operational answer: the gate restricted retrieval or asked
  for high-level evidence, or the evidence filter fell back to ``high_level``;
- ``answer``: a grounded answer from the kept evidence.
``block`` is set later, by citation validation.
"""

from __future__ import annotations

from sentinel_runtime.pipeline.gate.planner import is_refused
from sentinel_runtime.pipeline.types import Decision, EvidenceBundle, Introspection, RetrievalPlan

__all__ = ["decide", "is_refused"]


def decide(state: Introspection, plan: RetrievalPlan, bundle: EvidenceBundle | None) -> Decision:
    if is_refused(state, plan):
        return "refuse"
    if plan.action == "restrict" or plan.expected_evidence in ("high_level", "non_procedural"):
        return "summary"
    if bundle is not None and bundle.fallback == "high_level":
        return "summary"
    return "answer"
