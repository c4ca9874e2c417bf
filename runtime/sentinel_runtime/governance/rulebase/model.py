"""What a parsed ``tools`` section is: :class:`Rulebase` and its parts, and the errors (pure).

:mod:`.build` makes these from the policy file's section, :mod:`.checks` validates rules and
goals against them; the solver, the guards, the fact extraction and the tool client read them.
Every class is frozen: one rulebase serves every session of a policy version.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sentinel_runtime.governance.paths import JsonPath
from sentinel_runtime.governance.syntax import Atom, Clause, Literal, Term, Variable

SECTION = "tools"  # the policy file's key for the rulebase
DEFAULT_TTL = 300.0

SectionPath = tuple[Any, ...]  # keys and list indexes from the section, e.g. ("bindings", 1)
Offset = tuple[int, int]  # 1-based line and column inside a string value (a rules block)


@dataclass(frozen=True)
class Problem:
    """A problem found before it is located in the policy file (see :mod:`.locate`)."""

    message: str
    path: SectionPath
    offset: Offset | None = None
    key: bool = False  # at the mapping key of ``path`` rather than at its value


@dataclass(frozen=True)
class Issue:
    message: str
    path: str  # where in the section, e.g. "tools.bindings[1].extract"
    line: int | None = None  # 1-based
    column: int | None = None
    in_file: bool = False  # line/column of the policy file, else within the string at `path`

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.message}"
        where = "" if self.in_file else f" of {self.path}"
        return f"line {self.line}, column {self.column}{where} ({self.path}): {self.message}"


def _issue_order(issue: Issue) -> tuple[Any, ...]:
    # Problems located in the file first, top to bottom, so the report reads like the file.
    in_file_line = (issue.line or 0) if issue.in_file else 0
    return (not issue.in_file, in_file_line, issue.path, issue.line or 0, issue.column or 0)


class RulebaseError(ValueError):
    """Every problem of a bad ``tools`` section; ``message``/``line``/``column`` are the first's."""

    def __init__(self, issues: Iterable[Issue]) -> None:
        self.issues = tuple(sorted(issues, key=_issue_order))
        first = self.issues[0]
        self.message = first.message
        self.line = first.line
        self.column = first.column
        count = len(self.issues)
        heading = f"the tools section has {count} problem{'s' if count > 1 else ''}"
        super().__init__(heading + ":\n" + "\n".join(f"  {issue}" for issue in self.issues))


class GoalError(ValueError):
    """A query or precondition that cannot be solved as written (unknown predicate, arity,
    unsafe negation); ``column`` is 1-based within the goal's text when known."""

    def __init__(self, message: str, column: int | None = None) -> None:
        super().__init__(message)
        self.column = column


@dataclass(frozen=True)
class Limits:
    max_depth: int = 64  # nested goals in one branch
    max_tool_calls: int = 32  # tool calls one proof may make (guards' own included)
    timeout: float = 10.0  # seconds of wall time for one proof
    max_steps: int = 200_000  # resolution steps, so a huge search stops with a clear result


@dataclass(frozen=True)
class Function:
    """A tool the LLM or the solver may call."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    url: str | None = None
    mcp: Mapping[str, Any] | None = None
    timeout: float = 10.0

    def openai_schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


@dataclass(frozen=True)
class Binding:
    """``fact`` is established by calling ``tool`` with ``args``; outputs come from ``extract``."""

    index: int
    pattern: Atom
    tool: str
    args: Mapping[str, Term]  # tool argument -> a pattern variable (an input) or a constant
    extract: Mapping[str, JsonPath]  # pattern variable name -> path (relative to each item)
    each: JsonPath | None
    when: JsonPath | None
    ttl: float | None  # None: valid for the session
    fetch: bool = True  # False: the solver never calls the tool for it (e.g. an action's result)

    @property
    def predicate(self) -> str:
        return self.pattern.predicate

    @property
    def input_positions(self) -> tuple[int, ...]:
        names = {t.name for t in self.args.values() if isinstance(t, Variable)}
        return tuple(
            i
            for i, a in enumerate(self.pattern.args)
            if isinstance(a, Variable) and a.name in names
        )


@dataclass(frozen=True)
class Askable:
    pattern: Atom
    question: str

    def ask(self, args: tuple[Any, ...]) -> str:
        text = self.question
        for term, value in zip(self.pattern.args, args, strict=True):
            if isinstance(term, Variable) and not isinstance(value, Variable):
                text = text.replace("{" + term.name + "}", str(value))
        return text


@dataclass(frozen=True)
class Guard:
    tool: str
    args: Mapping[str, Term]  # tool argument -> variable (bound from the call) or constant
    requires: tuple[Literal, ...]  # each one a precondition, in the author's order

    def text(self) -> str:
        return ", ".join(str(lit) for lit in self.requires)


# eq=False: compared and hashed by identity (its mappings are not hashable), so it can key the
# solver's weak cache of compiled programs.
@dataclass(frozen=True, eq=False)
class Rulebase:
    id: str  # sha256 of the section's canonical JSON
    clauses: Mapping[str, tuple[Clause, ...]]  # derived predicate -> clauses, bodies ordered
    arity: Mapping[str, int]
    kinds: Mapping[str, str]  # predicate -> derived | tool | askable | fact
    functions: Mapping[str, Function]
    bindings: Mapping[str, tuple[Binding, ...]]  # predicate -> bindings
    guards: Mapping[str, Guard]
    askables: Mapping[str, Askable]
    contexts: Mapping[str, str]  # name -> description
    ttl: Mapping[str, float | None]  # predicate -> seconds (None: session)
    default_ttl: float | None = DEFAULT_TTL
    strict: bool = False
    limits: Limits = field(default_factory=Limits)

    def bindings_of_tool(self, tool: str) -> tuple[Binding, ...]:
        return tuple(b for bs in self.bindings.values() for b in bs if b.tool == tool)

    def ttl_of(self, binding: Binding) -> float | None:
        if binding.ttl is not None or binding.predicate in self.ttl:
            return binding.ttl if binding.ttl is not None else self.ttl[binding.predicate]
        return self.default_ttl

    def tool_schemas(self) -> list[dict[str, Any]]:
        return [f.openai_schema() for f in self.functions.values()]

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "strict": self.strict,
            "contexts": dict(self.contexts),
            "predicates": {
                name: {"arity": self.arity[name], "kind": kind}
                for name, kind in sorted(self.kinds.items())
            },
            "askable": {name: a.question for name, a in self.askables.items()},
            "guards": {name: g.text() for name, g in self.guards.items()},
            "tools": self.tool_schemas(),
            "rules": [str(c) for cs in self.clauses.values() for c in cs],
        }
