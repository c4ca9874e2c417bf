"""The fact store (TTL, provenance, derived facts, sessions) and the tool transports (typed
errors from a real loopback server; MCP only when the package is installed)."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from sentinel_runtime.governance.facts import FactStore, SessionStore
from sentinel_runtime.governance.guard import check_call
from sentinel_runtime.governance.rulebase import Function, parse_rulebase
from sentinel_runtime.governance.service import Governance
from sentinel_runtime.governance.tools import ToolClient, ToolError
from support.tool_peer import ToolPeer


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_facts_expire_and_what_rests_on_them_goes_too() -> None:
    clock = Clock()
    store = FactStore(clock=clock)
    store.add(
        "status",
        ("f1", "cancelled"),
        "tool",
        ttl=60,
        tool="get_flight",
        call_args={"flight_id": "f1"},
    )
    store.add("owner", ("b1", "u1"), "user")
    store.add_derived(
        "refundable",
        ("b1",),
        [("status", ("f1", "cancelled")), ("owner", ("b1", "u1"))],
        ["refunded"],
        "rb",
    )
    assert store.derived("refundable", ("b1",), "rb") is not None
    assert store.derived("refundable", ("b1",), "another rulebase") is None
    fact = store.get("status", ("f1", "cancelled"))
    assert fact is not None and fact.provenance.tool == "get_flight"
    assert fact.provenance.call_args == {"flight_id": "f1"}
    clock.now = 61
    assert store.get("status", ("f1", "cancelled")) is None
    assert store.derived("refundable", ("b1",), "rb") is None
    assert store.purge() == 1 and len(store) == 1

    store.add_derived("mine", ("b1",), [("owner", ("b1", "u1"))], ["refunded"], "rb")
    store.add("refunded", ("b1",), "tool")  # a fact it negated appears
    assert store.derived("mine", ("b1",), "rb") is None
    store.add_derived("mine", ("b1",), [("owner", ("b1", "u1"))], [], "rb")
    store.retract("owner", ("b1", "u1"))
    assert store.derived("mine", ("b1",), "rb") is None


def test_a_new_tool_answer_replaces_the_old_one_for_the_same_input() -> None:
    store = FactStore(clock=Clock())
    store.record_call(("status", 0, ("f1",)), "get_flight", {"id": "f1"}, [("f1", "scheduled")], 60)
    store.record_call(("status", 0, ("f1",)), "get_flight", {"id": "f1"}, [("f1", "delayed")], 60)
    assert [str(f) for f in store.facts()] == ["status(f1, delayed)"]


def test_summary_and_established_values() -> None:
    store = FactStore(clock=Clock())
    store.add("flight_status", ("ba200", "cancelled"), "tool", ttl=90, tool="get_flight")
    store.bind("booking_of_interest", "bk_456")
    text = store.summary({"booking_of_interest": "", "flight_of_interest": ""}, {"ok(B)": "OK?"})
    assert text.splitlines() == [
        "Context:",
        "  booking_of_interest = bk_456",
        "  flight_of_interest: unbound",
        "Facts:",
        "  flight_status(ba200, cancelled)  [get_flight, valid 1m30s]",
        "Askable (ask the user, then assert the answer):",
        "  ok(B): OK?",
    ]
    assert store.established_values() == {"bk_456", "ba200", "cancelled"}


def test_sessions_are_bounded_and_expire_when_idle() -> None:
    clock = Clock()
    sessions = SessionStore(max_sessions=2, idle_seconds=100, clock=clock)
    first = sessions.get("a")
    sessions.get("b")
    assert sessions.get("a") is first  # a is now the most recent
    sessions.get("c")  # evicts b, the least recently used
    assert sessions.peek("b") is None and sessions.peek("a") is first
    clock.now = 150
    assert sessions.peek("a") is None and len(sessions) == 0


def _function(peer: ToolPeer, **extra: object) -> Function:
    return Function("t", "", {}, url=f"{peer.url}/tools/t", **extra)  # type: ignore[arg-type]


def test_http_tool_errors_are_typed() -> None:
    peer = ToolPeer(handlers={"t": lambda args: {"echo": args}}).start()
    client = ToolClient()

    async def call(function: Function) -> object:
        return await client.call(function, {"x": 1})

    try:
        assert asyncio.run(call(_function(peer))) == {"echo": {"x": 1}}
        peer.status = 503
        with pytest.raises(ToolError) as failed:
            asyncio.run(call(_function(peer)))
        assert (failed.value.kind, failed.value.status) == ("http", 503)
        peer.status, peer.raw_body = 200, b"not json"
        with pytest.raises(ToolError) as bad:
            asyncio.run(call(_function(peer)))
        assert bad.value.kind == "invalid_json"
        peer.raw_body, peer.delays["t"] = None, 0.5
        with pytest.raises(ToolError) as slow:
            asyncio.run(call(_function(peer, timeout=0.1)))
        assert slow.value.kind == "timeout"
    finally:
        peer.stop()
    with pytest.raises(ToolError) as gone:
        asyncio.run(call(_function(peer)))
    assert gone.value.kind == "transport"
    with pytest.raises(ToolError) as none:
        asyncio.run(call(Function("client_side", "", {})))
    assert none.value.kind == "no_transport"


@pytest.mark.skipif(
    importlib.util.find_spec("mcp") is not None, reason="checks the behaviour without mcp"
)
def test_an_mcp_function_without_the_package_is_a_clear_error() -> None:
    function = Function("t", "", {}, mcp={"command": "true"})
    with pytest.raises(ToolError) as caught:
        asyncio.run(ToolClient().call(function, {}))
    assert caught.value.kind == "mcp_unavailable"
    assert "pip install mcp" in str(caught.value)


def test_ungoverned_and_unguarded_tools() -> None:
    rulebase = parse_rulebase({"functions": {"search": {"url": "http://127.0.0.1:9/s"}}})
    store = FactStore()
    allowed = asyncio.run(check_call(rulebase, store, "search", {"q": "x"}))
    assert allowed.allowed and allowed.reason == "no guard: allowed"
    other = asyncio.run(check_call(rulebase, store, "weather", {}))
    assert other.allowed and "ungoverned" in other.reason
    strict = parse_rulebase({"strict": True, "functions": {"search": {"url": "http://x/s"}}})
    refused = asyncio.run(check_call(strict, store, "weather", {}))
    assert not refused.allowed and "not a declared function" in refused.reason


def test_openai_tool_calls_are_checked_one_by_one() -> None:
    governance = Governance()
    governance.rulebase = parse_rulebase(
        {
            "facts": ["allowed_city(C)"],
            "functions": {"weather": {"url": "http://127.0.0.1:9/w"}},
            "guards": {"weather": {"args": {"city": "C"}, "requires": "allowed_city(C)"}},
        }
    )
    governance.seed("s", "allowed_city(paris)")
    calls = [
        {
            "id": "1",
            "type": "function",
            "function": {"name": "weather", "arguments": '{"city": "paris"}'},
        },
        {
            "id": "2",
            "type": "function",
            "function": {"name": "weather", "arguments": '{"city": "tokyo"}'},
        },
        {"id": "3", "type": "function", "function": {"name": "weather", "arguments": "{oops"}},
    ]
    verdicts = asyncio.run(governance.check_tool_calls("s", calls))
    assert [v.allowed for v in verdicts] == [True, False, False]
    assert verdicts[1].failed == "allowed_city(tokyo)"
    assert verdicts[1].describe()["failedPrecondition"] == "allowed_city(tokyo)"
    assert verdicts[2].reason == "the arguments are not a JSON object"
