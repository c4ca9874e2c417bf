"""Parse and check the policy file's ``tools`` section into a :class:`Rulebase` (pure).

The section (keys camelCase or snake_case)::

    tools:
      strict: false              # true: every tool argument must be a value established by facts
      baseUrl: http://127.0.0.1:8765   # joined with relative function urls
      defaultTtl: 300            # seconds a tool-derived fact stays valid (null: the session)
      ttl: {flight_status: 60}   # per predicate; a binding's own `ttl` wins
      limits: {maxDepth: 64, maxToolCalls: 32, timeout: 10}
      contexts:                  # rebindable names usable in queries and guards
        booking_of_interest: The booking the conversation is about.
      facts: [current_user(User)]          # predicates seeded or asserted by the application
      askable:                   # established by asking the user; {Var} is filled in
        user_confirms_refund(User, Booking): Do you want a refund for booking {Booking}?
      functions:                 # the tools, as OpenAI function schemas plus a transport
        get_flight:
          description: Status of a flight.
          parameters: {type: object, properties: {flight_id: {type: string}}}
          url: /tools/get_flight           # POST JSON arguments, JSON result
      bindings:                  # which data tool establishes which base predicate
        - fact: flight_status(Flight, Status)
          tool: get_flight
          args: {flight_id: Flight}        # inputs: bound before the call
          extract: {Status: $.status}      # outputs: JSON paths into the result
          each: $.legs[*]                  # optional: one fact per item
          when: $.active                   # optional: only items where this is truthy
          ttl: 60
        - fact: refunded(Booking)
          tool: refund_booking             # an action: its result is recorded when it runs,
          args: {booking_id: Booking}
          when: $.refunded
          fetch: false                     # but the solver never calls it to find out
      guards:                    # preconditions per tool; call arguments bind variables
        refund_booking:
          args: {booking_id: Booking}
          requires:
            - eligible_for_refund(current_user, Booking)
            - user_confirms_refund(current_user, Booking)
      rules: |
        eligible_for_refund(User, Booking) :-
            booking_owner(Booking, User), booking_flight(Booking, Flight),
            flight_status(Flight, cancelled), not refunded(Booking).

A bad section raises :class:`RulebaseError` listing every problem found, each with a line and
column: of the policy file when the file's text is given (``source``), else within the
offending string (the rules block, a pattern) with the section path.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

import yaml

from sentinel_runtime.governance.paths import JsonPath, PathError, compile_path
from sentinel_runtime.governance.syntax import (
    Atom,
    Clause,
    ClauseSyntaxError,
    Comparison,
    Literal,
    Negation,
    Term,
    Variable,
    format_term,
    parse_atom,
    parse_body,
    parse_program,
)
from sentinel_runtime.guardrails.policy import Policy, snake_case

SECTION = "tools"
_KEYS = {
    "strict",
    "base_url",
    "default_ttl",
    "ttl",
    "limits",
    "contexts",
    "facts",
    "askable",
    "functions",
    "bindings",
    "guards",
    "rules",
}
_FUNCTION_KEYS = {"description", "parameters", "url", "mcp", "timeout"}
_BINDING_KEYS = {"fact", "tool", "args", "extract", "each", "when", "ttl", "fetch"}
_GUARD_KEYS = {"args", "requires"}
_LIMIT_KEYS = {"max_depth", "max_tool_calls", "timeout", "max_steps"}
_IDENTIFIER = re.compile(r"[a-z][A-Za-z0-9_]*\Z")
_TOOL_NAME = re.compile(r"[A-Za-z0-9_\-]{1,64}\Z")  # OpenAI's rule for function names
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\Z")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}
DEFAULT_TTL = 300.0


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


# -- locating problems in the policy file --------------------------------------------------


class _Locator:
    """Maps a section path (and an offset inside a string) to a line and column."""

    def __init__(self, source: str | None) -> None:
        self.lines: list[str] = []
        self.root: yaml.Node | None = None
        if source is None:
            return
        try:
            document = yaml.compose(source)
        except yaml.YAMLError:
            return
        if not isinstance(document, yaml.MappingNode):
            return
        self.lines = source.splitlines()
        for key, value in document.value:
            if isinstance(key, yaml.ScalarNode) and snake_case(str(key.value)) == SECTION:
                self.root = value

    def node(self, path: tuple[Any, ...], key: bool = False) -> yaml.Node | None:
        node = self.root
        for i, step in enumerate(path):
            if isinstance(node, yaml.MappingNode):
                found = None
                for k, v in node.value:
                    name = str(k.value)
                    if name == step or (isinstance(step, str) and snake_case(name) == step):
                        found = k if key and i == len(path) - 1 else v
                        break
                node = found
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
                node = node.value[step] if 0 <= step < len(node.value) else None
            else:
                return None
        return node

    def issue(
        self,
        message: str,
        path: tuple[Any, ...],
        offset: tuple[int, int] | None = None,
        key: bool = False,
    ) -> Issue:
        shown = _show_path(path)
        node = self.node(path, key) if self.root is not None else None
        if node is None:
            if offset is None:
                return Issue(message, shown)
            return Issue(message, shown, offset[0], offset[1])
        line, column = node.start_mark.line, node.start_mark.column
        if offset is not None and isinstance(node, yaml.ScalarNode):
            line, column = self._inside(node, offset)
        return Issue(message, shown, line + 1, column + 1, in_file=True)

    def _inside(self, node: yaml.ScalarNode, offset: tuple[int, int]) -> tuple[int, int]:
        line0, col0 = offset[0] - 1, offset[1] - 1
        mark = node.start_mark
        if node.style == "|":
            indent = 0
            for text in self.lines[mark.line + 1 :]:
                if text.strip():
                    indent = len(text) - len(text.lstrip(" "))
                    break
            return mark.line + 1 + line0, indent + col0
        if node.style in (None, '"', "'") and line0 == 0 and node.end_mark.line == mark.line:
            return mark.line, mark.column + (1 if node.style else 0) + col0
        return mark.line, mark.column


def _show_path(path: tuple[Any, ...]) -> str:
    out = SECTION
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else f".{step}"
    return out


# -- the parser ------------------------------------------------------------------------------


class _Builder:
    def __init__(self, section: Any, source: str | None) -> None:
        self.section = section
        self.locate = _Locator(source)
        self.issues: list[Issue] = []
        self.arity: dict[str, int] = {}
        self.arity_seen: dict[str, str] = {}
        self.kinds: dict[str, str] = {}
        self.contexts: dict[str, str] = {}
        self.functions: dict[str, Function] = {}
        self.clauses: dict[str, list[Clause]] = {}
        self.bindings: dict[str, list[Binding]] = {}
        self.askables: dict[str, Askable] = {}
        self.guards: dict[str, Guard] = {}
        self.ttl: dict[str, float | None] = {}
        self.default_ttl: float | None = DEFAULT_TTL
        self.strict = False
        self.limits = Limits()

    def error(
        self,
        message: str,
        path: tuple[Any, ...],
        offset: tuple[int, int] | None = None,
        key: bool = False,
    ) -> None:
        self.issues.append(self.locate.issue(message, path, offset, key))

    # each part --------------------------------------------------------------------------

    def build(self) -> Rulebase:
        if not isinstance(self.section, Mapping):
            self.error(f"the section is a {type(self.section).__name__}, not a mapping", ())
            raise RulebaseError(self.issues)
        top = {snake_case(str(k)): v for k, v in self.section.items()}
        for key in sorted(set(top) - _KEYS):
            self.error(f"unknown key {key!r} (known: {', '.join(sorted(_KEYS))})", (key,), key=True)
        self.strict = self._bool(top.get("strict", False), ("strict",))
        self.default_ttl = self._duration(top.get("default_ttl", DEFAULT_TTL), ("default_ttl",))
        self._limits(top.get("limits"))
        self._contexts(top.get("contexts"))
        self._functions(top.get("functions"), top.get("base_url"))
        clauses = self._rules(top.get("rules"))
        self._facts(top.get("facts"))
        self._askables(top.get("askable"))
        self._bindings(top.get("bindings"))
        for clause, path in clauses:
            self._declare(clause.head, "derived", path, (clause.head.line, clause.head.column))
            self.clauses.setdefault(clause.head.predicate, []).append(clause)
        self._ttl(top.get("ttl"))
        self._guards(top.get("guards"))
        ordered = {
            name: [self._check_clause(c, p) for c, p in clauses if c.head.predicate == name]
            for name in self.clauses
        }
        self._stratify(clauses)
        self._guard_cycles()
        if self.issues:
            raise RulebaseError(self.issues)
        return Rulebase(
            id=_digest(self.section),
            clauses={name: tuple(cs) for name, cs in ordered.items()},
            arity=dict(self.arity),
            kinds=dict(self.kinds),
            functions=dict(self.functions),
            bindings={name: tuple(bs) for name, bs in self.bindings.items()},
            guards=dict(self.guards),
            askables=dict(self.askables),
            contexts=dict(self.contexts),
            ttl=dict(self.ttl),
            default_ttl=self.default_ttl,
            strict=self.strict,
            limits=self.limits,
        )

    def _bool(self, value: Any, path: tuple[Any, ...]) -> bool:
        if isinstance(value, bool):
            return value
        self.error(f"expected true or false, got {value!r}", path)
        return False

    def _duration(self, value: Any, path: tuple[Any, ...]) -> float | None:
        if value is None or value == "session":
            return None
        if isinstance(value, bool):
            self.error(
                f"expected seconds, a duration such as 60s or 5m, or null; got {value}", path
            )
            return None
        if isinstance(value, int | float) and value >= 0:
            return float(value)
        match = _DURATION.match(str(value).strip()) if isinstance(value, str) else None
        if match is None:
            self.error(
                f"expected seconds, a duration such as 60s or 5m, or null; got {value!r}", path
            )
            return None
        return float(match.group(1)) * _UNITS[match.group(2)]

    def _mapping(self, value: Any, path: tuple[Any, ...], what: str) -> Mapping[Any, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.error(f"{what} must be a mapping, not a {type(value).__name__}", path)
            return {}
        return value

    def _limits(self, value: Any) -> None:
        raw = self._mapping(value, ("limits",), "limits")
        fields: dict[str, Any] = {}
        for key, item in raw.items():
            name = snake_case(str(key))
            path = ("limits", str(key))
            if name not in _LIMIT_KEYS:
                self.error(
                    f"unknown limit {key!r} (known: {', '.join(sorted(_LIMIT_KEYS))})",
                    path,
                    key=True,
                )
            elif name == "timeout":
                seconds = self._duration(item, path)
                if seconds is not None and seconds > 0:
                    fields[name] = seconds
                else:
                    self.error("timeout must be a positive duration", path)
            elif isinstance(item, int) and not isinstance(item, bool) and item > 0:
                fields[name] = item
            else:
                self.error(f"{key} must be a positive integer, got {item!r}", path)
        self.limits = Limits(**fields)

    def _contexts(self, value: Any) -> None:
        if isinstance(value, list):
            entries: Mapping[Any, Any] = {}
            for i, name in enumerate(value):
                if isinstance(name, str):
                    entries = {**entries, name: ""}
                else:
                    self.error(f"a context name is a string, not {name!r}", ("contexts", i))
            value = entries
        for name, description in self._mapping(value, ("contexts",), "contexts").items():
            if not isinstance(name, str) or not _IDENTIFIER.match(name):
                self.error(
                    f"a context name is a lower-case name such as booking_of_interest, "
                    f"not {name!r}",
                    ("contexts", name),
                    key=True,
                )
                continue
            self.contexts[name] = "" if description is None else str(description)

    def _functions(self, value: Any, base_url: Any) -> None:
        if base_url is not None and not isinstance(base_url, str):
            self.error("baseUrl must be a string", ("base_url",))
            base_url = None
        for name, raw_spec in self._mapping(value, ("functions",), "functions").items():
            path = ("functions", name)
            if not isinstance(name, str) or not _TOOL_NAME.match(name):
                self.error(
                    f"a function name has 1-64 letters, digits, _ or -, not {name!r}",
                    path,
                    key=True,
                )
                continue
            spec = self._mapping(raw_spec, path, f"function {name}")
            fields = {snake_case(str(k)): v for k, v in spec.items()}
            for key in sorted(set(fields) - _FUNCTION_KEYS):
                self.error(f"unknown key {key!r} in function {name}", (*path, key), key=True)
            description = fields.get("description", "")
            parameters = fields.get("parameters", {"type": "object", "properties": {}})
            if not isinstance(parameters, Mapping):
                self.error("parameters must be a JSON schema mapping", (*path, "parameters"))
                parameters = {"type": "object", "properties": {}}
            url = fields.get("url")
            if url is not None and not isinstance(url, str):
                self.error("url must be a string", (*path, "url"))
                url = None
            if url is not None and base_url and not re.match(r"https?://", url):
                url = urljoin(base_url.rstrip("/") + "/", url.lstrip("/"))
            elif url is not None and not re.match(r"https?://", url):
                self.error(
                    f"url {url!r} is relative and the section has no baseUrl", (*path, "url")
                )
            mcp = fields.get("mcp")
            if isinstance(mcp, str):
                mcp = {"command": mcp} if not re.match(r"https?://", mcp) else {"url": mcp}
            if mcp is not None and not isinstance(mcp, Mapping):
                self.error("mcp must be a URL, a command or a mapping", (*path, "mcp"))
                mcp = None
            timeout = self._duration(fields.get("timeout", 10.0), (*path, "timeout")) or 10.0
            self.functions[name] = Function(
                name,
                str(description or ""),
                dict(parameters),
                url,
                dict(mcp) if mcp else None,
                timeout,
            )

    def _rules(self, value: Any) -> list[tuple[Clause, tuple[Any, ...]]]:
        if value is None:
            return []
        if isinstance(value, list):
            texts = [(item, ("rules", i)) for i, item in enumerate(value)]
        else:
            texts = [(value, ("rules",))]
        out: list[tuple[Clause, tuple[Any, ...]]] = []
        for text, path in texts:
            if not isinstance(text, str):
                self.error("rules are a block of text (rules: |) or a list of strings", path)
                continue
            clauses, problems = parse_program(text)
            for problem in problems:
                self.error(problem.message, path, (problem.line, problem.column))
            out.extend((clause, path) for clause in clauses)
        return out

    def _pattern(self, text: Any, path: tuple[Any, ...], key: bool = False) -> Atom | None:
        if not isinstance(text, str):
            self.error(f"expected a pattern such as p(X, Y), got {text!r}", path, key=key)
            return None
        slash = re.fullmatch(r"\s*([a-z][A-Za-z0-9_]*)\s*/\s*(\d+)\s*", text)
        if slash:
            arity = int(slash.group(2))
            return Atom(slash.group(1), tuple(Variable(f"A{i + 1}") for i in range(arity)), 1, 1)
        try:
            atom = parse_atom(text)
        except ClauseSyntaxError as problem:
            self.error(
                problem.message, path, None if key else (problem.line, problem.column), key=key
            )
            return None
        names = [a.name for a in atom.args if isinstance(a, Variable)]
        if len(names) != len(atom.args) or len(set(names)) != len(names):
            self.error(
                f"a pattern has distinct variables as arguments: {atom}",
                path,
                None if key else (atom.line, atom.column),
                key=key,
            )
            return None
        return atom

    def _declare(
        self,
        atom: Atom,
        kind: str,
        path: tuple[Any, ...],
        offset: tuple[int, int] | None,
        key: bool = False,
    ) -> None:
        self._use(atom, path, offset, key)
        known = self.kinds.get(atom.predicate)
        if known is None:
            self.kinds[atom.predicate] = kind
        elif known != kind:
            what = {
                "derived": "derived by rules",
                "tool": "established by a tool binding",
                "askable": "askable",
                "fact": "a declared fact",
            }
            self.error(
                f"{atom.predicate} is {what[known]}; it cannot also be {what[kind]}",
                path,
                offset,
                key,
            )
        elif kind in ("askable", "fact"):
            self.error(f"{atom.predicate} is declared twice", path, offset, key)

    def _use(
        self, atom: Atom, path: tuple[Any, ...], offset: tuple[int, int] | None, key: bool = False
    ) -> bool:
        known = self.arity.get(atom.predicate)
        if known is None:
            self.arity[atom.predicate] = atom.arity
            self.arity_seen[atom.predicate] = str(atom)
            return True
        if known != atom.arity:
            self.error(
                f"{atom.predicate} has {known} argument{'s' if known != 1 else ''} "
                f"(as in {self.arity_seen[atom.predicate]}), not {atom.arity} as in {atom}",
                path,
                offset,
                key,
            )
            return False
        return True

    def _facts(self, value: Any) -> None:
        if value is None:
            return
        if not isinstance(value, list):
            self.error("facts is a list of patterns such as current_user(User)", ("facts",))
            return
        for i, text in enumerate(value):
            atom = self._pattern(text, ("facts", i))
            if atom is not None:
                self._declare(atom, "fact", ("facts", i), (atom.line, atom.column))

    def _askables(self, value: Any) -> None:
        for text, raw_question in self._mapping(value, ("askable",), "askable").items():
            path = ("askable", text)
            atom = self._pattern(text, path, key=True)
            question = (
                raw_question.get("question") if isinstance(raw_question, Mapping) else raw_question
            )
            if not isinstance(question, str) or not question.strip():
                self.error("an askable predicate needs a question for the user", path)
                continue
            if atom is not None:
                self._declare(atom, "askable", path, None, key=True)
                self.askables[atom.predicate] = Askable(atom, question.strip())

    def _bindings(self, value: Any) -> None:
        if value is None:
            return
        if not isinstance(value, list):
            self.error("bindings is a list of {fact, tool, args, extract}", ("bindings",))
            return
        for index, item in enumerate(value):
            path: tuple[Any, ...] = ("bindings", index)
            raw = self._mapping(item, path, "a binding")
            fields = {snake_case(str(k)): (k, v) for k, v in raw.items()}
            for key in sorted(set(fields) - _BINDING_KEYS):
                self.error(f"unknown key {key!r} in a binding", (*path, fields[key][0]), key=True)
            for needed in ("fact", "tool"):
                if needed not in fields:
                    self.error(f"a binding needs {needed!r}", path)
            if "fact" not in fields or "tool" not in fields:
                continue
            atom = self._pattern(fields["fact"][1], (*path, fields["fact"][0]))
            tool = fields["tool"][1]
            if not isinstance(tool, str) or tool not in self.functions:
                self.error(
                    f"binding names tool {tool!r}, which is not under functions",
                    (*path, fields["tool"][0]),
                )
                tool = None
            if atom is None:
                continue
            self._declare(atom, "tool", (*path, fields["fact"][0]), (atom.line, atom.column))
            variables = {a.name for a in atom.variables()}
            args = self._arguments(fields.get("args", (None, {})), path, variables, "binding")
            inputs = {t.name for t in args.values() if isinstance(t, Variable)}
            extract: dict[str, JsonPath] = {}
            named: set[str] = set()
            raw_extract = fields.get("extract", ("extract", {}))
            for var, text in self._mapping(
                raw_extract[1], (*path, raw_extract[0]), "extract"
            ).items():
                where = (*path, raw_extract[0], var)
                if var not in variables:
                    self.error(
                        f"extract names {var!r}, which is not a variable of {atom}", where, key=True
                    )
                elif var in inputs:
                    self.error(
                        f"{var} is an input (in args); it cannot also be extracted", where, key=True
                    )
                named.add(str(var))
                compiled = self._path(text, where, fan_out=False)
                if compiled is not None:
                    extract[str(var)] = compiled
            for name in sorted(variables - inputs - named):
                self.error(
                    f"variable {name} of {atom} is neither in args nor in extract",
                    (*path, fields["fact"][0]),
                )
            each = (
                self._path(fields["each"][1], (*path, fields["each"][0]), fan_out=True)
                if "each" in fields
                else None
            )
            when = (
                self._path(fields["when"][1], (*path, fields["when"][0]), fan_out=False)
                if "when" in fields
                else None
            )
            ttl = (
                self._duration(fields["ttl"][1], (*path, fields["ttl"][0]))
                if "ttl" in fields
                else None
            )
            fetch = (
                self._bool(fields["fetch"][1], (*path, fields["fetch"][0]))
                if "fetch" in fields
                else True
            )
            if tool is not None:
                self.bindings.setdefault(atom.predicate, []).append(
                    Binding(index, atom, tool, args, extract, each, when, ttl, fetch)
                )

    def _arguments(
        self, item: tuple[Any, Any], path: tuple[Any, ...], variables: set[str], what: str
    ) -> dict[str, Term]:
        key, raw = item
        out: dict[str, Term] = {}
        for name, value in self._mapping(raw, (*path, key), "args").items():
            where = (*path, key, name)
            if isinstance(value, str) and (value[:1].isupper() or value == "_"):
                if value not in variables and what == "binding":
                    self.error(
                        f"args maps {name} to {value}, which is not a variable of the fact pattern",
                        where,
                    )
                    continue
                out[str(name)] = Variable(value)
            elif isinstance(value, str | int | float) and not isinstance(value, bool):
                out[str(name)] = value
            else:
                self.error(f"an argument maps to a Variable or a constant, not {value!r}", where)
        return out

    def _path(self, text: Any, path: tuple[Any, ...], fan_out: bool) -> JsonPath | None:
        if not isinstance(text, str):
            self.error(f"expected a JSON path such as $.status, got {text!r}", path)
            return None
        try:
            compiled = compile_path(text.strip())
        except PathError as exc:
            self.error(str(exc), path, (1, exc.offset + 1))
            return None
        if compiled.fans_out and not fan_out:
            self.error("[*] gives many values; use it in `each`, not here", path)
            return None
        return compiled

    def _ttl(self, value: Any) -> None:
        for name, seconds in self._mapping(value, ("ttl",), "ttl").items():
            if name not in self.bindings:
                self.error(
                    f"ttl names {name!r}, which no binding establishes", ("ttl", name), key=True
                )
                continue
            self.ttl[str(name)] = self._duration(seconds, ("ttl", name))

    def _guards(self, value: Any) -> None:
        for tool, item in self._mapping(value, ("guards",), "guards").items():
            path: tuple[Any, ...] = ("guards", tool)
            if tool not in self.functions:
                self.error(f"guard for unknown tool {tool!r} (not under functions)", path, key=True)
                continue
            raw = {"requires": item} if isinstance(item, str | list) else item
            fields = {
                snake_case(str(k)): (k, v) for k, v in self._mapping(raw, path, "a guard").items()
            }
            for key in sorted(set(fields) - _GUARD_KEYS):
                self.error(f"unknown key {key!r} in a guard", (*path, fields[key][0]), key=True)
            args = self._arguments(fields.get("args", (None, {})), path, set(), "guard")
            requires_key, requires = fields.get("requires", ("requires", None))
            texts = requires if isinstance(requires, list) else [requires]
            literals: list[Literal] = []
            for i, text in enumerate(texts):
                where = (
                    (*path, requires_key, i)
                    if isinstance(requires, list)
                    else (*path, requires_key)
                )
                if not isinstance(text, str):
                    self.error("requires is a goal such as p(X), q(X) or a list of them", where)
                    continue
                try:
                    parsed = parse_body(text)
                except ClauseSyntaxError as problem:
                    self.error(problem.message, where, (problem.line, problem.column))
                    continue
                for lit in parsed:
                    self._check_literal(lit, where, allow_contexts=True)
                literals.extend(parsed)
            bound = {t.name for t in args.values() if isinstance(t, Variable)}
            ordered = self._order(literals, bound, path, "guard")
            self.guards[str(tool)] = Guard(str(tool), args, tuple(ordered))

    # checks --------------------------------------------------------------------------------

    def _check_literal(self, lit: Literal, path: tuple[Any, ...], allow_contexts: bool) -> None:
        atom = lit.atom if isinstance(lit, Negation) else lit
        terms = (lit.left, lit.right) if isinstance(lit, Comparison) else atom.args
        for term in terms:
            if isinstance(term, str) and term in self.contexts and not allow_contexts:
                self.error(
                    f"context {term} is usable in queries and guards, not in rules",
                    path,
                    (lit.line, lit.column),
                )
        if isinstance(atom, Atom):
            if atom.predicate not in self.arity:
                self.error(
                    f"unknown predicate {atom.predicate}/{atom.arity}: no rule, binding, "
                    "askable or facts entry defines it",
                    path,
                    (atom.line, atom.column),
                )
            else:
                self._use(atom, path, (atom.line, atom.column))

    def _check_clause(self, clause: Clause, path: tuple[Any, ...]) -> Clause:
        for lit in clause.body:
            self._check_literal(lit, path, allow_contexts=False)
        for term in clause.head.args:
            if isinstance(term, str) and term in self.contexts:
                self.error(
                    f"context {term} is usable in queries and guards, not in rules",
                    path,
                    (clause.head.line, clause.head.column),
                )
        body = self._order(list(clause.body), set(), path, "rule")
        bound = _bound_by(body, set())
        for var in clause.head.variables():
            if var.name not in bound:
                self.error(
                    f"unsafe variable {var.name}: it appears in the head {clause.head} but in "
                    "no positive atom of the body",
                    path,
                    (clause.head.line, clause.head.column),
                )
                break
        return Clause(clause.head, tuple(body), clause.line, clause.column)

    def _order(
        self, literals: list[Literal], bound: set[str], path: tuple[Any, ...], what: str
    ) -> list[Literal]:
        """Order for solving (see :func:`order_literals`); an unsafe literal is a problem."""
        ordered, waiting = order_literals(literals, bound)
        known = _bound_by(ordered, bound)
        for lit in waiting:
            free = sorted({v.name for v in lit.variables()} - known)
            self.error(
                f"unsafe variable {', '.join(free)} in {lit}: a negation or comparison needs "
                f"its variables bound by a positive atom of the {what}",
                path,
                (lit.line, lit.column),
            )
        return ordered

    def _stratify(self, clauses: list[tuple[Clause, tuple[Any, ...]]]) -> None:
        edges: dict[str, set[str]] = {}
        negative: list[tuple[str, str, Negation, tuple[Any, ...]]] = []
        for clause, path in clauses:
            head = clause.head.predicate
            for lit in clause.body:
                if isinstance(lit, Atom):
                    edges.setdefault(head, set()).add(lit.predicate)
                elif isinstance(lit, Negation):
                    edges.setdefault(head, set()).add(lit.atom.predicate)
                    negative.append((head, lit.atom.predicate, lit, path))
        component = _components(edges)
        for head, target, lit, path in negative:
            if component.get(head) is not None and component.get(head) == component.get(target):
                self.error(
                    f"unstratified negation: {head} depends on not {target}, and {target} "
                    f"depends on {head}; negation through recursion has no single meaning",
                    path,
                    (lit.line, lit.column),
                )

    def _guard_cycles(self) -> None:
        def tools_of(predicates: Iterable[str]) -> set[str]:
            seen: set[str] = set()
            stack = list(predicates)
            tools: set[str] = set()
            while stack:
                name = stack.pop()
                if name in seen:
                    continue
                seen.add(name)
                tools.update(b.tool for b in self.bindings.get(name, ()) if b.fetch)
                for clause in self.clauses.get(name, ()):
                    for lit in clause.body:
                        atom = lit.atom if isinstance(lit, Negation) else lit
                        if isinstance(atom, Atom):
                            stack.append(atom.predicate)
            return tools

        calls = {
            tool: tools_of(
                (lit.atom if isinstance(lit, Negation) else lit).predicate
                for lit in guard.requires
                if not isinstance(lit, Comparison)
            )
            for tool, guard in self.guards.items()
        }
        for tool, called in calls.items():
            stack, seen = list(called), set()
            while stack:
                other = stack.pop()
                if other == tool:
                    self.error(
                        f"the guard of {tool} needs facts that only {tool} itself establishes "
                        "(through its preconditions' bindings): it could never be called",
                        ("guards", tool),
                        key=True,
                    )
                    break
                if other not in seen:
                    seen.add(other)
                    stack.extend(calls.get(other, ()))


class GoalError(ValueError):
    """A query or precondition that cannot be solved as written (unknown predicate, arity,
    unsafe negation); ``column`` is 1-based within the goal's text when known."""

    def __init__(self, message: str, column: int | None = None) -> None:
        super().__init__(message)
        self.column = column


