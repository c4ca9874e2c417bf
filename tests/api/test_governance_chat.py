"""Tool calls proposed by the upstream LLM are judged by their guards before the client sees
them: the runtime's app (in process) with the airline sample's policy, the sample's real tool
server, a fake OpenAI-protocol upstream proposing the calls, and the official openai client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from support.fake_llm import FakeLLM, tool_call
from support.inprocess import AirlineApp, airline_app


@pytest.fixture(scope="module")
def airline_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AirlineApp]:
    with airline_app(tmp_path_factory.mktemp("governed-chat")) as runtime:
        yield runtime


@pytest.fixture
def airline(airline_server: AirlineApp) -> AirlineApp:
    airline_server.reset()
    return airline_server


def _audit(airline: AirlineApp, request_id: str) -> dict[str, Any]:
    [record] = airline.get("/v1/audit", request_id=request_id).json()["records"]
    return record


def test_a_refund_for_a_flight_that_flies_is_removed_and_explained(airline: AirlineApp) -> None:
    session = airline.open_session()
    airline.propose(tool_call("call_1", "refund_booking", {"booking_id": "bk_789"}))
    blocked_before = airline.runtime.metric(
        "governance_tool_calls_total", path="chat", verdict="blocked"
    )

    completion = airline.chat("Refund my booking BK-789, please.", session)

    choice = completion.choices[0]
    assert choice.message.tool_calls is None
    assert choice.finish_reason == "stop"
    assert choice.message.content == (
        "The call refund_booking was not made: precondition "
        "eligible_for_refund(current_user, bk_789) does not hold: disproven; "
        "flight_status(lh100, cancelled) does not hold: known flight_status(lh100, scheduled)"
    )
    sentinel = completion.model_extra["sentinel"]
    [judged] = sentinel["toolCalls"]
    assert judged == {
        "id": "call_1",
        "choice": 0,
        "name": "refund_booking",
        "arguments": {"booking_id": "bk_789"},
        "allowed": False,
        "reason": choice.message.content.removeprefix("The call refund_booking was not made: "),
        "blockers": [],
        "failedPrecondition": "eligible_for_refund(current_user, bk_789)",
    }
    # The guard fetched what it needed through the (guarded) data tools; nothing was refunded.
    names = [name for name, _ in airline.tools.airline.calls]
    assert "get_flight" in names and "refund_booking" not in names
    assert airline.tools.airline.data["bookings"]["bk_789"]["refunded"] is False

    record = _audit(airline, sentinel["requestId"])
    assert record["toolCalls"] == [{k: v for k, v in judged.items() if k != "arguments"}]
    after = airline.runtime.metric("governance_tool_calls_total", path="chat", verdict="blocked")
    assert after == blocked_before + 1
    assert '"event": "governance_tool_call_blocked"' in airline.runtime.logs()


def test_the_cancelled_flights_refund_passes_once_confirmed(airline: AirlineApp) -> None:
    session = airline.open_session()
    refund = tool_call("call_9", "refund_booking", {"booking_id": "bk_456"})
    airline.propose(refund, content="I will refund it.")

    # Not confirmed yet: the askable question is what unblocks it.
    asked = airline.chat("Refund my other booking.", session)
    assert asked.choices[0].message.tool_calls is None
    assert asked.choices[0].message.content == (
        "I will refund it.\n\nThe call refund_booking was not made: precondition "
        "user_confirms_refund(current_user, bk_456) does not hold: blocked; ask the user: "
        "Shall I refund booking bk_456 to your original payment method? "
        "(user_confirms_refund(u_123, bk_456))\n"
        "Ask the user: Shall I refund booking bk_456 to your original payment method?"
    )
    [judged] = asked.model_extra["sentinel"]["toolCalls"]
    [blocker] = judged["blockers"]
    assert blocker["kind"] == "ask" and blocker["goal"] == "user_confirms_refund(u_123, bk_456)"

    # "Yes, please": the application records the answer; the same proposal now passes as is.
    answered = airline.post(
        "/v1/governance/answer",
        {"session_id": session, "fact": "user_confirms_refund(current_user, bk_456)"},
    )
    assert answered.status_code == 200, answered.text
    passed = airline.chat("Yes, please.", session)
    choice = passed.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "I will refund it."
    assert [c.model_dump() for c in choice.message.tool_calls] == [refund]
    [judged] = passed.model_extra["sentinel"]["toolCalls"]
    assert judged["allowed"] is True and judged["reason"] == "every precondition holds"
    assert airline.refunds() == []  # checking a call never makes it

    # The client runs the allowed call through the guarded invocation.
    done = airline.post(
        "/v1/governance/invoke",
        {"session_id": session, "tool": "refund_booking", "arguments": {"booking_id": "bk_456"}},
    )
    assert done.status_code == 200, done.text
    assert done.json()["result"]["refund_id"] == "rf_bk_456"
    assert airline.refunds() == [("refund_booking", {"booking_id": "bk_456"})]


def test_allowed_calls_stay_and_only_the_blocked_one_is_removed(airline: AirlineApp) -> None:
    session = airline.open_session()
    keep = tool_call("call_a", "get_booking", {"booking_id": "bk_456"})
    drop = tool_call("call_b", "refund_booking", {"booking_id": "bk_789"})
    airline.propose(keep, drop)

    completion = airline.chat("Show bk_456 and refund bk_789.", session)

    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert [c.model_dump() for c in choice.message.tool_calls] == [keep]
    assert choice.message.content.startswith("The call refund_booking was not made: ")
    verdicts = {c["id"]: c["allowed"] for c in completion.model_extra["sentinel"]["toolCalls"]}
    assert verdicts == {"call_a": True, "call_b": False}


def test_strict_mode_refuses_an_argument_no_fact_establishes(airline: AirlineApp) -> None:
    session = airline.open_session()
    airline.propose(tool_call("call_x", "refund_booking", {"booking_id": "bk_999"}))

    completion = airline.chat("Refund bk_999.", session)

    assert completion.choices[0].message.tool_calls is None
    [judged] = completion.model_extra["sentinel"]["toolCalls"]
    assert judged["allowed"] is False
    assert judged["strictViolations"] == [
        "argument booking_id=bk_999 is not a value established by facts"
    ]
    assert judged["reason"].startswith("strict mode: argument booking_id=bk_999")
    # Refused before any data was fetched for it.
    assert airline.tools.airline.calls == [("list_bookings", {"user_id": "u_123"})]


def test_without_a_session_calls_are_judged_in_a_fresh_one(airline: AirlineApp) -> None:
    # Nothing is established in a fresh session: in strict mode every literal is refused.
    airline.propose(
        tool_call("call_1", "refund_booking", {"booking_id": "bk_456"}),
        tool_call("call_2", "get_weather", {"city": "paris"}),
        {"id": "call_3", "type": "function", "function": {"name": "get_flight", "arguments": "{"}},
    )
    completion = airline.chat("Refund bk_456.")
    assert completion.choices[0].message.tool_calls is None
    reasons = [c["reason"] for c in completion.model_extra["sentinel"]["toolCalls"]]
    assert reasons == [
        "strict mode: argument booking_id=bk_456 is not a value established by facts",
        "get_weather is not a declared function (strict mode)",
        "the arguments are not a JSON object",
    ]
    assert airline.tools.airline.calls == []
    assert "Sentinel governance session" not in json.dumps(airline.fake.requests[-1]["json"])


def test_the_sessions_facts_go_upstream_as_a_system_message(airline: AirlineApp) -> None:
    session = airline.open_session()
    tools = airline.get("/v1/governance/tools").json()

    completion = airline.chat("Which bookings do I have?", session, tools=tools["tools"])

    assert completion.choices[0].message.content == FakeLLM().content
    assert "toolCalls" not in completion.model_extra["sentinel"]
    sent = airline.fake.requests[-1]["json"]
    assert "sentinel_session" not in sent
    assert [t["function"]["name"] for t in sent["tools"]] == [
        "list_bookings",
        "get_booking",
        "get_flight",
        "refund_booking",
    ]
    system, user = sent["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert system["content"].startswith(f"Sentinel governance session {session}: ")
    assert "current_user = u_123" in system["content"]
    assert "user_booking(u_123, bk_789)  [list_bookings, valid " in system["content"]


def test_an_unknown_session_is_refused_before_the_upstream(airline: AirlineApp) -> None:
    asked = len(airline.fake.requests)
    with pytest.raises(openai.NotFoundError) as caught:
        airline.chat("hi", "never-opened")
    assert caught.value.response.json()["kind"] == "unknown_session"
    assert "unknown session 'never-opened'" in caught.value.response.json()["detail"]
    assert len(airline.fake.requests) == asked


def test_streaming_with_tools_is_still_refused(airline: AirlineApp) -> None:
    session = airline.open_session()
    with pytest.raises(openai.BadRequestError):
        airline.chat(
            "hi",
            session,
            stream=True,
            tools=[{"type": "function", "function": {"name": "get_flight", "parameters": {}}}],
        )
