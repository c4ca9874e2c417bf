"""The governance facade the HTTP API calls: one method per operation, sessions by id.

:class:`Governance` keeps the active rulebase (a bad ``tools`` section keeps the previous one,
as the policy's hot reload does), the sessions' fact stores and the tool client. Each method
takes a session id and plain JSON-able values, and returns a result with ``describe()``.

Sessions are made on first use by default (a library caller's convenience); the runtime's API
builds it with ``create_sessions=False``, so a session exists only once the application opened
it (:meth:`Governance.open_session`, with its trusted bindings such as the logged-in user) and
an unknown or expired id is an error rather than an empty session.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sentinel_runtime.governance import rulebase as rulebase_mod
from sentinel_runtime.governance.extraction import to_const
from sentinel_runtime.governance.facts import Fact, FactStore, SessionStore
from sentinel_runtime.governance.guard import GuardedTools, Verdict, check_call
from sentinel_runtime.governance.rulebase import Rulebase, RulebaseError
from sentinel_runtime.governance.solver import Budget, Result, solve
from sentinel_runtime.governance.syntax import ClauseSyntaxError, Variable, parse_atom
from sentinel_runtime.governance.tools import ToolClient, ToolError
from sentinel_runtime.guardrails.policy import Policy


class GovernanceError(ValueError):
    """A request the governance layer refuses; ``kind`` lets the API choose its status code:
    ``unavailable`` (no rulebase), ``unknown_session``, ``session_exists``, ``unknown_context``,
    ``unknown_tool``, ``invalid_goal`` (with ``column``, 1-based in the goal), ``invalid_fact``,
    ``invalid_value``, ``not_established`` (strict mode)."""

    def __init__(self, kind: str, message: str, column: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.column = column


@dataclass(frozen=True)
class Invocation:
    verdict: Verdict
    result: Any = None
    error: ToolError | None = None

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict.describe()}
        if self.verdict.allowed and self.error is None:
            out["result"] = self.result
        if self.error is not None:
            out["error"] = {"kind": self.error.kind, "message": str(self.error)}
        return out


@dataclass(frozen=True)
class RulebaseSnapshot:
    """The rulebase in force and the last load's error, read together (one policy version)."""

    rulebase: Rulebase | None
    error: RulebaseError | None