def order_literals(
    literals: Iterable[Literal], bound: set[str]
) -> tuple[list[Literal], list[Literal]]:
    """Positive atoms keep their order; a negation or comparison moves to the first place where
    its variables are bound. Returns the ordered literals and the unsafe ones (never ready)."""
    ordered: list[Literal] = []
    pending = list(literals)
    waiting = [lit for lit in pending if not isinstance(lit, Atom)]
    known = set(bound)

    def release() -> None:
        progress = True
        while progress:
            progress = False
            for lit in list(waiting):
                if _ready(lit, known):
                    waiting.remove(lit)
                    ordered.append(lit)
                    known.update(v.name for v in lit.variables())
                    progress = True

    release()
    for lit in pending:
        if isinstance(lit, Atom):
            ordered.append(lit)
            known.update(v.name for v in lit.variables())
            release()
    return ordered, waiting


def compile_goal(rulebase: Rulebase, goal: str | Iterable[Literal]) -> tuple[Literal, ...]:
    """A goal's literals checked against the rulebase (known predicates, arity, safety) and
    ordered for solving. Context names stay as constants; the solver resolves them."""
    if isinstance(goal, str):
        try:
            literals = parse_body(goal)
        except ClauseSyntaxError as problem:
            raise GoalError(problem.message, problem.column) from problem
    else:
        literals = tuple(goal)
    for lit in literals:
        atom = lit.atom if isinstance(lit, Negation) else lit
        if not isinstance(atom, Atom):
            continue
        arity = rulebase.arity.get(atom.predicate)
        if arity is None:
            known = ", ".join(f"{n}/{a}" for n, a in sorted(rulebase.arity.items()))
            raise GoalError(f"unknown predicate {atom.predicate} (known: {known})", atom.column)
        if arity != atom.arity:
            raise GoalError(
                f"{atom.predicate} has {arity} argument{'s' if arity != 1 else ''}, "
                f"not {atom.arity}",
                atom.column,
            )
    ordered, unsafe = order_literals(literals, set())
    if unsafe:
        lit = unsafe[0]
        raise GoalError(
            f"{lit} needs its variables bound by a positive atom of the goal", lit.column
        )
    return tuple(ordered)


