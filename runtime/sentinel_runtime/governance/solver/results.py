"""What a proof returns: :class:`Result` with its answers, derivation :class:`Step` trees and
:class:`Blocker` values, rendered as text (``explain``, ``render``) and as JSON (``describe``);
and the :class:`Budget` of tool calls and time that a proof and its guards' proofs share.

:mod:`.driver` makes these; the guards (``governance.guard``), the service and the HTTP API
read them.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sentinel_runtime.governance.rulebase import Limits
from sentinel_runtime.governance.syntax import Const

Invoker = Callable[[str, Mapping[str, Any]], Awaitable[Any]]
Status = Literal["proven", "blocked", "disproven", "bounded"]

# -- results -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One node of a derivation: a rule applied, a fact used (with where it came from), a
    negation or comparison checked, or an askable fact assumed."""

    kind: str  # rule | tool | user | seed | derived | not | compare | ask
    goal: str
    detail: str = ""
    children: tuple[Step, ...] = ()

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "goal": self.goal}
        if self.detail:
            out["detail"] = self.detail
        if self.children:
            out["children"] = [c.describe() for c in self.children]
        return out

    def render(self, indent: int = 0) -> str:
        line = (
            "  " * indent + f"{self.goal}  [{self.kind}{': ' + self.detail if self.detail else ''}]"
        )
        return "\n".join([line, *(c.render(indent + 1) for c in self.children)])


@dataclass(frozen=True)
class Blocker:
    """What would unblock a proof: a question for the user, tool data that could not be had,
    a context name to bind, or an input the tool needs."""

    kind: Literal["ask", "missing_data", "unbound_context", "unbound_input"]
    goal: str
    predicate: str = ""
    args: tuple[Any, ...] = ()  # constants; variables as their names
    question: str | None = None
    tool: str | None = None
    reason: str = ""

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "goal": self.goal}
        if self.predicate:
            out["predicate"] = self.predicate
            out["args"] = list(self.args)
        if self.question is not None:
            out["question"] = self.question
        if self.tool is not None:
            out["tool"] = self.tool
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Answer:
    bindings: Mapping[str, Const]  # the goal's variables
    trace: tuple[Step, ...]  # one derivation per goal literal


@dataclass(frozen=True)
class Result:
    status: Status
    goal: str
    answers: tuple[Answer, ...] = ()
    blockers: tuple[Blocker, ...] = ()
    bound: str | None = None  # depth | tool_calls | time | steps, when one was hit
    failures: tuple[str, ...] = ()  # why not: goals that found no fact, and what is known
    tool_calls: int = 0
    passes: int = 0
    elapsed: float = 0.0

    @property
    def proven(self) -> bool:
        return self.status == "proven"

    def explain(self) -> str:
        if self.proven:
            return "proven"
        parts = [self.status]
        if self.bound:
            parts.append(f"the {self.bound.replace('_', ' ')} limit was reached")
        parts.extend(_blocker_text(b) for b in self.blockers)
        parts.extend(self.failures[:3])
        return "; ".join(parts)

    def describe(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "goal": self.goal,
            "answers": [
                {"bindings": dict(a.bindings), "trace": [s.describe() for s in a.trace]}
                for a in self.answers
            ],
            "blockers": [b.describe() for b in self.blockers],
            "bound": self.bound,
            "failures": list(self.failures),
            "toolCalls": self.tool_calls,
            "passes": self.passes,
            "elapsedMs": round(self.elapsed * 1000, 3),
        }


def _blocker_text(blocker: Blocker) -> str:
    if blocker.kind == "ask":
        return f"ask the user: {blocker.question} ({blocker.goal})"
    if blocker.kind == "unbound_context":
        return f"bind the context {blocker.goal}"
    return f"{blocker.goal}: {blocker.reason}"


@dataclass
class Budget:
    """Tool calls and wall time one proof may still use; guards' nested proofs share it."""

    tool_calls: int
    deadline: float  # time.monotonic()
    used: int = 0

    @classmethod
    def of(cls, limits: Limits) -> Budget:
        return cls(limits.max_tool_calls, time.monotonic() + limits.timeout)
