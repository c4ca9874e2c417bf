"""Check a proposed tool call against its guard, and call tools only through their guards.

A guard (rulebase ``guards``) maps the call's arguments to variables and lists preconditions;
the call is allowed when the solver proves them all with those values. In strict mode every
argument value must also be *established*: it occurs in a valid fact or a context binding of
the session, so a literal the LLM invented is refused. A tool without a guard is allowed
(strict mode still checks its arguments); an undeclared tool is allowed as ungoverned, except
in strict mode. A blocked verdict says which precondition failed and what would unblock it.

:class:`GuardedTools` is the only way the runtime calls a tool: the solver's own data calls
(``solver_invoker``) and the LLM's calls (``invoke``) both pass :func:`check_call` first.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sentinel_runtime.governance.extraction import record_tool_result, to_const
from sentinel_runtime.governance.facts import FactStore
from sentinel_runtime.governance.rulebase import Guard, Rulebase
from sentinel_runtime.governance.solver import Blocker, Budget, Invoker, Result, Step, solve
from sentinel_runtime.governance.syntax import (
    Atom,
    Comparison,
    Const,
    Literal,
    Negation,
    Term,
    Variable,
    format_term,
)
from sentinel_runtime.governance.tools import ToolClient, ToolError

# Tools whose guard is being checked in this task: a guard that (through data tools) needs
# its own tool again is refused instead of recursing (the rulebase rejects such cycles too).
_checking: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "sentinel_governance_checking", default=frozenset()
)


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    tool: str
    arguments: Mapping[str, Any]
    reason: str
    failed: str | None = None  # the precondition that does not hold
    blockers: tuple[Blocker, ...] = ()
    trace: tuple[Step, ...] = ()
    strict_violations: tuple[str, ...] = ()
    result: Result | None = None

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "allowed": self.allowed,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "reason": self.reason,
        }
        if self.failed is not None:
            out["failedPrecondition"] = self.failed
        if self.blockers:
            out["blockers"] = [b.describe() for b in self.blockers]
        if self.trace:
            out["trace"] = [s.describe() for s in self.trace]
        if self.strict_violations:
            out["strictViolations"] = list(self.strict_violations)
        return out


class GuardBlockedError(Exception):
    def __init__(self, verdict: Verdict) -> None:
        super().__init__(f"guard of {verdict.tool} blocked the call: {verdict.reason}")
        self.verdict = verdict


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def strict_violations(store: FactStore, arguments: Mapping[str, Any]) -> list[str]:
    """Arguments whose values no fact or context binding of the session holds."""
    established = store.established_values()
    out = []
    for name, value in arguments.items():
        for path, leaf in _leaves(value, name):
            constant = to_const(leaf)
            if constant is None or constant not in established:
                out.append(f"argument {path}={json_text(leaf)} is not a value established by facts")
    return out


def json_text(value: Any) -> str:
    constant = to_const(value)
    return format_term(constant) if constant is not None else repr(value)


def _bind_arguments(
    guard: Guard, arguments: Mapping[str, Any]
) -> tuple[dict[str, Const], str | None]:
    values: dict[str, Const] = {}
    for name, term in guard.args.items():
        if name not in arguments:
            return values, f"argument {name} is missing"
        value = to_const(arguments[name])
        if value is None:
            return values, f"argument {name} is not a string, number or boolean"
        if isinstance(term, Variable):
            if term.name in values and values[term.name] != value:
                return values, f"arguments bound to {term.name} differ"
            values[term.name] = value
        elif term != value:
            return values, f"argument {name} must be {format_term(term)}"
    return values, None


async def check_call(
    rulebase: Rulebase,
    store: FactStore,
    tool: str,
    arguments: Mapping[str, Any],
    invoke: Invoker | None = None,
    *,
    budget: Budget | None = None,
) -> Verdict:
    """Is ``tool(arguments)`` allowed now? ``invoke`` fetches data the preconditions need
    (it must itself be guarded: pass :meth:`GuardedTools.solver_invoker`)."""
    args = dict(arguments)
    violations = tuple(strict_violations(store, args)) if rulebase.strict else ()
    if tool not in rulebase.functions:
        if rulebase.strict:
            return Verdict(False, tool, args, f"{tool} is not a declared function (strict mode)")
        return Verdict(True, tool, args, f"{tool} is not declared in the rulebase: ungoverned")
    if violations:
        return Verdict(
            False,
            tool,
            args,
            "strict mode: " + "; ".join(violations),
            strict_violations=violations,
        )
    guard = rulebase.guards.get(tool)
    if guard is None or not guard.requires:
        return Verdict(True, tool, args, "no guard: allowed")
    values, problem = _bind_arguments(guard, args)
    if problem is not None:
        return Verdict(False, tool, args, problem)
    if tool in _checking.get():
        return Verdict(False, tool, args, f"the guard of {tool} needs {tool} itself")
    token = _checking.set(_checking.get() | {tool})
    try:
        return await _judge(
            rulebase, store, guard, args, values=values, invoke=invoke, budget=budget
        )
    finally:
        _checking.reset(token)


async def _judge(
    rulebase: Rulebase,
    store: FactStore,
    guard: Guard,
    args: dict[str, Any],
    *,
    values: dict[str, Const],
    invoke: Invoker | None,
    budget: Budget | None,
) -> Verdict:
    budget = budget or Budget.of(rulebase.limits)
    result = await solve(rulebase, store, guard.requires, invoke, bindings=values, budget=budget)
    if result.proven:
        return Verdict(
            True,
            guard.tool,
            args,
            "every precondition holds",
            trace=result.answers[0].trace,
            result=result,
        )
    # Which precondition fails: the first whose prefix of the list cannot be proven (the
    # data is in the store by now, so these re-runs make no new tool calls in practice).
    failed = guard.requires[-1]
    detail = result
    for i in range(1, len(guard.requires)):
        prefix = await solve(
            rulebase, store, guard.requires[:i], invoke, bindings=values, budget=budget
        )
        if not prefix.proven:
            failed, detail = guard.requires[i - 1], prefix
            break
    shown = _substitute(failed, values)
    return Verdict(
        False,
        guard.tool,
        args,
        f"precondition {shown} does not hold: {detail.explain()}",
        failed=shown,
        blockers=detail.blockers or result.blockers,
        result=result,
    )


def _substitute(literal: Literal, values: Mapping[str, Const]) -> str:
    """A precondition with the call's values in place of its variables."""

    def term(t: Term) -> Term:
        return values.get(t.name, t) if isinstance(t, Variable) else t

    if isinstance(literal, Comparison):
        return str(Comparison(literal.op, term(literal.left), term(literal.right)))
    atom = literal.atom if isinstance(literal, Negation) else literal
    shown = Atom(atom.predicate, tuple(term(a) for a in atom.args))
    return f"not {shown}" if isinstance(literal, Negation) else str(shown)


