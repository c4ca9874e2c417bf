"""Every ``/v1/governance`` endpoint over HTTP, errors included, against the runtime's app (in
process) with the airline sample's policy and its real tool server; the runtime requires an API
key."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from support.inprocess import AirlineApp, airline_app

API_KEY = "governance-test-key"


@pytest.fixture(scope="module")
def airline_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AirlineApp]:
    with airline_app(tmp_path_factory.mktemp("governance-api"), api_key=API_KEY) as runtime:
        yield runtime


@pytest.fixture
def airline(airline_server: AirlineApp) -> AirlineApp:
    airline_server.reset()
    return airline_server


def _ok(response: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    return response.json()


def _error(response: httpx.Response, status: int, kind: str | None = None) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    if kind is None:  # the request body's validation: FastAPI's list of problems
        assert body["detail"]
        return str(body["detail"])
    assert body["kind"] == kind
    assert isinstance(body["detail"], str)
    return body["detail"]


def test_the_focus_shift_conversation_of_the_seed(airline: AirlineApp) -> None:
    # Step 1: the application opens the session with the logged-in user.
    session = airline.open_session(list_bookings=False)
    # Steps 2-3: "check my booking BK-789": the agent lists the user's bookings, binds one.
    mine = _ok(
        airline.post(
            "/v1/governance/query", {"session_id": session, "goal": "user_booking(current_user, B)"}
        )
    )
    assert mine["status"] == "proven"
    assert [a["bindings"]["B"] for a in mine["answers"]] == ["bk_456", "bk_789"]
    bound = _ok(
        airline.post(
            "/v1/governance/context",
            {"session_id": session, "name": "booking_of_interest", "value": "bk_789"},
        )
    )
    assert bound == {
        "sessionId": session,
        "context": "booking_of_interest",
        "value": "bk_789",
        "previous": None,
    }
    # Step 4: a symbolic query: it names the context, never the booking.
    goal = "booking_flight(booking_of_interest, Flight), flight_status(Flight, Status)"
    first = _ok(airline.post("/v1/governance/query", {"session_id": session, "goal": goal}))
    assert first["status"] == "proven"
    assert [a["bindings"] for a in first["answers"]] == [{"Flight": "lh100", "Status": "scheduled"}]
    assert first["answers"][0]["trace"][0]["goal"] == "booking_flight(bk_789, lh100)"
    # Steps 5-6: "what about my other booking?": the agent rebinds the context.
    shifted = _ok(
        airline.post(
            "/v1/governance/context",
            {"session_id": session, "name": "booking_of_interest", "value": "bk_456"},
        )
    )
    assert shifted["previous"] == "bk_789"
    # Step 7: the same query resolves to the other booking.
    second = _ok(airline.post("/v1/governance/query", {"session_id": session, "goal": goal}))
    assert [a["bindings"] for a in second["answers"]] == [
        {"Flight": "ba200", "Status": "cancelled"}
    ]
    assert second["answers"][0]["trace"][0]["goal"] == "booking_flight(bk_456, ba200)"

    facts = _ok(airline.get("/v1/governance/facts", session_id=session))
    assert facts["contexts"] == {"current_user": "u_123", "booking_of_interest": "bk_456"}
    assert "booking_of_interest = bk_456" in facts["summary"]
    [status] = [f for f in facts["facts"] if f["fact"] == "flight_status(ba200, cancelled)"]
    assert status["provenance"]["source"] == "tool"
    assert status["provenance"]["tool"] == "get_flight"
    assert status["provenance"]["arguments"] == {"flight_id": "ba200"}
    assert 0 < status["expiresIn"] <= 60  # the sample's flight_status TTL


def test_query_results_blocked_and_disproven(airline: AirlineApp) -> None:
    session = airline.open_session()
    eligible = "user_booking(current_user, B), eligible_for_refund(current_user, B)"
    proven = _ok(airline.post("/v1/governance/query", {"session_id": session, "goal": eligible}))
    assert [a["bindings"] for a in proven["answers"]] == [{"B": "bk_456"}]
    assert proven["answers"][0]["trace"][1]["kind"] == "rule"

    refund = f"{eligible}, user_confirms_refund(current_user, B)"
    blocked = _ok(airline.post("/v1/governance/query", {"session_id": session, "goal": refund}))
    assert blocked["status"] == "blocked"
    [ask] = blocked["blockers"]
    assert ask["kind"] == "ask"
    assert ask["question"] == "Shall I refund booking bk_456 to your original payment method?"

    no = "eligible_for_refund(current_user, bk_789)"
    disproven = _ok(airline.post("/v1/governance/query", {"session_id": session, "goal": no}))
    assert disproven["status"] == "disproven"
    assert "known flight_status(lh100, scheduled)" in " ".join(disproven["failures"])

    unbound = "booking_status(booking_of_interest, S)"
    needs = _ok(airline.post("/v1/governance/query", {"session_id": session, "goal": unbound}))
    assert needs["status"] == "blocked"
    assert needs["blockers"][0]["kind"] == "unbound_context"


def test_answer_establishes_an_askable_fact(airline: AirlineApp) -> None:
    session = airline.open_session()
    airline.post(
        "/v1/governance/context",
        {"session_id": session, "name": "booking_of_interest", "value": "bk_456"},
    )
    answered = _ok(
        airline.post(
            "/v1/governance/answer",
            {
                "session_id": session,
                "fact": "user_confirms_refund(current_user, booking_of_interest)",
            },
        )
    )
    assert answered["fact"]["fact"] == "user_confirms_refund(u_123, bk_456)"
    assert answered["fact"]["provenance"]["source"] == "user"
    goal = "user_confirms_refund(current_user, booking_of_interest)"
    now = _ok(airline.post("/v1/governance/query", {"session_id": session, "goal": goal}))
    assert now["status"] == "proven"
    assert now["answers"][0]["trace"][0]["kind"] == "user"

    not_askable = airline.post(
        "/v1/governance/answer",
        {"session_id": session, "fact": "refunded(bk_456)"},
    )
    assert "refunded is not an askable predicate" in _error(not_askable, 422, "invalid_fact")
    not_ground = airline.post(
        "/v1/governance/answer",
        {"session_id": session, "fact": "user_confirms_refund(current_user, B)"},
    )
    assert "not ground" in _error(not_ground, 422, "invalid_fact")


def test_invoke_refuses_with_the_reason_and_calls_when_allowed(airline: AirlineApp) -> None:
    session = airline.open_session()
    refused = airline.post(
        "/v1/governance/invoke",
        {"session_id": session, "tool": "refund_booking", "arguments": {"booking_id": "bk_789"}},
    )
    detail = _error(refused, 403)
    assert detail.startswith("the guard of refund_booking refused the call: precondition ")
    verdict = refused.json()["verdict"]
    assert verdict["allowed"] is False
    assert verdict["failedPrecondition"] == "eligible_for_refund(current_user, bk_789)"
    assert "result" not in refused.json()
    assert airline.refunds() == []

    data = airline.post(
        "/v1/governance/invoke",
        {"session_id": session, "tool": "get_booking", "arguments": {"booking_id": "bk_789"}},
    )
    got = _ok(data)
    assert got["verdict"]["allowed"] is True
    assert got["result"]["flight_id"] == "lh100"
    # A data tool's result becomes facts of the session.
    facts = _ok(airline.get("/v1/governance/facts", session_id=session))
    assert "booking_flight(bk_789, lh100)" in [f["fact"] for f in facts["facts"]]

    others = airline.post(
        "/v1/governance/invoke",
        {"session_id": session, "tool": "list_bookings", "arguments": {"user_id": "u_999"}},
    )
    assert "strict mode: argument user_id=u_999" in _error(others, 403)


def test_tools_are_openai_function_schemas(airline: AirlineApp) -> None:
    listed = _ok(airline.get("/v1/governance/tools"))
    assert listed["strict"] is True
    names = [t["function"]["name"] for t in listed["tools"]]
    assert names == ["list_bookings", "get_booking", "get_flight", "refund_booking"]
    refund = listed["tools"][3]
    assert refund == {
        "type": "function",
        "function": {
            "name": "refund_booking",
            "description": "Refund a booking to the original payment method.",
            "parameters": {
                "type": "object",
                "properties": {"booking_id": {"type": "string"}},
                "required": ["booking_id"],
            },
        },
    }


def test_the_rulebase_and_the_policy_name_the_same_version(airline: AirlineApp) -> None:
    rulebase = _ok(airline.get("/v1/governance/rulebase"))
    policy = _ok(airline.get("/v1/guardrails/policy"))
    assert rulebase["active"] is True and rulebase["error"] is None
    assert rulebase["policyHash"] == policy["sha256"]
    assert policy["governance"]["policyHash"] == policy["sha256"]
    assert rulebase["rulebase"]["strict"] is True
    assert rulebase["rulebase"]["guards"]["get_booking"] == "user_booking(current_user, Booking)"
    assert '"event": "governance_rulebase_loaded"' in airline.runtime.logs()
    assert airline.runtime.counted("governance_rulebase_loads_total", result="success") == 1


def test_sessions_open_once_and_close(airline: AirlineApp) -> None:
    opened = _ok(airline.post("/v1/governance/sessions", {}), 201)
    session = opened["sessionId"]
    assert session.startswith("gs-")
    assert opened["contexts"] == {} and opened["facts"] == []
    assert "current_user: unbound" in opened["summary"]

    named = airline.post(
        "/v1/governance/sessions", {"session_id": "dup", "contexts": {"current_user": "u_1"}}
    )
    _ok(named, 201)
    again = airline.post("/v1/governance/sessions", {"session_id": "dup"})
    assert "exists already" in _error(again, 409, "session_exists")

    unknown_context = airline.post(
        "/v1/governance/sessions", {"session_id": "nope", "contexts": {"flight": "lh100"}}
    )
    assert "unknown context 'flight'" in _error(unknown_context, 404, "unknown_context")
    assert airline.get("/v1/governance/facts", session_id="nope").status_code == 404
    not_a_fact = airline.post(
        "/v1/governance/sessions", {"session_id": "nope", "facts": ["refunded(bk_1)"]}
    )
    assert "not a declared fact predicate" in _error(not_a_fact, 422, "invalid_fact")
    assert airline.get("/v1/governance/facts", session_id="nope").status_code == 404  # no half
    bad_value = airline.post(
        "/v1/governance/sessions", {"session_id": "nope", "contexts": {"current_user": {"a": 1}}}
    )
    _error(bad_value, 400)

    assert airline.delete(f"/v1/governance/sessions/{session}").status_code == 204
    gone = airline.get("/v1/governance/facts", session_id=session)
    assert f"unknown session {session!r}" in _error(gone, 404, "unknown_session")
    _error(airline.delete(f"/v1/governance/sessions/{session}"), 404, "unknown_session")


@pytest.mark.parametrize(
    ("goal", "column", "fragment"),
    [
        pytest.param("user_booking(current_user, B", 29, "expected ')'", id="syntax"),
        pytest.param(
            "user_booking(current_user, B), bogus(B)",
            32,
            "unknown predicate bogus",
            id="unknown-predicate",
        ),
        pytest.param("user_booking(current_user)", 1, "has 2 arguments", id="arity"),
        pytest.param("not refunded(B)", 1, "needs its variables bound", id="unsafe"),
    ],
)
def test_a_goal_that_cannot_be_solved_is_422_with_its_column(
    airline: AirlineApp, goal: str, column: int, fragment: str
) -> None:
    session = airline.open_session(list_bookings=False)
    response = airline.post("/v1/governance/query", {"session_id": session, "goal": goal})
    detail = _error(response, 422, "invalid_goal")
    assert fragment in detail and f"(column {column})" in detail
    assert response.json()["column"] == column


def test_unknown_sessions_tools_and_contexts_are_404(airline: AirlineApp) -> None:
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("post", "/v1/governance/query", {"goal": "user_booking(current_user, B)"}),
        ("post", "/v1/governance/context", {"name": "booking_of_interest", "value": "bk_1"}),
        ("post", "/v1/governance/answer", {"fact": "user_confirms_refund(u_123, bk_456)"}),
        ("post", "/v1/governance/invoke", {"tool": "get_flight", "arguments": {}}),
    ]
    for method, path, body in calls:
        response = getattr(airline, method)(path, {"session_id": "ghost", **body})
        _error(response, 404, "unknown_session")
    _error(airline.get("/v1/governance/facts", session_id="ghost"), 404, "unknown_session")

    session = airline.open_session(list_bookings=False)
    tool = airline.post("/v1/governance/invoke", {"session_id": session, "tool": "cancel_booking"})
    assert "unknown tool 'cancel_booking'" in _error(tool, 404, "unknown_tool")
    context = airline.post(
        "/v1/governance/context", {"session_id": session, "name": "flight", "value": "lh100"}
    )
    assert "known: booking_of_interest, current_user" in _error(context, 404, "unknown_context")
    # Strict mode: the agent cannot rebind the focus to a value no fact establishes.
    invented = airline.post(
        "/v1/governance/context",
        {"session_id": session, "name": "booking_of_interest", "value": "bk_999"},
    )
    assert "strict mode" in _error(invented, 403, "not_established")


def test_invalid_bodies_are_400_in_the_one_error_shape(airline: AirlineApp) -> None:
    for path, body in [
        ("/v1/governance/query", {"session_id": "s"}),
        ("/v1/governance/query", {"session_id": "", "goal": "x(a)"}),
        ("/v1/governance/invoke", {"session_id": "s", "tool": "get_flight", "arguments": [1]}),
        ("/v1/governance/context", {"session_id": "s", "name": "n", "value": None}),
    ]:
        response = airline.post(path, body)
        assert response.status_code == 400, (path, body)
        assert response.json()["detail"] == response.json()["error"]["message"]
    assert airline.get("/v1/governance/facts").status_code == 400


def test_every_governance_route_needs_the_api_key(airline: AirlineApp) -> None:
    for method, path in [
        ("GET", "/v1/governance/rulebase"),
        ("GET", "/v1/governance/tools"),
        ("GET", "/v1/governance/facts?session_id=s"),
        ("POST", "/v1/governance/sessions"),
        ("DELETE", "/v1/governance/sessions/s"),
        ("POST", "/v1/governance/query"),
        ("POST", "/v1/governance/context"),
        ("POST", "/v1/governance/answer"),
        ("POST", "/v1/governance/invoke"),
    ]:
        response = airline.runtime.client.request(method, path, json={})
        assert response.status_code == 401, (method, path)
        assert response.json()["detail"] == "missing or invalid API key"
        assert response.json()["error"]["type"] == "authentication_error"
