"""How the built-in judge's verdict and the guard model's combine (``understand.guarded``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sentinel_runtime.guard.config import GuardConfig
from sentinel_runtime.guard.types import GuardJudgement, GuardVerdict
from sentinel_runtime.pipeline.gate import planner
from sentinel_runtime.pipeline.types import BENIGN_REQUEST, Introspection
from sentinel_runtime.pipeline.understand import canonical, guarded, introspection
from sentinel_runtime.pipeline.understand.introspection import IntrospectionConfig

NOW = datetime(2026, 11, 28, tzinfo=UTC)
SETTINGS = IntrospectionConfig()
CONFIG = GuardConfig(url="http://guard:8000/v1", mode="uncertain")
PROMPT = canonical.canonicalise("How many days do I have to get a refund?")
REFUSED = Introspection(
    intent="harmful_procedural",
    risk_category="weapons",
    severity=0.9,
    confidence=0.9,
    retrieval_need="none",
)
AMBIGUOUS = Introspection(
    intent="ambiguous",
    risk_category="drugs",
    severity=0.45,
    confidence=0.5,
    retrieval_need="required",
)


def judged(
    unsafe: bool, *codes: str, mapped: tuple[str, ...] = (), p: float | None = None
) -> GuardJudgement:
    verdict = GuardVerdict(unsafe, tuple(codes), mapped, p)
    return GuardJudgement("prompt", "ok", "llama-guard-3", "lg3", verdict, 40.0)


def failed(outcome: str) -> GuardJudgement:
    return GuardJudgement("prompt", outcome, "llama-guard-3", "lg3", None, 5.0, outcome)  # type: ignore[arg-type]


def refused(state: Introspection) -> bool:
    plan = planner.plan_retrieval(PROMPT, state, planner.GateConfig(), NOW)
    return planner.is_refused(state, plan)


def test_an_unsafe_verdict_refuses_with_the_guards_category() -> None:
    benign = introspection.introspect(PROMPT, SETTINGS)
    state = guarded.combine(
        PROMPT, benign, judged(True, "S9", mapped=("weapons",)), CONFIG, SETTINGS
    )
    assert refused(state)
    assert state.risk_category == "weapons" and state.backend == "guard"
    assert "guard:unsafe" in state.signals and "guard_category:S9" in state.signals
    assert state.guard is not None and state.guard.verdict is not None


def test_an_unsafe_verdict_without_a_mapped_category_keeps_the_builtin_one_or_says_other() -> None:
    state = guarded.combine(PROMPT, AMBIGUOUS, judged(True), CONFIG, SETTINGS)
    assert state.risk_category == "drugs" and refused(state)
    state = guarded.combine(PROMPT, BENIGN_REQUEST, judged(True), CONFIG, SETTINGS)
    assert state.risk_category == "other"


def test_a_safe_verdict_clears_an_ambiguous_request() -> None:
    state = guarded.combine(PROMPT, AMBIGUOUS, judged(False, p=0.1), CONFIG, SETTINGS)
    assert state.intent == "benign" and state.severity == pytest.approx(0.1)
    plan = planner.plan_retrieval(PROMPT, state, planner.GateConfig(), NOW)
    assert plan.action == "retrieve"


def test_the_builtin_refusal_is_a_floor_unless_the_policy_lifts_it() -> None:
    state = guarded.combine(PROMPT, REFUSED, judged(False), CONFIG, SETTINGS)
    assert refused(state) and state.fallback_reason == "safety_floor"
    assert "guard:safe" in state.signals
    lifted = CONFIG.model_copy(update={"builtin_floor": False})
    state = guarded.combine(PROMPT, REFUSED, judged(False), lifted, SETTINGS)
    assert not refused(state) and state.intent == "benign"
    assert state.retrieval_need != "none"  # judged afresh: a question retrieves


@pytest.mark.parametrize("outcome", ["timeout", "error", "malformed", "circuit_open"])
def test_on_error_builtin_keeps_the_builtin_verdict(outcome: str) -> None:
    state = guarded.combine(PROMPT, AMBIGUOUS, failed(outcome), CONFIG, SETTINGS)
    assert state.intent == "ambiguous" and state.fallback_reason == f"guard_{outcome}"
    assert state.guard is not None and state.guard.outcome == outcome


def test_on_error_refuse_refuses_and_allow_proceeds_above_the_floor() -> None:
    refuse = CONFIG.model_copy(update={"on_error": "refuse"})
    state = guarded.combine(PROMPT, AMBIGUOUS, failed("timeout"), refuse, SETTINGS)
    assert refused(state) and "guard_unavailable" in state.signals
    allow = CONFIG.model_copy(update={"on_error": "allow"})
    state = guarded.combine(PROMPT, AMBIGUOUS, failed("timeout"), allow, SETTINGS)
    assert state.intent == "benign" and state.fallback_reason == "guard_timeout"
    state = guarded.combine(PROMPT, REFUSED, failed("timeout"), allow, SETTINGS)
    assert refused(state)  # allow never lifts the built-in floor


def test_the_mode_of_backend_guard_is_the_uncertain_band_unless_set() -> None:
    as_backend = IntrospectionConfig(backend="guard")
    assert guarded.mode_of(GuardConfig(url="http://g/v1"), as_backend) == "uncertain"
    assert guarded.mode_of(GuardConfig(url="http://g/v1", mode="off"), as_backend) == "off"
    assert guarded.mode_of(GuardConfig(url="http://g/v1"), SETTINGS) == "off"
