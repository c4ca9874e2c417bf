"""The rulebase follows the policy file's hot reload in the runtime's app (in process, its
reloader thread watching the file): a good tools section swaps in with the scanners, a bad one
keeps the previous rulebase (reported in the log, the metrics, ``GET /v1/governance/rulebase``
and ``GET /v1/guardrails/policy``), a policy without one turns governance off, and a bad one
with nothing before it refuses every tool call."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from support.airline import airline_policy
from support.fake_llm import tool_call
from support.inprocess import AirlineApp, airline_app
from support.runtime import free_port

GOOD_RULE = "        flight_status(Flight, cancelled),"
BAD_RULE = "        flight_state(Flight, cancelled),"
NO_TOOLS = "scanners:\n  - type: secrets\n"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _activate(airline: AirlineApp, text: str) -> None:
    """Write the policy as the kubelet would and wait until the runtime serves it."""
    airline.configmap.write(text)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if airline.get("/v1/guardrails/policy").json().get("sha256") == _sha(text):
            return
        time.sleep(0.05)
    raise AssertionError(f"the runtime never activated the policy:\n{airline.runtime.logs()}")


def _rulebase(airline: AirlineApp) -> dict[str, Any]:
    response = airline.get("/v1/governance/rulebase")
    assert response.status_code == 200, response.text
    return response.json()


def _where(text: str, fragment: str) -> tuple[int, int]:
    for number, line in enumerate(text.splitlines(), start=1):
        if fragment in line:
            return number, line.index(fragment) + 1
    raise AssertionError(fragment)


def _count(airline: AirlineApp, event: str) -> int:
    return airline.runtime.logs().count(f'"event": "{event}"')


def test_a_bad_tools_section_keeps_the_previous_rulebase_across_reloads(tmp_path) -> None:
    with airline_app(tmp_path) as airline:
        first = airline_policy(airline.tools.base_url)
        session = airline.open_session()
        assert _rulebase(airline)["policyHash"] == _sha(first)
        _a_bad_section_keeps_the_previous_rulebase(airline, session, first)
        _a_good_section_replaces_it(airline, session)
        _no_section_turns_governance_off(airline, session)
        _a_bad_section_with_nothing_before_refuses_every_call(airline, session)


def _a_bad_section_keeps_the_previous_rulebase(
    airline: AirlineApp, session: str, first: str
) -> None:
    # Rules naming an unknown predicate: the scanners swap, the rulebase does not.
    bad = first.replace(GOOD_RULE, BAD_RULE)
    assert bad != first
    _activate(airline, bad)
    state = _rulebase(airline)
    assert state["active"] is True
    assert state["policyHash"] == _sha(first)
    error = state["error"]
    assert error["policyHash"] == _sha(bad)
    line, column = _where(bad, "flight_state")
    [issue] = error["issues"]
    assert (issue["line"], issue["column"]) == (line, column)
    assert "flight_state" in issue["message"]
    assert airline.get("/v1/guardrails/policy").json()["governance"]["error"] == error
    assert _count(airline, "governance_rulebase_invalid") == 1
    assert airline.runtime.counted("governance_rulebase_loads_total", result="invalid") == 1
    assert airline.runtime.metric("governance_rulebase_rejected") == 1
    # The previous rulebase still judges: the session's refund of bk_789 stays blocked.
    airline.propose(tool_call("call_1", "refund_booking", {"booking_id": "bk_789"}))
    judged = airline.chat("Refund bk_789.", session).model_extra["sentinel"]["toolCalls"]
    assert judged[0]["failedPrecondition"] == "eligible_for_refund(current_user, bk_789)"


def _a_good_section_replaces_it(airline: AirlineApp, session: str) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    second = (
        "scanners:\n  - type: secrets\n"
        "tools:\n"
        "  functions:\n"
        "    ping:\n"
        "      description: A tool nobody serves.\n"
        "      parameters: {type: object, properties: {}}\n"
        f"      url: {dead}/ping\n"
    )
    _activate(airline, second)
    state = _rulebase(airline)
    assert (state["active"], state["policyHash"], state["error"]) == (True, _sha(second), None)
    tools = airline.get("/v1/governance/tools").json()["tools"]
    assert [t["function"]["name"] for t in tools] == ["ping"]
    assert airline.runtime.metric("governance_rulebase_rejected") == 0
    assert airline.runtime.counted("governance_rulebase_loads_total", result="success") == 2
    # Sessions outlive reloads; an allowed call that fails is a 502 with the verdict.
    failed = airline.post("/v1/governance/invoke", {"session_id": session, "tool": "ping"})
    assert failed.status_code == 502, failed.text
    assert failed.json()["error"]["kind"] == "transport"
    assert failed.json()["verdict"]["allowed"] is True
    assert failed.json()["detail"].startswith("ping was allowed but failed: ")


def _no_section_turns_governance_off(airline: AirlineApp, session: str) -> None:
    _activate(airline, NO_TOOLS)
    state = _rulebase(airline)
    assert (state["active"], state["policyHash"], state["error"]) == (False, None, None)
    off = airline.post(
        "/v1/governance/query", {"session_id": session, "goal": "user_booking(a, B)"}
    )
    assert off.status_code == 409
    assert off.json()["detail"] == "no rulebase is active: the policy has no tools section"
    assert airline.get("/v1/governance/tools").status_code == 409
    assert airline.runtime.counted("governance_rulebase_loads_total", result="none") == 1
    completion = airline.chat("Refund bk_789.", session)
    assert completion.choices[0].message.tool_calls[0].id == "call_1"
    [judged] = completion.model_extra["sentinel"]["toolCalls"]
    assert judged["allowed"] is True
    assert judged["reason"] == "ungoverned: the policy has no tools section"


def _a_bad_section_with_nothing_before_refuses_every_call(
    airline: AirlineApp, session: str
) -> None:
    bad = NO_TOOLS + "tools:\n  strict: maybe\n"
    _activate(airline, bad)
    state = _rulebase(airline)
    assert state["active"] is False
    assert state["error"]["issues"][0]["line"] == _where(bad, "strict")[0]
    refused = airline.post(
        "/v1/governance/query", {"session_id": session, "goal": "user_booking(a, B)"}
    )
    assert refused.status_code == 409
    assert "the tools section has 1 problem" in refused.json()["detail"]
    completion = airline.chat("Refund bk_789.", session)
    assert completion.choices[0].message.tool_calls is None
    [judged] = completion.model_extra["sentinel"]["toolCalls"]
    assert judged["allowed"] is False
    assert judged["reason"].startswith(
        "no rulebase is active: the policy's tools section is invalid"
    )
    assert _count(airline, "governance_rulebase_invalid") == 2
    assert airline.runtime.metric("governance_rulebase_rejected") == 1


def test_a_runtime_started_with_a_bad_tools_section_has_no_rulebase(tmp_path) -> None:
    def broken(text: str) -> str:
        return text.replace(GOOD_RULE, BAD_RULE)

    with airline_app(tmp_path, edit=broken) as airline:
        policy = airline.get("/v1/guardrails/policy").json()
        text = airline.configmap.policy_path.read_text()
        assert policy["sha256"] == _sha(text)  # the scanners serve; the rulebase cannot
        state = _rulebase(airline)
        assert (state["active"], state["policyHash"]) == (False, None)
        line, column = _where(text, "flight_state")
        opened = airline.post("/v1/governance/sessions", {"contexts": {"current_user": "u_1"}})
        assert opened.status_code == 409
        assert f"line {line}, column {column}" in opened.json()["detail"]
        airline.propose(tool_call("call_1", "get_flight", {"flight_id": "lh100"}))
        completion = airline.chat("Is LH100 on time?")
        assert completion.choices[0].message.tool_calls is None
        assert completion.choices[0].finish_reason == "stop"
        assert airline.tools.airline.calls == []
        assert _count(airline, "governance_rulebase_invalid") == 1
