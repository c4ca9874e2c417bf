"""Governance solver: proof time without tool I/O, and concurrent tool calls.

1. A generated rulebase of 200 rules (50 groups of four: a copy, two joins, a negation and a
   comparison) over 10,000 facts (50 base predicates of 200 facts, two successors per node),
   no tools; 60 of the 100 nodes are blocked, so many ground goals are disproven only after
   every path. Ground goals (``g17_4(n42)``: up to 8 join paths) and open ones
   (``g17_3(n42, Z)``: all answers) are timed one by one, median and p99, with
   ``remember=False`` so every proof is computed, not read back. Baseline in the same run:
   the ground goals answered by a hand-written Python join over dicts. Target: median under 5 ms.
2. A proof needing four independent data tools, each sleeping 0.25 s, served over loopback
   HTTP by the test suite's fake tool server and called through their guards: wall time
   beside the sum of the four and the slowest one. Target: close to the slowest.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from sentinel_runtime.governance.facts import FactStore
from sentinel_runtime.governance.guard import GuardedTools
from sentinel_runtime.governance.rulebase import Rulebase, parse_rulebase
from sentinel_runtime.governance.solver import solve
from sentinel_runtime.governance.tools import ToolClient
from stats import median, p99, table
from support.tool_peer import INDEPENDENT_TOOLS, ToolPeer, independent_tools_section

GROUPS = 50
NODES = 100
SLOW = 0.25
BLOCKED = range(0, NODES * 3 // 5)  # most paths end blocked: many goals are disproven


def generated(seed: int = 7) -> tuple[Rulebase, FactStore, dict[str, dict[str, list[str]]]]:
    rules = []
    for k in range(GROUPS):
        b1, b2 = f"b{(k + 1) % GROUPS}", f"b{(k + 2) % GROUPS}"
        rules += [
            f"g{k}_1(X, Y) :- b{k}(X, Y).",
            f"g{k}_2(X, Z) :- g{k}_1(X, Y), {b1}(Y, Z).",
            f"g{k}_3(X, Z) :- g{k}_2(X, Y), {b2}(Y, Z), not blocked(Z).",
            f"g{k}_4(X) :- g{k}_3(X, Z), Z != X.",
        ]
    rulebase = parse_rulebase(
        {
            "facts": [f"b{k}(From, To)" for k in range(GROUPS)] + ["blocked(Node)"],
            "rules": "\n".join(rules),
            "limits": {"maxSteps": 10_000_000},
        }
    )
    rng = random.Random(seed)
    store = FactStore(max_facts=1_000_000)
    successors: dict[str, dict[str, list[str]]] = {}
    for k in range(GROUPS):
        table_k = successors[f"b{k}"] = {}
        for i in range(NODES):
            for j in rng.sample(range(NODES), 2):
                target = f"n{j}"
                table_k.setdefault(f"n{i}", []).append(target)
                store.add(f"b{k}", (f"n{i}", target))
    for i in BLOCKED:
        store.add("blocked", (f"n{i}",))
    return rulebase, store, successors


def by_hand(successors: dict[str, dict[str, list[str]]], k: int, x: str, blocked: set[str]) -> bool:
    """g{k}_4(x) written out as nested loops over dicts (the baseline)."""
    first, second, third = (successors[f"b{(k + d) % GROUPS}"] for d in range(3))
    for y in first.get(x, ()):
        for y2 in second.get(y, ()):
            for z in third.get(y2, ()):
                if z not in blocked and z != x:
                    return True
    return False


async def _time_goals(
    rulebase: Rulebase, store: FactStore, goals: list[str], max_answers: int
) -> tuple[list[float], int]:
    samples = []
    proven = 0
    for goal in goals:
        started = time.perf_counter()
        result = await solve(rulebase, store, goal, max_answers=max_answers, remember=False)
        samples.append((time.perf_counter() - started) * 1000)
        proven += result.proven
    return samples, proven


def solver_rows(quick: bool) -> list[list[str]]:
    rulebase, store, successors = generated()
    rng = random.Random(11)
    count = 300 if quick else 2000
    picks = [(rng.randrange(GROUPS), f"n{rng.randrange(NODES)}") for _ in range(count)]
    ground = [f"g{k}_4({x})" for k, x in picks]
    open_goals = [f"g{k}_3({x}, Z)" for k, x in picks]
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(_time_goals(rulebase, store, ground[:50], 1))  # warm-up
        ground_ms, ground_proven = loop.run_until_complete(_time_goals(rulebase, store, ground, 1))
        open_ms, _ = loop.run_until_complete(_time_goals(rulebase, store, open_goals, 100))
    finally:
        loop.close()
    blocked = {f"n{i}" for i in BLOCKED}
    hand_ms = []
    hand_proven = 0
    for k, x in picks:
        started = time.perf_counter()
        hand_proven += by_hand(successors, k, x, blocked)
        hand_ms.append((time.perf_counter() - started) * 1000)
    assert hand_proven == ground_proven, (hand_proven, ground_proven)  # same verdicts
    rules = sum(len(c) for c in rulebase.clauses.values())
    return [
        [
            f"solver, ground goal g_4(n) ({rules} rules, {len(store)} facts)",
            f"{median(ground_ms):.3f}",
            f"{p99(ground_ms):.3f}",
            f"{ground_proven}/{count} proven",
        ],
        [
            "solver, open goal g_3(n, Z), all answers",
            f"{median(open_ms):.3f}",
            f"{p99(open_ms):.3f}",
            "",
        ],
        [
            "baseline: the ground goal as a hand-written join",
            f"{median(hand_ms):.4f}",
            f"{p99(hand_ms):.4f}",
            "same verdicts",
        ],
    ]


async def _concurrent(peer: ToolPeer) -> tuple[float, Any]:
    rulebase = parse_rulebase(independent_tools_section(peer.url))
    store = FactStore()
    client = ToolClient()
    try:
        invoke = GuardedTools(rulebase, store, client).solver_invoker()
        await solve(rulebase, FactStore(), "all(warm)", invoke)  # connections, imports
        started = time.perf_counter()
        result = await solve(
            rulebase, store, "all(k)", GuardedTools(rulebase, store, client).solver_invoker()
        )
        return time.perf_counter() - started, result
    finally:
        await client.aclose()


def concurrency_rows() -> list[list[str]]:
    peer = ToolPeer(
        handlers={name: (lambda args: {"ok": "yes"}) for name in INDEPENDENT_TOOLS},
        delays=dict.fromkeys(INDEPENDENT_TOOLS, SLOW),
    ).start()
    try:
        wall, result = asyncio.run(_concurrent(peer))
    finally:
        peer.stop()
    assert result.proven and result.tool_calls == 4
    return [
        [
            "proof needing 4 independent tools (wall)",
            f"{wall * 1000:.0f}",
            "",
            f"{result.tool_calls} calls, {result.passes} passes, {peer.max_in_flight} at once",
        ],
        [
            "  the slowest tool alone",
            f"{SLOW * 1000:.0f}",
            "",
            f"overhead {(wall - SLOW) * 1000:.0f} ms",
        ],
        [
            "  the four tools one after another",
            f"{4 * SLOW * 1000:.0f}",
            "",
            f"{4 * SLOW / wall:.1f}x the wall time",
        ],
    ]


def run(quick: bool = False) -> str:
    rows = solver_rows(quick) + concurrency_rows()
    return table(
        "Governance solver (targets: median under 5 ms for 200 rules and 10k facts without "
        "tool I/O; 4 independent slow tools close to the slowest one)",
        ["measure", "median ms", "p99 ms", "note"],
        rows,
    )


if __name__ == "__main__":
    print(run())
