"""The solver's entry point: :func:`solve` runs passes of :mod:`.search`, fetching the tool
data each pass found missing (concurrently, through the caller's guarded invoker) between
them, until the goal is proven, no call is left to make, or a bound is hit.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sentinel_runtime.governance.extraction import call_key, record_tool_result
from sentinel_runtime.governance.facts import FactStore
from sentinel_runtime.governance.rulebase import Rulebase, compile_goal
from sentinel_runtime.governance.solver import proofs
from sentinel_runtime.governance.solver.results import (
    Answer,
    Blocker,
    Budget,
    Invoker,
    Result,
    Status,
)
from sentinel_runtime.governance.solver.search import BoundReachedError, Pass, PendingCall
from sentinel_runtime.governance.solver.terms import Var, compile_query, deref, program_of
from sentinel_runtime.governance.syntax import Atom, Comparison, Const, Negation, Term, Variable
from sentinel_runtime.governance.syntax import Literal as Lit


def resolve_goal(
    rulebase: Rulebase,
    store: FactStore,
    goal: str | Sequence[Lit],
    bindings: Mapping[str, Const] | None = None,
) -> tuple[tuple[Lit, ...], list[Blocker]]:
    """The goal's literals with given variable values and context names substituted; an
    unbound context is a blocker (the LLM binds it, then asks again)."""
    literals = compile_goal(rulebase, goal)
    blockers: list[Blocker] = []
    values = dict(bindings or {})

    def term(t: Term) -> Term:
        if isinstance(t, Variable):
            return values.get(t.name, t)
        if isinstance(t, str) and t in rulebase.contexts:
            if t in store.contexts:
                return store.contexts[t]
            if not any(b.goal == t for b in blockers):
                blockers.append(
                    Blocker("unbound_context", t, reason=rulebase.contexts[t] or "not bound")
                )
        return t

    out: list[Lit] = []
    for lit in literals:
        if isinstance(lit, Atom):
            out.append(Atom(lit.predicate, tuple(term(a) for a in lit.args), lit.line, lit.column))
        elif isinstance(lit, Negation):
            atom = lit.atom
            inner = Atom(atom.predicate, tuple(term(a) for a in atom.args), atom.line, atom.column)
            out.append(Negation(inner, lit.line, lit.column))
        else:
            out.append(Comparison(lit.op, term(lit.left), term(lit.right), lit.line, lit.column))
    return tuple(out), blockers


async def solve(
    rulebase: Rulebase,
    store: FactStore,
    goal: str | Sequence[Lit],
    invoke: Invoker | None = None,
    *,
    bindings: Mapping[str, Const] | None = None,
    max_answers: int = 1,
    budget: Budget | None = None,
    remember: bool = True,
) -> Result:
    """Prove ``goal`` (text such as ``eligible_for_refund(current_user, B)`` or literals).

    ``invoke(tool, arguments)`` calls a data tool and returns its JSON result; it is where
    the tool's guard is checked (see :mod:`guard`); without it, missing data is a blocker.
    Stops at ``max_answers`` proofs. Proven derived facts are stored in the session with what
    they rest on (``remember``)."""
    started = time.monotonic()
    limits = rulebase.limits
    budget = budget or Budget.of(limits)
    text = goal if isinstance(goal, str) else ", ".join(str(g) for g in goal)
    literals, context_blockers = resolve_goal(rulebase, store, goal, bindings)
    if context_blockers:
        return Result("blocked", text, blockers=tuple(context_blockers))
    failed: dict[tuple[str, str], str] = {}
    calls = passes = 0
    limit_hit: str | None = None
    while True:
        store.purge()
        passes += 1
        run = Pass(rulebase, store, failed, budget.deadline, limits)
        found = _collect(run, literals, max_answers, remember)
        bound = run.bound or limit_hit or ("depth" if run.depth_hit else None)
        if len(found.answers) >= max_answers or not run.pending or run.bound is not None:
            break
        if limit_hit == "time":
            break
        pending = list(run.pending.values())
        if invoke is None:
            for call in pending:
                failed[call_key(call.tool, call.arguments)] = "no tool invoker in this context"
            continue
        room = max(budget.tool_calls - budget.used, 0)
        if len(pending) > room:
            limit_hit = "tool_calls"
            for call in pending[room:]:
                failed[call_key(call.tool, call.arguments)] = "the tool call limit was reached"
            pending = pending[:room]
        budget.used += len(pending)
        calls += len(pending)
        if pending and await _fetch_all(
            rulebase, store, pending, invoke, budget=budget, failed=failed
        ):
            # Out of time: one last pass over what did arrive, then stop.
            limit_hit = "time"
            for call in run.pending.values():
                failed.setdefault(call_key(call.tool, call.arguments), "the time limit was reached")
    return _result(
        text, run, found, bound, calls=calls, passes=passes, elapsed=time.monotonic() - started
    )


@dataclass
class Found:
    answers: list[Answer] = field(default_factory=list)
    assumption_sets: list[tuple[Any, ...]] = field(default_factory=list)


def _collect(run: Pass, literals: Sequence[Lit], max_answers: int, remember: bool) -> Found:
    """One pass over the goal: answers without assumptions (stored as derived facts when
    ``remember``), and the assumption sets of proofs that need the user."""
    names: dict[str, Var] = {}
    goals = [compile_query(lit, names) for lit in literals]
    found = Found()
    seen: set[Any] = set()
    program = program_of(run.rb)
    try:
        for nodes, assumed in run.conj(goals, 0, 0):
            if assumed:
                if len(found.assumption_sets) < 8:
                    found.assumption_sets.append(assumed)
                continue
            values = {n: deref(v) for n, v in names.items() if not n.startswith("_")}
            key = tuple(sorted((k, repr(v)) for k, v in values.items()))
            if key in seen:
                continue
            seen.add(key)
            if remember:
                for node in nodes:
                    proofs.remember(node, run.store, run.rb, program)
            bindings = {k: v for k, v in values.items() if type(v) is not Var}
            found.answers.append(Answer(bindings, tuple(proofs.step(n, run.now) for n in nodes)))
            if len(found.answers) >= max_answers:
                break
    except BoundReachedError:
        pass
    return found


async def _fetch_all(
    rulebase: Rulebase,
    store: FactStore,
    pending: list[PendingCall],
    invoke: Invoker,
    *,
    budget: Budget,
    failed: dict[tuple[str, str], str],
) -> bool:
    """Run the calls concurrently and store their facts; True when the time ran out."""

    async def one(call: PendingCall) -> None:
        key = call_key(call.tool, call.arguments)
        try:
            result = await invoke(call.tool, call.arguments)
        except Exception as exc:  # a tool's failure is a blocker, never a crash of the proof
            failed[key] = _reason(exc)
            return
        record_tool_result(rulebase, store, call.tool, call.arguments, result)

    tasks = [asyncio.ensure_future(one(call)) for call in pending]
    remaining = budget.deadline - time.monotonic()
    if remaining <= 0:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return True
    _, not_done = await asyncio.wait(tasks, timeout=remaining)
    for task in not_done:
        task.cancel()
    await asyncio.gather(*not_done, return_exceptions=True)
    return bool(not_done)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return text or type(exc).__name__


def _result(
    text: str,
    run: Pass,
    found: Found,
    bound: str | None,
    *,
    calls: int,
    passes: int,
    elapsed: float,
) -> Result:
    if found.answers:
        return Result(
            "proven",
            text,
            tuple(found.answers),
            bound=bound,  # with answers: the list may be incomplete
            tool_calls=calls,
            passes=passes,
            elapsed=elapsed,
        )
    for assumed in sorted(found.assumption_sets, key=len)[:4]:
        for predicate, values in assumed:
            run.ask(predicate, values)
    blockers = tuple(run.blockers.values())
    status: Status = "bounded" if bound else "blocked" if blockers else "disproven"
    return Result(
        status,
        text,
        blockers=blockers,
        bound=bound,
        failures=tuple(run.failures.values()),
        tool_calls=calls,
        passes=passes,
        elapsed=elapsed,
    )