class Governance:
    def __init__(
        self,
        sessions: SessionStore | None = None,
        client: ToolClient | None = None,
        *,
        create_sessions: bool = True,
    ) -> None:
        # Not ``sessions or ...``: an empty SessionStore is falsy (it has a length).
        self.sessions = sessions if sessions is not None else SessionStore()
        self.client = client if client is not None else ToolClient()
        self.create_sessions = create_sessions
        self.rulebase: Rulebase | None = None
        self.error: RulebaseError | None = None  # the last load's, while the previous serves
        self.policy_hash = ""  # the policy version the active rulebase came from
        self.loaded_at: float | None = None
        self.error_policy_hash = ""  # the policy version whose tools section was rejected

    # -- the rulebase --------------------------------------------------------------------

    def load(self, policy: Policy | None, source: str | None = None) -> Rulebase | None:
        """Follow the active policy: its rulebase becomes active; a bad ``tools`` section is
        recorded in ``error`` and the previous rulebase stays active."""
        try:
            loaded = rulebase_mod.for_policy(policy, source)
        except RulebaseError as exc:
            self.error = exc
            self.error_policy_hash = policy.sha256 if policy is not None else ""
            return self.rulebase
        self.rulebase, self.error, self.error_policy_hash = loaded, None, ""
        self.policy_hash = policy.sha256 if policy is not None and loaded is not None else ""
        self.loaded_at = time.time() if loaded is not None else None
        return loaded

    def snapshot(self) -> RulebaseSnapshot:
        return RulebaseSnapshot(self.rulebase, self.error)

    def active(self) -> Rulebase:
        """The active rulebase; ``unavailable`` (with the reason) when there is none."""
        return self._active()

    def _active(self) -> Rulebase:
        if self.rulebase is None:
            if self.error is not None:
                raise GovernanceError("unavailable", f"no rulebase is active: {self.error}")
            raise GovernanceError(
                "unavailable", "no rulebase is active: the policy has no tools section"
            )
        return self.rulebase

    def status(self) -> dict[str, Any]:
        """The active rulebase's version, and the rejected one's problems while it is kept."""
        error = None
        if self.error is not None:
            error = {
                "policyHash": self.error_policy_hash,
                "message": str(self.error),
                "issues": [
                    {"message": i.message, "path": i.path, "line": i.line, "column": i.column}
                    for i in self.error.issues
                ],
            }
        return {
            "active": self.rulebase is not None,
            "policyHash": self.policy_hash or None,
            "rulebaseId": self.rulebase.id if self.rulebase is not None else None,
            "loadedAt": self.loaded_at,
            "error": error,
        }

    # -- sessions --------------------------------------------------------------------------

    def _store(self, session_id: str) -> FactStore:
        if self.create_sessions:
            return self.sessions.get(session_id)
        store = self.sessions.find(session_id)
        if store is None:
            raise GovernanceError(
                "unknown_session",
                f"unknown session {session_id!r} (never opened, closed, or idle for more "
                f"than {self.sessions.idle_seconds:g} s)",
            )
        return store

    def require_session(self, session_id: str) -> None:
        """Raise ``unknown_session`` unless the session exists (or sessions open on demand)."""
        self._store(session_id)

    def open_session(
        self,
        session_id: str | None = None,
        *,
        contexts: Mapping[str, Any] | None = None,
        facts: Sequence[str] = (),
    ) -> dict[str, Any]:
        """A new session (an id is made when none is given) with the application's trusted
        context bindings (the logged-in user) and seeded facts; an existing id is refused."""
        rulebase = self._active()
        unknown = sorted(set(contexts or {}) - set(rulebase.contexts))
        if unknown:
            known = ", ".join(sorted(rulebase.contexts)) or "none"
            raise GovernanceError(
                "unknown_context", f"unknown context {unknown[0]!r} (known: {known})"
            )
        session_id = session_id or f"gs-{uuid.uuid4().hex}"
        if self.sessions.create(session_id) is None:
            raise GovernanceError("session_exists", f"session {session_id!r} exists already")
        try:
            for name, value in (contexts or {}).items():
                self.bind(session_id, name, value, trusted=True)
            for fact in facts:
                self.seed(session_id, fact)
        except GovernanceError:
            self.sessions.drop(session_id)  # all or nothing
            raise
        return {"sessionId": session_id, **self.facts(session_id)}

    def close_session(self, session_id: str) -> None:
        if not self.sessions.drop(session_id):
            raise GovernanceError("unknown_session", f"unknown session {session_id!r}")

    def ephemeral(self) -> FactStore:
        """A fresh store kept nowhere: a request that names no session."""
        store = FactStore(self.sessions.clock, self.sessions.max_facts)
        if self.sessions.seed is not None:
            self.sessions.seed(store)
        return store

    # -- operations ------------------------------------------------------------------------

    async def query(self, session_id: str, goal: str, max_answers: int = 20) -> Result:
        """Prove a symbolic goal in a session, calling data tools through their guards."""
        rulebase = self._active()
        store = self._store(session_id)
        budget = Budget.of(rulebase.limits)
        tools = GuardedTools(rulebase, store, self.client)
        try:
            return await solve(
                rulebase,
                store,
                goal,
                tools.solver_invoker(budget),
                max_answers=max_answers,
                budget=budget,
            )
        except rulebase_mod.GoalError as exc:
            where = f" (column {exc.column})" if exc.column is not None else ""
            raise GovernanceError("invalid_goal", f"{exc}{where}", exc.column) from exc

    def facts(self, session_id: str) -> dict[str, Any]:
        self._active()
        store = self._store(session_id)
        return {**store.snapshot(), "summary": self.summary(session_id)}

    def summary(self, session_id: str) -> str:
        """The text for the LLM's prompt context."""
        rulebase = self._active()
        store = self._store(session_id)
        askables = {str(a.pattern): a.question for a in rulebase.askables.values()}
        return store.summary(rulebase.contexts, askables)

    def bind(
        self, session_id: str, name: str, value: Any, *, trusted: bool = False
    ) -> dict[str, Any]:
        """Bind or rebind a context name (a focus shift). In strict mode the value must be
        established by facts, like a tool argument, unless the application itself binds it
        (``trusted``: the logged-in user at the start of a session)."""
        rulebase = self._active()
        if name not in rulebase.contexts:
            known = ", ".join(sorted(rulebase.contexts)) or "none"
            raise GovernanceError("unknown_context", f"unknown context {name!r} (known: {known})")
        constant = to_const(value)
        if constant is None:
            raise GovernanceError("invalid_value", "a context value is a string or a number")
        store = self._store(session_id)
        if not trusted and rulebase.strict and constant not in store.established_values():
            raise GovernanceError(
                "not_established", f"strict mode: {value!r} is not a value established by facts"
            )
        previous = store.bind(name, constant)
        return {"context": name, "value": constant, "previous": previous}

    def seed(self, session_id: str, fact: str) -> Fact:
        """A fact the application vouches for (the logged-in user): a declared facts entry."""
        return self._assert(session_id, fact, "fact", "seed")

    def answer(self, session_id: str, fact: str) -> Fact:
        """The user's answer to an askable question, e.g. ``user_confirms_refund(u1, bk1)``."""
        return self._assert(session_id, fact, "askable", "user")

    def _assert(self, session_id: str, text: str, kind: str, source: str) -> Fact:
        rulebase = self._active()
        try:
            atom = parse_atom(text)
        except ClauseSyntaxError as exc:
            raise GovernanceError("invalid_fact", str(exc)) from exc
        if rulebase.kinds.get(atom.predicate) != kind:
            what = "an askable" if kind == "askable" else "a declared fact"
            raise GovernanceError("invalid_fact", f"{atom.predicate} is not {what} predicate")
        arity = rulebase.arity[atom.predicate]
        if arity != atom.arity:
            raise GovernanceError("invalid_fact", f"{atom.predicate} has {arity} arguments")
        store = self._store(session_id)
        values = []
        for arg in atom.args:
            if isinstance(arg, Variable):
                raise GovernanceError("invalid_fact", f"{text} is not ground ({arg} is a variable)")
            is_context = isinstance(arg, str) and arg in rulebase.contexts
            values.append(store.contexts.get(arg, arg) if is_context else arg)  # type: ignore[arg-type]
        return store.add(atom.predicate, values, source)  # type: ignore[arg-type]

    async def check(self, session_id: str, tool: str, arguments: Mapping[str, Any]) -> Verdict:
        """Would this call be allowed now? (Data the guard needs is fetched, guarded.)"""
        return await self._check(self._active(), self._store(session_id), tool, arguments)

    async def _check(
        self, rulebase: Rulebase, store: FactStore, tool: str, arguments: Mapping[str, Any]
    ) -> Verdict:
        budget = Budget.of(rulebase.limits)
        tools = GuardedTools(rulebase, store, self.client)
        return await check_call(
            rulebase, store, tool, arguments, tools.solver_invoker(budget), budget=budget
        )

    async def invoke(self, session_id: str, tool: str, arguments: Mapping[str, Any]) -> Invocation:
        """Guarded invocation: the verdict, and the tool's result when allowed (a data tool's
        result also becomes facts of the session). A tool the rulebase does not declare has
        no transport: ``unknown_tool``."""
        rulebase = self._active()
        if tool not in rulebase.functions:
            known = ", ".join(sorted(rulebase.functions)) or "none"
            raise GovernanceError("unknown_tool", f"unknown tool {tool!r} (known: {known})")
        store = self._store(session_id)
        tools = GuardedTools(rulebase, store, self.client)
        try:
            verdict, result = await tools.invoke(tool, arguments)
        except ToolError as exc:
            verdict = Verdict(True, tool, dict(arguments), "allowed; the call failed")
            return Invocation(verdict, error=exc)
        return Invocation(verdict, result)

    async def check_tool_calls(
        self,
        session_id: str | None,
        tool_calls: Sequence[Mapping[str, Any]],
        *,
        rulebase: Rulebase | None = None,
    ) -> list[Verdict]:
        """Verdicts for an assistant message's OpenAI ``tool_calls`` (arguments are a JSON
        string there); one that does not parse is blocked. ``None``: a fresh session kept
        nowhere (nothing is established in it but what the checks fetch). ``rulebase``: the
        one of the request's policy version (default: the active one)."""
        rulebase = rulebase if rulebase is not None else self._active()
        store = self.ephemeral() if session_id is None else self._store(session_id)
        verdicts = []
        for call in tool_calls:
            function = call.get("function") or {}
            name = str(function.get("name", ""))
            raw = function.get("arguments") or "{}"
            try:
                arguments = json.loads(raw) if isinstance(raw, str) else dict(raw)
            except (ValueError, TypeError):
                verdicts.append(Verdict(False, name, {}, "the arguments are not a JSON object"))
                continue
            if not isinstance(arguments, dict):
                verdicts.append(Verdict(False, name, {}, "the arguments are not a JSON object"))
                continue
            verdicts.append(await self._check(rulebase, store, name, arguments))
        return verdicts

    async def aclose(self) -> None:
        await self.client.aclose()
