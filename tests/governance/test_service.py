"""The facade as the runtime builds it: sessions only once opened, the rulebase's state across
policy versions, a fresh session for calls that name none."""

from __future__ import annotations

import asyncio

import pytest

from sentinel_runtime.governance.facts import SessionStore
from sentinel_runtime.governance.service import Governance, GovernanceError
from sentinel_runtime.guardrails.policy import parse_policy

POLICY = """\
scanners: []
tools:
  strict: true
  contexts:
    current_user: The logged-in user.
  facts: [member(User)]
  functions:
    weather: {url: "http://127.0.0.1:9/w"}
  guards:
    weather: {args: {city: C}, requires: "member(current_user), city(C)"}
  facts_note: null
"""
GOOD = POLICY.replace("  facts_note: null\n", "  askable:\n    city(C): Which city?\n")
BAD = POLICY.replace("  facts_note: null\n", "  askable:\n    city(C: Which city?\n")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _governance(clock: Clock | None = None) -> Governance:
    sessions = SessionStore(idle_seconds=60, clock=clock or Clock())
    governance = Governance(sessions, create_sessions=False)
    governance.load(parse_policy(GOOD), GOOD)
    return governance


def test_sessions_exist_once_opened_and_expire_when_idle() -> None:
    clock = Clock()
    governance = _governance(clock)
    with pytest.raises(GovernanceError) as unknown:
        governance.facts("s1")
    assert unknown.value.kind == "unknown_session"
    opened = governance.open_session("s1", contexts={"current_user": "u1"}, facts=["member(u1)"])
    assert opened["sessionId"] == "s1" and opened["contexts"] == {"current_user": "u1"}
    assert [f["fact"] for f in opened["facts"]] == ["member(u1)"]
    with pytest.raises(GovernanceError) as taken:
        governance.open_session("s1")
    assert taken.value.kind == "session_exists"

    clock.now += 59  # used within the idle time: kept, and the use counts as activity
    assert governance.facts("s1")["contexts"] == {"current_user": "u1"}
    clock.now += 59
    assert governance.facts("s1")["contexts"] == {"current_user": "u1"}
    clock.now += 61
    with pytest.raises(GovernanceError):
        governance.facts("s1")
    governance.open_session("s1")  # an expired id can be opened again, empty
    assert governance.facts("s1")["contexts"] == {}


def test_opening_a_session_is_all_or_nothing() -> None:
    governance = _governance()
    with pytest.raises(GovernanceError) as refused:
        governance.open_session("s1", contexts={"current_user": "u1"}, facts=["city(paris)"])
    assert refused.value.kind == "invalid_fact"
    with pytest.raises(GovernanceError):
        governance.facts("s1")
    made = governance.open_session()["sessionId"]
    assert made.startswith("gs-")
    governance.close_session(made)
    with pytest.raises(GovernanceError) as closed:
        governance.close_session(made)
    assert closed.value.kind == "unknown_session"


def test_status_names_the_active_version_and_a_rejected_one() -> None:
    governance = _governance()
    good, bad = parse_policy(GOOD), parse_policy(BAD)
    assert governance.status()["policyHash"] == good.sha256
    assert governance.status()["error"] is None

    governance.load(bad, BAD)
    status = governance.status()
    assert status["active"] is True and status["policyHash"] == good.sha256
    assert status["error"]["policyHash"] == bad.sha256
    line = BAD.splitlines().index("    city(C: Which city?") + 1
    lines = {(i["path"], i["line"], i["column"]) for i in status["error"]["issues"]}
    assert ("tools.askable.city(C", line, 5) in lines

    governance.load(parse_policy("scanners: []\n"), "scanners: []\n")
    assert governance.status() == {
        "active": False,
        "policyHash": None,
        "rulebaseId": None,
        "loadedAt": None,
        "error": None,
    }
    with pytest.raises(GovernanceError, match="the policy has no tools section") as off:
        governance.active()
    assert off.value.kind == "unavailable"


def test_calls_without_a_session_are_judged_in_a_fresh_one_kept_nowhere() -> None:
    governance = _governance()
    governance.open_session("s1", contexts={"current_user": "u1"}, facts=["member(u1)"])
    governance.answer("s1", "city(paris)")
    call = {"id": "1", "function": {"name": "weather", "arguments": '{"city": "paris"}'}}

    [in_session] = asyncio.run(governance.check_tool_calls("s1", [call]))
    [fresh] = asyncio.run(governance.check_tool_calls(None, [call]))

    assert in_session.allowed, in_session.reason
    assert not fresh.allowed and fresh.strict_violations
    assert len(governance.sessions) == 1


def test_an_undeclared_tool_cannot_be_invoked_and_a_bad_goal_has_its_column() -> None:
    governance = _governance()
    governance.open_session("s1")
    with pytest.raises(GovernanceError) as unknown:
        asyncio.run(governance.invoke("s1", "cancel", {}))
    assert unknown.value.kind == "unknown_tool"
    assert "known: weather" in str(unknown.value)
    with pytest.raises(GovernanceError) as bad:
        asyncio.run(governance.query("s1", "member(X), "))
    assert bad.value.kind == "invalid_goal"
    assert bad.value.column is not None and f"(column {bad.value.column})" in str(bad.value)
