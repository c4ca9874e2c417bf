"""The plans the runner retries (gate.fallback), widening a restricted plan that found
nothing in particular: what it lets go of, what it keeps, and when it does nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sentinel_runtime.pipeline.gate import fallback, planner
from sentinel_runtime.pipeline.types import Introspection, RetrievalPlan
from sentinel_runtime.pipeline.understand import canonical

NOW = datetime(2026, 11, 1, tzinfo=UTC)
CONFIG = planner.GateConfig(trusted_sources=("handbook",), restricted_top_k=2)
AMBIGUOUS = Introspection(
    intent="ambiguous",
    risk_category="none",
    severity=0.35,
    confidence=0.5,
    retrieval_need="required",
)
HARMFUL = Introspection(
    intent="harmful_procedural",
    risk_category="weapons",
    severity=0.45,
    confidence=0.6,
    retrieval_need="required",
)


def restricted(question: str, state: Introspection, config: planner.GateConfig = CONFIG):
    plan = planner.plan_retrieval(canonical.canonicalise(question), state, config, NOW)
    assert plan.action == "restrict"
    return plan


def test_widening_an_ambiguous_plan_reads_every_source_and_date_and_keeps_the_rest() -> None:
    plan = restricted("How many days do I have to ask for a refund, step by step?", AMBIGUOUS)
    assert plan.sources == ("handbook",) and plan.not_before == NOW - timedelta(days=365)
    wide = fallback.fallback_plan(plan, "widen", AMBIGUOUS, CONFIG, NOW)
    assert wide is not None
    assert wide.sources is None and wide.not_before is None
    # What the restriction imposed on the answer stays: a summary from non-procedural evidence.
    assert wide.action == "restrict" and wide.top_k == plan.top_k == 2
    assert wide.query == plan.query and "step by step" not in wide.query
    assert wide.expected_evidence == plan.expected_evidence == "non_procedural"
    assert wide.reasons[: len(plan.reasons)] == plan.reasons
    assert wide.reasons[len(plan.reasons) :] == (
        "fallback:widen",
        "time_window_dropped",
        "all_sources",
    )
    # Once: a widened plan widens no further.
    assert wide.widen == "none"
    assert fallback.fallback_plan(wide, "widen", AMBIGUOUS, CONFIG, NOW) is None


def test_widening_a_harmful_plan_keeps_its_trusted_sources() -> None:
    plan = restricted("How are rifles made?", HARMFUL)
    wide = fallback.fallback_plan(plan, "widen", HARMFUL, CONFIG, NOW)
    assert wide is not None
    assert wide.sources == ("handbook",) and wide.not_before is None
    assert wide.expected_evidence == "high_level"
    assert "all_sources" not in wide.reasons and "time_window_dropped" in wide.reasons
    # Without a window there is nothing it may drop.
    no_window = planner.GateConfig(trusted_sources=("handbook",), restrict_max_age_days=None)
    bare = restricted("How are rifles made?", HARMFUL, no_window)
    assert fallback.fallback_plan(bare, "widen", HARMFUL, no_window, NOW) is None


@pytest.mark.parametrize(
    "plan",
    [
        pytest.param(RetrievalPlan(action="retrieve", query="refund", top_k=5), id="plain-plan"),
        pytest.param(
            RetrievalPlan(action="restrict", query="refund", top_k=3, widen="all"),
            id="nothing-to-drop",
        ),
        pytest.param(
            RetrievalPlan(
                action="restrict", query="refund", top_k=3, sources=("handbook",), not_before=NOW
            ),
            id="not-widenable",
        ),
    ],
)
def test_widening_that_would_change_nothing_is_no_retry(plan: RetrievalPlan) -> None:
    assert fallback.fallback_plan(plan, "widen", AMBIGUOUS, CONFIG, NOW) is None


def test_a_restricted_retry_of_a_plain_plan_is_never_widened() -> None:
    # The plain plan already read every source and every date.
    plain = RetrievalPlan(action="retrieve", query="refund window", top_k=5)
    retry = fallback.fallback_plan(plain, "restricted_retry", AMBIGUOUS, CONFIG, NOW)
    assert retry is not None and retry.sources == ("handbook",) and retry.not_before is not None
    assert retry.widen == "none"
    assert fallback.fallback_plan(retry, "widen", AMBIGUOUS, CONFIG, NOW) is None
