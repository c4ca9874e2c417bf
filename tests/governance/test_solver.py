"""The solver: recursion and cycles, stratified negation, tools before questions, TTL expiry
and re-fetch, bounds, and independent tool calls made concurrently (over real loopback HTTP)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from sentinel_runtime.governance.facts import FactStore
from sentinel_runtime.governance.guard import GuardedTools
from sentinel_runtime.governance.rulebase import Rulebase, parse_rulebase
from sentinel_runtime.governance.solver import Budget, solve
from sentinel_runtime.governance.tools import ToolClient
from support.tool_peer import INDEPENDENT_TOOLS, ToolPeer, independent_tools_section


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def graph_store(edges: list[tuple[str, str]]) -> FactStore:
    store = FactStore(clock=Clock())
    for a, b in edges:
        store.add("edge", (a, b))
    return store


GRAPH = {
    "facts": ["edge(A, B)", "node(N)"],
    "rules": """
        right(A, B) :- edge(A, B).
        right(A, C) :- edge(A, B), right(B, C).
        left(A, B) :- edge(A, B).
        left(A, C) :- left(A, B), edge(B, C).
        even(A, A) :- node(A).
        even(A, C) :- odd(A, B), edge(B, C).
        odd(A, C) :- even(A, B), edge(B, C).
        unreachable(A, B) :- node(A), node(B), not right(A, B).
    """,
}
CYCLE = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("e", "e")]


@pytest.mark.parametrize("predicate", ["right", "left"])
def test_recursion_over_a_cycle_terminates_with_every_answer(predicate: str) -> None:
    rulebase = parse_rulebase(GRAPH)
    store = graph_store(CYCLE)
    result = run(solve(rulebase, store, f"{predicate}(a, X)", max_answers=50, remember=False))
    assert result.proven
    assert sorted(a.bindings["X"] for a in result.answers) == ["a", "b", "c", "d"]
    both = run(solve(rulebase, store, f"{predicate}(X, Y)", max_answers=50, remember=False))
    pairs = sorted((a.bindings["X"], a.bindings["Y"]) for a in both.answers)
    assert len(pairs) == 3 * 4 + 1  # a, b, c reach a, b, c, d; e reaches itself
    assert run(solve(rulebase, store, f"{predicate}(d, X)", remember=False)).status == "disproven"


def test_mutual_recursion() -> None:
    rulebase = parse_rulebase(GRAPH)
    store = graph_store([("n0", "n1"), ("n1", "n2"), ("n2", "n3"), ("n3", "n4")])
    for i in range(5):
        store.add("node", (f"n{i}",))
    result = run(solve(rulebase, store, "even(n0, X)", max_answers=10, remember=False))
    assert sorted(a.bindings["X"] for a in result.answers) == ["n0", "n2", "n4"]
    odd = run(solve(rulebase, store, "odd(n0, X)", max_answers=10, remember=False))
    assert sorted(a.bindings["X"] for a in odd.answers) == ["n1", "n3"]


def test_stratified_negation() -> None:
    rulebase = parse_rulebase(GRAPH)
    store = graph_store(CYCLE)
    for name in "abcde":
        store.add("node", (name,))
    result = run(solve(rulebase, store, "unreachable(a, X)", max_answers=10))
    assert sorted(a.bindings["X"] for a in result.answers) == ["e"]
    [answer] = result.answers
    assert [s.kind for s in answer.trace[0].children] == ["seed", "seed", "not"]
    assert run(solve(rulebase, store, "unreachable(a, d)")).status == "disproven"


def test_a_derivation_trace_names_rules_and_facts() -> None:
    rulebase = parse_rulebase(GRAPH)
    store = graph_store([("a", "b"), ("b", "c")])
    result = run(solve(rulebase, store, "right(a, c)"))
    text = result.answers[0].trace[0].render()
    assert text.splitlines()[0] == ("right(a, c)  [rule: right(A, C) :- edge(A, B), right(B, C).]")
    assert "    edge(b, c)  [seed: seed]" in text
    # The proof is remembered: the same goal is now a derived fact resting on those edges.
    assert sorted(str(f) for f in store.derived_facts()) == ["right(a, c)", "right(b, c)"]
    store.retract("edge", ("b", "c"))
    assert store.derived_facts() == []


def test_comparisons() -> None:
    rulebase = parse_rulebase(
        {"facts": ["price(Item, Amount)"], "rules": "pricey(I) :- price(I, A), A > 100."}
    )
    store = FactStore(clock=Clock())
    for item, amount in [("tv", 499.0), ("cable", 9), ("name", "free")]:
        store.add("price", (item, amount))
    result = run(solve(rulebase, store, "pricey(I)", max_answers=5))
    assert [a.bindings for a in result.answers] == [{"I": "tv"}]
    assert run(solve(rulebase, store, "price(I, A), A = 9")).answers[0].bindings == {
        "I": "cable",
        "A": 9,
    }


def test_an_unbound_context_is_a_blocker_and_a_bound_one_is_its_value() -> None:
    rulebase = parse_rulebase({**GRAPH, "contexts": {"start": "the node we talk about"}})
    store = graph_store([("a", "b")])
    result = run(solve(rulebase, store, "right(start, X)"))
    assert result.status == "blocked"
    assert [(b.kind, b.goal, b.reason) for b in result.blockers] == [
        ("unbound_context", "start", "the node we talk about")
    ]
    store.bind("start", "a")
    assert run(solve(rulebase, store, "right(start, X)")).answers[0].bindings == {"X": "b"}


# -- with tools ------------------------------------------------------------------------------


FLIGHTS = {
    "contexts": {"me": ""},
    "askable": {"confirms(User, Booking)": "Refund {Booking}?"},
    "ttl": {"status": 60},
    "functions": {
        "booking": {"url": "/tools/booking"},
        "flight": {"url": "/tools/flight"},
    },
    "bindings": [
        {
            "fact": "booking_flight(B, F)",
            "tool": "booking",
            "args": {"id": "B"},
            "extract": {"F": "$.flight"},
        },
        {"fact": "owner(B, U)", "tool": "booking", "args": {"id": "B"}, "extract": {"U": "$.user"}},
        {
            "fact": "status(F, S)",
            "tool": "flight",
            "args": {"id": "F"},
            "extract": {"S": "$.status"},
        },
    ],
    "rules": """
        cancelled(B) :- booking_flight(B, F), status(F, cancelled).
        refundable(U, B) :- confirms(U, B), owner(B, U), cancelled(B).
    """,
}


@pytest.fixture
def peer() -> Iterator[ToolPeer]:
    flights = {"f1": "cancelled", "f2": "scheduled"}
    bookings = {"b1": {"flight": "f1", "user": "u1"}, "b2": {"flight": "f2", "user": "u1"}}
    tools = ToolPeer(
        handlers={
            "booking": lambda args: bookings[args["id"]],
            "flight": lambda args: {"status": flights[args["id"]]},
        }
    ).start()
    tools.flights = flights  # type: ignore[attr-defined]
    yield tools
    tools.stop()


def flights_rulebase(peer: ToolPeer, **extra: Any) -> Rulebase:
    return parse_rulebase({**FLIGHTS, "baseUrl": peer.url, **extra})


def guarded(rulebase: Rulebase, store: FactStore) -> Any:
    return GuardedTools(rulebase, store, ToolClient()).solver_invoker()


def test_dependent_data_is_fetched_pass_by_pass(peer: ToolPeer) -> None:
    rulebase = flights_rulebase(peer)
    store = FactStore(clock=Clock())
    result = run(solve(rulebase, store, "cancelled(b1)", guarded(rulebase, store)))
    assert result.proven
    assert (result.tool_calls, result.passes) == (2, 3)  # booking, then its flight, then proof
    assert peer.calls == [("booking", {"id": "b1"}), ("flight", {"id": "f1"})]
    assert run(solve(rulebase, store, "cancelled(b2)", guarded(rulebase, store))).status == (
        "disproven"
    )


def test_tools_come_before_questions(peer: ToolPeer) -> None:
    rulebase = flights_rulebase(peer)
    store = FactStore(clock=Clock())
    store.bind("me", "u1")
    invoke = guarded(rulebase, store)
    ask = run(solve(rulebase, store, "refundable(me, b1)", invoke))
    assert ask.status == "blocked"
    assert [(b.kind, b.goal, b.question) for b in ask.blockers] == [
        ("ask", "confirms(u1, b1)", "Refund b1?")
    ]
    # The askable comes first in the rule, yet the tools were asked before the user was.
    assert {name for name, _ in peer.calls} == {"booking", "flight"}
    # Where the data says no, there is nothing to ask.
    no = run(solve(rulebase, store, "refundable(me, b2)", invoke))
    assert no.status == "disproven" and no.blockers == ()
    assert "status(f2, cancelled) does not hold: known status(f2, scheduled)" in no.failures
    store.add("confirms", ("u1", "b1"), "user")
    assert run(solve(rulebase, store, "refundable(me, b1)", invoke)).proven


def test_expired_tool_facts_are_fetched_again(peer: ToolPeer) -> None:
    rulebase = flights_rulebase(peer)
    clock = Clock()
    store = FactStore(clock=clock)
    invoke = guarded(rulebase, store)
    assert run(solve(rulebase, store, "cancelled(b2)", invoke)).status == "disproven"
    assert len(peer.called("flight")) == 1
    clock.now += 30  # within the status TTL (60 s): the store answers
    assert run(solve(rulebase, store, "cancelled(b2)", invoke)).status == "disproven"
    assert len(peer.called("flight")) == 1
    peer.flights["f2"] = "cancelled"  # type: ignore[attr-defined]
    clock.now += 31  # past it: the flight is asked again, the booking (300 s) is not
    result = run(solve(rulebase, store, "cancelled(b2)", invoke))
    assert result.proven
    assert len(peer.called("flight")) == 2 and len(peer.called("booking")) == 1
    assert store.get("status", ("f2", "scheduled")) is None  # the old answer was replaced
    # The derived fact rests on the status: it goes when the status expires.
    assert "cancelled(b2)" in [str(f) for f in store.derived_facts()]
    clock.now += 61
    assert "cancelled(b2)" not in [str(f) for f in store.derived_facts()]


def test_a_failing_tool_is_missing_data_with_its_reason(peer: ToolPeer) -> None:
    rulebase = flights_rulebase(peer)
    store = FactStore(clock=Clock())
    peer.status = 500
    result = run(solve(rulebase, store, "cancelled(b1)", guarded(rulebase, store)))
    assert result.status == "blocked"
    [blocker] = result.blockers
    assert (blocker.kind, blocker.goal, blocker.tool) == (
        "missing_data",
        "booking_flight(b1, F)",
        "booking",
    )
    assert "HTTP 500" in blocker.reason
    without = run(solve(rulebase, FactStore(clock=Clock()), "cancelled(b1)"))
    assert without.blockers[0].reason == "no tool invoker in this context"


def test_bounds_give_a_clear_result(peer: ToolPeer) -> None:
    rulebase = flights_rulebase(peer, limits={"maxToolCalls": 1})
    store = FactStore(clock=Clock())
    result = run(solve(rulebase, store, "cancelled(b1)", guarded(rulebase, store)))
    assert (result.status, result.bound, result.tool_calls) == ("bounded", "tool_calls", 1)
    assert result.blockers[0].reason == "the tool call limit was reached"

    peer.delays["flight"] = 1.0
    slow = flights_rulebase(peer, limits={"timeout": 0.3})
    store = FactStore(clock=Clock())
    started = time.monotonic()
    result = run(solve(slow, store, "cancelled(b1)", guarded(slow, store)))
    assert (result.status, result.bound) == ("bounded", "time")
    assert time.monotonic() - started < 0.9

    deep = parse_rulebase({**GRAPH, "limits": {"maxDepth": 5}})
    chain = graph_store([(f"n{i}", f"n{i + 1}") for i in range(20)])
    result = run(solve(deep, chain, "right(n0, n20)", remember=False))
    assert (result.status, result.bound) == ("bounded", "depth")
    assert run(solve(deep, chain, "right(n0, n3)", remember=False)).proven

    steps = parse_rulebase({**GRAPH, "limits": {"maxSteps": 50}})
    long_chain = [(f"n{i}", f"n{i + 1}") for i in range(30)]
    result = run(solve(steps, graph_store(long_chain), "left(X, Y)", max_answers=999))
    assert (result.status, result.bound) == ("proven", "steps")  # answers, but not all
    assert 0 < len(result.answers) < 30 * 31 // 2


def test_independent_tool_calls_run_concurrently() -> None:
    """Four goals whose tools share no unbound variable: one round of calls, measured."""
    peer = ToolPeer(
        handlers={name: (lambda args: {"ok": "yes"}) for name in INDEPENDENT_TOOLS},
        delays=dict.fromkeys(INDEPENDENT_TOOLS, 0.3),
    ).start()
    try:
        rulebase = parse_rulebase(independent_tools_section(peer.url))
        store = FactStore()
        started = time.monotonic()
        result = run(solve(rulebase, store, "all(k)", guarded(rulebase, store)))
        wall = time.monotonic() - started
    finally:
        peer.stop()
    assert result.proven and result.tool_calls == 4
    assert peer.max_in_flight == 4
    assert wall < 0.8, f"4 tools of 0.3 s took {wall:.2f} s"
    assert result.passes == 2


def test_a_shared_budget_counts_nested_guard_calls(peer: ToolPeer) -> None:
    rulebase = flights_rulebase(peer)
    store = FactStore(clock=Clock())
    budget = Budget(tool_calls=5, deadline=time.monotonic() + 5)
    result = run(solve(rulebase, store, "cancelled(b1)", guarded(rulebase, store), budget=budget))
    assert result.proven and budget.used == 2