class GuardedTools:
    """Every tool call of a session passes its guard, then its transport; a data tool's
    result becomes facts. ``client`` calls the transport (HTTP, MCP)."""

    def __init__(self, rulebase: Rulebase, store: FactStore, client: ToolClient) -> None:
        self.rulebase = rulebase
        self.store = store
        self.client = client

    def solver_invoker(self, budget: Budget | None = None) -> Invoker:
        """For the solver: guard, then call; the solver records the facts itself."""

        async def invoke(tool: str, arguments: Mapping[str, Any]) -> Any:
            verdict = await check_call(
                self.rulebase,
                self.store,
                tool,
                arguments,
                self.solver_invoker(budget),
                budget=budget,
            )
            if not verdict.allowed:
                raise GuardBlockedError(verdict)
            return await self._transport(tool, arguments)

        return invoke

    async def invoke(
        self, tool: str, arguments: Mapping[str, Any], budget: Budget | None = None
    ) -> tuple[Verdict, Any]:
        """A call proposed by the LLM (or the application): the verdict, and the result when
        allowed. Raises :class:`ToolError` when an allowed call fails."""
        budget = budget or Budget.of(self.rulebase.limits)
        verdict = await check_call(
            self.rulebase, self.store, tool, arguments, self.solver_invoker(budget), budget=budget
        )
        if not verdict.allowed:
            return verdict, None
        result = await self._transport(tool, arguments)
        record_tool_result(self.rulebase, self.store, tool, arguments, result)
        return verdict, result

    async def _transport(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        function = self.rulebase.functions.get(tool)
        if function is None:
            raise ToolError(tool, "no_transport", "not a declared function")
        return await self.client.call(function, arguments)
