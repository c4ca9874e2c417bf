"""The airline example (``samples/airline/``, the conversation of docs/governed-tool-calls.md)
end to end: the sample's tool server over real HTTP, the sample's rulebase, one
session driven the way the LLM agent would drive it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sentinel_runtime.governance.facts import SessionStore
from sentinel_runtime.governance.rulebase import Rulebase
from sentinel_runtime.governance.service import Governance, GovernanceError


def _governance(rulebase: Rulebase) -> Governance:
    governance = Governance(SessionStore())
    governance.rulebase = rulebase
    governance.bind("s1", "current_user", "u_123", trusted=True)
    return governance


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_focus_shift_resolves_the_same_symbolic_query_to_the_other_booking(
    airline_rulebase: Rulebase, airline_server: Any
) -> None:
    governance = _governance(airline_rulebase)
    listed = run(governance.query("s1", "user_booking(current_user, Booking)"))
    assert listed.proven
    assert sorted(a.bindings["Booking"] for a in listed.answers) == ["bk_456", "bk_789"]

    # Step 3-4 of the seed: the user means BK-789; the query names only the context.
    governance.bind("s1", "booking_of_interest", "bk_789")
    first = run(governance.query("s1", "booking_flight(booking_of_interest, Flight)"))
    assert [a.bindings for a in first.answers] == [{"Flight": "lh100"}]

    # Step 5-7: "what about my other booking?" -> rebind; the same query, the other booking.
    shifted = governance.bind("s1", "booking_of_interest", "bk_456")
    assert shifted["previous"] == "bk_789"
    second = run(governance.query("s1", "booking_flight(booking_of_interest, Flight)"))
    assert [a.bindings for a in second.answers] == [{"Flight": "ba200"}]
    summary = governance.summary("s1")
    assert "booking_of_interest = bk_456" in summary
    assert "booking_flight(bk_456, ba200)" in summary


def test_refund_of_the_cancelled_flight_is_allowed_after_the_user_confirms(
    airline_rulebase: Rulebase, airline_server: Any
) -> None:
    governance = _governance(airline_rulebase)
    run(governance.query("s1", "user_booking(current_user, B)"))
    governance.bind("s1", "booking_of_interest", "bk_456")

    before = run(governance.invoke("s1", "refund_booking", {"booking_id": "bk_456"}))
    assert not before.verdict.allowed
    assert before.verdict.failed == "user_confirms_refund(current_user, bk_456)"
    [ask] = before.verdict.blockers
    assert ask.kind == "ask" and ask.goal == "user_confirms_refund(u_123, bk_456)"
    assert ask.question == "Shall I refund booking bk_456 to your original payment method?"
    assert airline_server.airline.data["bookings"]["bk_456"]["refunded"] is False

    governance.answer("s1", "user_confirms_refund(current_user, booking_of_interest)")
    done = run(governance.invoke("s1", "refund_booking", {"booking_id": "bk_456"}))
    assert done.verdict.allowed, done.verdict.reason
    assert done.result["refund_id"] == "rf_bk_456"
    assert airline_server.airline.data["bookings"]["bk_456"]["refunded"] is True
    kinds = {step.goal: step.kind for step in done.verdict.trace}
    assert kinds["user_confirms_refund(u_123, bk_456)"] == "user"

    # The refund's own result is a fact now: a second refund is no longer eligible.
    again = run(governance.invoke("s1", "refund_booking", {"booking_id": "bk_456"}))
    assert not again.verdict.allowed
    assert again.verdict.failed == "eligible_for_refund(current_user, bk_456)"
    refunds = [c for c in airline_server.airline.calls if c[0] == "refund_booking"]
    assert refunds == [("refund_booking", {"booking_id": "bk_456"})]


def test_refund_of_the_booking_whose_flight_flies_is_blocked_with_the_reason(
    airline_rulebase: Rulebase, airline_server: Any
) -> None:
    governance = _governance(airline_rulebase)
    run(governance.query("s1", "user_booking(current_user, B)"))
    governance.answer("s1", "user_confirms_refund(u_123, bk_789)")  # even if the user says yes
    verdict = run(governance.check("s1", "refund_booking", {"booking_id": "bk_789"}))
    assert not verdict.allowed
    assert verdict.failed == "eligible_for_refund(current_user, bk_789)"
    assert (
        "flight_status(lh100, cancelled) does not hold: known flight_status(lh100, scheduled)"
        in (verdict.reason)
    )
    assert not [c for c in airline_server.airline.calls if c[0] == "refund_booking"]


def test_strict_mode_refuses_a_booking_id_the_llm_made_up(
    airline_rulebase: Rulebase, airline_server: Any
) -> None:
    governance = _governance(airline_rulebase)
    run(governance.query("s1", "user_booking(current_user, B)"))
    verdict = run(governance.check("s1", "refund_booking", {"booking_id": "bk_000"}))
    assert not verdict.allowed
    assert verdict.strict_violations == (
        "argument booking_id=bk_000 is not a value established by facts",
    )
    with pytest.raises(GovernanceError, match="strict mode"):
        governance.bind("s1", "booking_of_interest", "bk_000")


def test_data_tools_pass_their_guards_too(airline_rulebase: Rulebase, airline_server: Any) -> None:
    """Another user's booking: get_booking's guard (the booking must be the user's own)
    stops the solver's own data call, so the booking is never read."""
    governance = _governance(airline_rulebase)
    governance.sessions.get("s1").add("user_booking", ("u_999", "bk_111"), "seed")
    result = run(governance.query("s1", "booking_status(bk_111, Status)"))
    assert result.status == "blocked"
    [blocker] = result.blockers
    assert blocker.kind == "missing_data" and blocker.tool == "get_booking"
    assert "user_booking(current_user, bk_111) does not hold" in blocker.reason
    assert ("get_booking", {"booking_id": "bk_111"}) not in airline_server.airline.calls