def _ready(lit: Literal, known: set[str]) -> bool:
    if isinstance(lit, Comparison) and lit.op == "=":
        sides = [t for t in (lit.left, lit.right) if isinstance(t, Variable)]
        return sum(1 for v in sides if v.name not in known) <= 1 and (
            len(sides) < 2 or any(v.name in known for v in sides)
        )
    names = {v.name for v in lit.variables()}
    if isinstance(lit, Negation):
        names = {n for n in names if not n.startswith("_")}  # anonymous: "no value at all"
    return names <= known


def _bound_by(literals: Iterable[Literal], bound: set[str]) -> set[str]:
    known = set(bound)
    for lit in literals:
        if isinstance(lit, Atom) or (isinstance(lit, Comparison) and lit.op == "="):
            known.update(v.name for v in lit.variables())
    return known


def _components(edges: Mapping[str, set[str]]) -> dict[str, int]:
    """Strongly connected components (Tarjan), numbered; a node alone without a self-loop has
    no component, since only cycles matter for stratification."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: dict[str, int] = {}
    counter = 0
    number = 0
    nodes = set(edges) | {t for ts in edges.values() for t in ts}

    def visit(node: str) -> None:
        nonlocal counter, number
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1 or node in edges.get(node, ()):
                for member in members:
                    result[member] = number
                number += 1

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return result


def _digest(section: Any) -> str:
    return hashlib.sha256(json.dumps(section, sort_keys=True, default=str).encode()).hexdigest()


def parse_rulebase(section: Any, source: str | None = None) -> Rulebase:
    """The rulebase of a ``tools`` section; ``source`` (the policy file's text) lets problems
    carry the file's line and column. Raises :class:`RulebaseError` with every problem."""
    return _Builder(section, source).build()


_CACHE_SIZE = 8
_cache: OrderedDict[str, Rulebase | RulebaseError] = OrderedDict()
_cache_lock = threading.Lock()


def for_policy(policy: Policy | None, source: str | None = None) -> Rulebase | None:
    """The rulebase of a policy version (None without a ``tools`` section), parsed once per
    policy hash; a bad section raises the same :class:`RulebaseError` each time."""
    if policy is None or SECTION not in policy.sections:
        return None
    with _cache_lock:
        cached = _cache.get(policy.sha256)
        if cached is not None:
            _cache.move_to_end(policy.sha256)
    if cached is None:
        try:
            cached = parse_rulebase(policy.sections[SECTION], source)
        except RulebaseError as exc:
            cached = exc
        with _cache_lock:
            _cache[policy.sha256] = cached
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    if isinstance(cached, RulebaseError):
        raise cached
    return cached


__all__ = [
    "Askable",
    "Binding",
    "Function",
    "GoalError",
    "Guard",
    "Issue",
    "Limits",
    "Rulebase",
    "RulebaseError",
    "compile_goal",
    "for_policy",
    "format_term",
    "order_literals",
    "parse_rulebase",
]
