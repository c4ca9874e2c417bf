"""Parse the policy file's ``tools`` section into a :class:`~.model.Rulebase` (pure but for
the cache of :func:`for_policy`).

The section's keys are described in the package's docstring. The builder reads each part in
an order where every name is declared before it is used (contexts and functions, then rules,
facts, askables and bindings, then ttl and guards), with the typed readers of :mod:`.values`;
it keeps going after a problem so that every problem is reported at once, then runs the static
checks of :mod:`.checks`.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

from sentinel_runtime.governance.paths import JsonPath
from sentinel_runtime.governance.rulebase import checks
from sentinel_runtime.governance.rulebase.model import (
    DEFAULT_TTL,
    SECTION,
    Askable,
    Binding,
    Function,
    Guard,
    Limits,
    Offset,
    Rulebase,
    RulebaseError,
    SectionPath,
)
from sentinel_runtime.governance.rulebase.values import Reader
from sentinel_runtime.governance.syntax import (
    Atom,
    Clause,
    ClauseSyntaxError,
    Literal,
    Variable,
    parse_body,
    parse_program,
)
from sentinel_runtime.guardrails.policy import Policy, snake_case

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


class _Builder(Reader):
    """Reads each part of the section into the rulebase's parts, declaring predicates."""

    def __init__(self, section: Any, source: str | None) -> None:
        super().__init__(source)
        self.section = section
        self.arity: dict[str, int] = {}
        self.arity_seen: dict[str, str] = {}
        self.kinds: dict[str, str] = {}
        self.contexts: dict[str, str] = {}
        # A live view: the checks see every name declared so far.
        self.declared = checks.Declared(self.arity, self.arity_seen, self.contexts)
        self.functions: dict[str, Function] = {}
        self.clauses: dict[str, list[Clause]] = {}
        self.bindings: dict[str, list[Binding]] = {}
        self.askables: dict[str, Askable] = {}
        self.guards: dict[str, Guard] = {}
        self.ttl: dict[str, float | None] = {}
        self.default_ttl: float | None = DEFAULT_TTL
        self.strict = False
        self.limits = Limits()

    # each part --------------------------------------------------------------------------

    def build(self) -> Rulebase:
        if not isinstance(self.section, Mapping):
            self.error(f"the section is a {type(self.section).__name__}, not a mapping", ())
            raise RulebaseError(self.issues)
        top = {snake_case(str(k)): v for k, v in self.section.items()}
        for key in sorted(set(top) - _KEYS):
            self.error(f"unknown key {key!r} (known: {', '.join(sorted(_KEYS))})", (key,), key=True)
        self.strict = self.flag(top.get("strict", False), ("strict",))
        self.default_ttl = self.duration(top.get("default_ttl", DEFAULT_TTL), ("default_ttl",))
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
            name: [self._checked(c, p) for c, p in clauses if c.head.predicate == name]
            for name in self.clauses
        }
        self.report(checks.stratification_problems(clauses))
        self.report(checks.guard_cycle_problems(self.guards, self.bindings, self.clauses))
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

    def _limits(self, value: Any) -> None:
        raw = self.mapping(value, ("limits",), "limits")
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
                seconds = self.duration(item, path)
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
        for name, description in self.mapping(value, ("contexts",), "contexts").items():
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
        for name, raw_spec in self.mapping(value, ("functions",), "functions").items():
            path = ("functions", name)
            if not isinstance(name, str) or not _TOOL_NAME.match(name):
                self.error(
                    f"a function name has 1-64 letters, digits, _ or -, not {name!r}",
                    path,
                    key=True,
                )
                continue
            spec = self.mapping(raw_spec, path, f"function {name}")
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
            timeout = self.duration(fields.get("timeout", 10.0), (*path, "timeout")) or 10.0
            self.functions[name] = Function(
                name,
                str(description or ""),
                dict(parameters),
                url,
                dict(mcp) if mcp else None,
                timeout,
            )

    def _rules(self, value: Any) -> list[tuple[Clause, SectionPath]]:
        if value is None:
            return []
        if isinstance(value, list):
            texts = [(item, ("rules", i)) for i, item in enumerate(value)]
        else:
            texts = [(value, ("rules",))]
        out: list[tuple[Clause, SectionPath]] = []
        for text, path in texts:
            if not isinstance(text, str):
                self.error("rules are a block of text (rules: |) or a list of strings", path)
                continue
            clauses, problems = parse_program(text)
            for problem in problems:
                self.error(problem.message, path, (problem.line, problem.column))
            out.extend((clause, path) for clause in clauses)
        return out

    def _declare(
        self,
        atom: Atom,
        kind: str,
        path: SectionPath,
        offset: Offset | None,
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

    def _use(self, atom: Atom, path: SectionPath, offset: Offset | None, key: bool = False) -> bool:
        if atom.predicate not in self.arity:
            self.arity[atom.predicate] = atom.arity
            self.arity_seen[atom.predicate] = str(atom)
            return True
        mismatch = checks.arity_mismatch(atom, self.declared)
        if mismatch is not None:
            self.error(mismatch, path, offset, key)
            return False
        return True

    def _facts(self, value: Any) -> None:
        if value is None:
            return
        if not isinstance(value, list):
            self.error("facts is a list of patterns such as current_user(User)", ("facts",))
            return
        for i, text in enumerate(value):
            atom = self.pattern(text, ("facts", i))
            if atom is not None:
                self._declare(atom, "fact", ("facts", i), (atom.line, atom.column))

    def _askables(self, value: Any) -> None:
        for text, raw_question in self.mapping(value, ("askable",), "askable").items():
            path = ("askable", text)
            atom = self.pattern(text, path, key=True)
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
            path: SectionPath = ("bindings", index)
            raw = self.mapping(item, path, "a binding")
            fields = {snake_case(str(k)): (k, v) for k, v in raw.items()}
            for key in sorted(set(fields) - _BINDING_KEYS):
                self.error(f"unknown key {key!r} in a binding", (*path, fields[key][0]), key=True)
            for needed in ("fact", "tool"):
                if needed not in fields:
                    self.error(f"a binding needs {needed!r}", path)
            if "fact" not in fields or "tool" not in fields:
                continue
            atom = self.pattern(fields["fact"][1], (*path, fields["fact"][0]))
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
            args = self.arguments(fields.get("args", (None, {})), path, variables, "binding")
            inputs = {t.name for t in args.values() if isinstance(t, Variable)}
            extract: dict[str, JsonPath] = {}
            named: set[str] = set()
            raw_extract = fields.get("extract", ("extract", {}))
            for var, text in self.mapping(
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
                compiled = self.json_path(text, where, fan_out=False)
                if compiled is not None:
                    extract[str(var)] = compiled
            for name in sorted(variables - inputs - named):
                self.error(
                    f"variable {name} of {atom} is neither in args nor in extract",
                    (*path, fields["fact"][0]),
                )
            each = (
                self.json_path(fields["each"][1], (*path, fields["each"][0]), fan_out=True)
                if "each" in fields
                else None
            )
            when = (
                self.json_path(fields["when"][1], (*path, fields["when"][0]), fan_out=False)
                if "when" in fields
                else None
            )
            ttl = (
                self.duration(fields["ttl"][1], (*path, fields["ttl"][0]))
                if "ttl" in fields
                else None
            )
            fetch = (
                self.flag(fields["fetch"][1], (*path, fields["fetch"][0]))
                if "fetch" in fields
                else True
            )
            if tool is not None:
                self.bindings.setdefault(atom.predicate, []).append(
                    Binding(index, atom, tool, args, extract, each, when, ttl, fetch)
                )

    def _ttl(self, value: Any) -> None:
        for name, seconds in self.mapping(value, ("ttl",), "ttl").items():
            if name not in self.bindings:
                self.error(
                    f"ttl names {name!r}, which no binding establishes", ("ttl", name), key=True
                )
                continue
            self.ttl[str(name)] = self.duration(seconds, ("ttl", name))

    def _guards(self, value: Any) -> None:
        for tool, item in self.mapping(value, ("guards",), "guards").items():
            path: SectionPath = ("guards", tool)
            if tool not in self.functions:
                self.error(f"guard for unknown tool {tool!r} (not under functions)", path, key=True)
                continue
            raw = {"requires": item} if isinstance(item, str | list) else item
            fields = {
                snake_case(str(k)): (k, v) for k, v in self.mapping(raw, path, "a guard").items()
            }
            for key in sorted(set(fields) - _GUARD_KEYS):
                self.error(f"unknown key {key!r} in a guard", (*path, fields[key][0]), key=True)
            args = self.arguments(fields.get("args", (None, {})), path, set(), "guard")
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
                    self.report(
                        checks.literal_problems(lit, where, self.declared, allow_contexts=True)
                    )
                literals.extend(parsed)
            bound = {t.name for t in args.values() if isinstance(t, Variable)}
            ordered, unsafe = checks.order_safely(literals, bound, path, "guard")
            self.report(unsafe)
            self.guards[str(tool)] = Guard(str(tool), args, tuple(ordered))

    def _checked(self, clause: Clause, path: SectionPath) -> Clause:
        checked, problems = checks.clause_problems(clause, path, self.declared)
        self.report(problems)
        return checked


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
