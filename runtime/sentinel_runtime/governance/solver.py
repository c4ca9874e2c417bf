"""Prove a symbolic goal against a rulebase, a session's facts and data tools (seed 002).

Stateless per call. A call runs *passes*: each pass is a synchronous SLD resolution with
backtracking over the facts known at its start (rules, stored facts, valid tool answers). A
goal whose data must come from a tool (a bound base predicate whose inputs are ground and
whose last answer is missing or expired) fails in that pass and is noted as a pending call;
the pass goes on, so every independent branch notes its own calls: other rule alternatives by
backtracking, and the later goals of a conjunction that share no unbound variable with the
blocked one by looking ahead. Between passes all noted calls run concurrently (asyncio), their
results become facts, and the next pass starts. Data that depends on earlier data is fetched
in later passes; independent data in the same one. Re-running a pass is cheap: no tool I/O.

Recursion is tabled (linear tabling: a goal that is a variant of one being solved reads that
goal's answers so far, and the leader re-runs until no new answer appears), so left, right
and mutual recursion terminate, cycles included. Negation is negation as failure on
stratified rules (the rulebase rejects others); it only concludes once the data it reads is
fetched. An askable predicate not yet answered by the user is *assumed* so the rest of the
proof (and its tool calls) goes on: a proof that needs assumptions is not a proof but tells
which questions would unblock it, and since passes fetch data first, tools come before
questions. Bounds: depth, tool calls, wall time and resolution steps, each a clear result.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sentinel_runtime.governance.extraction import call_key, record_tool_result
from sentinel_runtime.governance.facts import CoverageKey, Fact, FactKey, FactStore
from sentinel_runtime.governance.rulebase import Binding, Limits, Rulebase, compile_goal
from sentinel_runtime.governance.syntax import (
    Atom,
    Comparison,
    Const,
    Negation,
    Term,
    Variable,
    format_term,
)
from sentinel_runtime.governance.syntax import (
    Literal as Lit,
)

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


# -- terms at run time ---------------------------------------------------------------------

_UNBOUND: Any = object()


class Var:
    __slots__ = ("name", "ref")

    def __init__(self, name: str) -> None:
        self.name = name
        self.ref: Any = _UNBOUND

    def __repr__(self) -> str:
        return f"_{self.name}"


def deref(term: Any) -> Any:
    while type(term) is Var:
        ref = term.ref
        if ref is _UNBOUND:
            return term
        term = ref
    return term


class _Slot:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


@dataclass(frozen=True)
class _CompiledClause:
    head: tuple[Any, ...]  # _Slot or constant
    body: tuple[tuple[Any, ...], ...]  # ("a"|"n", pred, args) or ("c", op, left, right)
    names: tuple[str, ...]
    text: str


class _Program:
    """A rulebase compiled for resolution (once per rulebase)."""

    def __init__(self, rulebase: Rulebase) -> None:
        self.clauses = {
            name: tuple(_compile_clause(c) for c in clauses)
            for name, clauses in rulebase.clauses.items()
        }
        below: dict[str, set[str]] = {}

        def reach(name: str) -> set[str]:
            if name in below:
                return below[name]
            below[name] = {name}
            for clause in rulebase.clauses.get(name, ()):
                for lit in clause.body:
                    atom = lit.atom if isinstance(lit, Negation) else lit
                    if isinstance(atom, Atom):
                        below[name] |= reach(atom.predicate)
            return below[name]

        self.below = {name: frozenset(reach(name)) for name in rulebase.arity}


_programs: weakref.WeakKeyDictionary[Rulebase, _Program] = weakref.WeakKeyDictionary()


def _program(rulebase: Rulebase) -> _Program:
    program = _programs.get(rulebase)
    if program is None:
        program = _programs[rulebase] = _Program(rulebase)
    return program


def _compile_clause(clause: Any) -> _CompiledClause:
    names: dict[str, int] = {}

    def term(t: Term) -> Any:
        if isinstance(t, Variable):
            if t.name not in names:
                names[t.name] = len(names)
            return _Slot(names[t.name])
        return t

    head = tuple(term(a) for a in clause.head.args)
    return _CompiledClause(
        head, tuple(_compile_literal(lit, term) for lit in clause.body), tuple(names), str(clause)
    )


def _compile_literal(lit: Lit, term: Callable[[Term], Any]) -> tuple[Any, ...]:
    if isinstance(lit, Atom):
        return ("a", lit.predicate, tuple(term(a) for a in lit.args))
    if isinstance(lit, Negation):
        return ("n", lit.atom.predicate, tuple(term(a) for a in lit.atom.args))
    return ("c", lit.op, term(lit.left), term(lit.right))


def _instantiate(template: tuple[Any, ...], frame: list[Var]) -> tuple[Any, ...]:
    def term(t: Any) -> Any:
        return frame[t.index] if type(t) is _Slot else t

    if template[0] == "c":
        return ("c", template[1], term(template[2]), term(template[3]))
    return (template[0], template[1], tuple(term(a) for a in template[2]))


def _show(predicate: str, args: Iterable[Any]) -> str:
    shown = ", ".join(
        f"{a.name}" if type(a) is Var else format_term(a) for a in (deref(x) for x in args)
    )
    return f"{predicate}({shown})" if shown else predicate


# -- one pass ------------------------------------------------------------------------------


class _StopError(Exception):
    pass


@dataclass
class _Table:
    answers: list[tuple[tuple[Const, ...], Any, tuple[Any, ...]]] = field(default_factory=list)
    seen: set[Any] = field(default_factory=set)
    active: bool = True
    looped: bool = False
    dependent: bool = False  # read an ancestor's incomplete table: not complete on its own
    partial: bool = False  # an answer with a free variable was not tabled
    complete: bool = False


@dataclass
class _PendingCall:
    tool: str
    arguments: dict[str, Any]
    goal: str


class _Pass:
    def __init__(
        self,
        rulebase: Rulebase,
        store: FactStore,
        failed: Mapping[tuple[str, str], str],
        deadline: float,
        limits: Limits,
    ) -> None:
        self.rb = rulebase
        self.program = _program(rulebase)
        self.store = store
        self.failed = failed
        self.deadline = deadline
        self.limits = limits
        self.now = store.clock()
        self.trail: list[Var] = []
        self.pending: dict[tuple[str, str], _PendingCall] = {}
        self.pending_hits = 0
        self.blockers: dict[Any, Blocker] = {}
        self.failures: dict[Any, str] = {}
        self.depth_hit = False
        self.bound: str | None = None
        self.steps = 0
        self.lookahead = 0
        self.tables: dict[Any, _Table] = {}
        self.stack: list[_Table] = []
        self.coverage_logs: list[list[CoverageKey]] = []

    # bindings -----------------------------------------------------------------------------

    def bind(self, var: Var, value: Any) -> None:
        var.ref = value
        self.trail.append(var)

    def undo(self, mark: int) -> None:
        trail = self.trail
        while len(trail) > mark:
            trail.pop().ref = _UNBOUND

    def unify(self, a: Any, b: Any) -> bool:
        a, b = deref(a), deref(b)
        if a is b:
            return True
        if type(a) is Var:
            self.bind(a, b)
            return True
        if type(b) is Var:
            self.bind(b, a)
            return True
        return a == b

    def match(self, args: tuple[Any, ...], values: tuple[Const, ...]) -> bool:
        for term, value in zip(args, values, strict=True):
            arg = deref(term)
            if type(arg) is Var:
                self.bind(arg, value)
            elif arg != value:
                return False
        return True

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.limits.max_steps:
            self.bound = "steps"
            raise _StopError
        if not self.steps & 255 and time.monotonic() > self.deadline:
            self.bound = "time"
            raise _StopError

    # goals --------------------------------------------------------------------------------

    def conj(self, goals: Sequence[tuple[Any, ...]], i: int, depth: int) -> Iterator[Any]:
        if i == len(goals):
            yield (), ()
            return
        goal = goals[i]
        hits = self.pending_hits
        produced = False
        for node, assumed in self.literal(goal, depth):
            produced = True
            for nodes, more in self.conj(goals, i + 1, depth):
                yield (node, *nodes), assumed + more
        if not produced and self.pending_hits > hits and i + 1 < len(goals):
            self.look_ahead(goals, i, depth)

    def look_ahead(self, goals: Sequence[tuple[Any, ...]], i: int, depth: int) -> None:
        """The branch waits for tool data; goals after it that share no unbound variable with
        it (directly or through each other) are explored now, so their tool calls join the
        same round of concurrent calls."""
        tainted = _free(goals[i])
        self.lookahead += 1
        try:
            for goal in goals[i + 1 :]:
                free = _free(goal)
                if free & tainted:
                    tainted |= free
                    continue
                if goal[0] == "c":
                    continue
                mark = len(self.trail)
                for _ in self.literal(goal, depth):
                    pass
                self.undo(mark)
        finally:
            self.lookahead -= 1

    def literal(self, goal: tuple[Any, ...], depth: int) -> Iterator[Any]:
        self.tick()
        kind = goal[0]
        if kind == "a":
            yield from self.atom(goal[1], goal[2], depth)
        elif kind == "n":
            yield from self.negation(goal[1], goal[2], depth)
        else:
            yield from self.compare(goal[1], goal[2], goal[3])

    def atom(self, predicate: str, args: tuple[Any, ...], depth: int) -> Iterator[Any]:
        kind = self.rb.kinds[predicate]
        if kind == "derived":
            yield from self.derived(predicate, args, depth)
        elif kind == "tool":
            yield from self.tool_goal(predicate, args)
        elif kind == "askable":
            yield from self.askable(predicate, args)
        else:
            yield from self.stored(predicate, args)

    def stored(self, predicate: str, args: tuple[Any, ...], note: bool = True) -> Iterator[Any]:
        resolved = tuple(deref(a) for a in args)
        position = None
        for i, arg in enumerate(resolved):
            if type(arg) is not Var:
                position = i
                break
        store = self.store
        now = self.now
        found = False
        if position is not None and all(type(a) is not Var for a in resolved):
            fact = store.fact(predicate, resolved)
            if fact is not None and fact.alive(now):
                found = True
                yield ("fact", fact), ()
        else:
            candidates = store.candidates(
                predicate, position, resolved[position] if position is not None else None
            )
            for values in list(candidates):
                fact = store.fact(predicate, values)
                if fact is None or not fact.alive(now):
                    continue
                mark = len(self.trail)
                if self.match(resolved, values):
                    found = True
                    yield ("fact", fact), ()
                self.undo(mark)
        if not found and note:
            self.note_failure(predicate, resolved)

    def note_failure(self, predicate: str, resolved: tuple[Any, ...]) -> None:
        if self.lookahead or len(self.failures) >= 20:
            return
        key = (predicate, tuple(id(a) if type(a) is Var else a for a in resolved))
        if key in self.failures:
            return
        goal = _show(predicate, resolved)
        known = []
        for i, arg in enumerate(resolved):
            if type(arg) is not Var:
                for values in list(self.store.candidates(predicate, i, arg))[:3]:
                    fact = self.store.fact(predicate, values)
                    if fact is not None and fact.alive(self.now):
                        known.append(str(fact))
                break
        self.failures[key] = (
            f"{goal} does not hold: known {', '.join(known)}" if known else f"no fact {goal}"
        )

    def tool_goal(self, predicate: str, args: tuple[Any, ...]) -> Iterator[Any]:
        resolved = tuple(deref(a) for a in args)
        for binding in self.rb.bindings[predicate]:
            if not binding.fetch:
                continue
            positions = binding.input_positions
            inputs = tuple(resolved[i] for i in positions)
            if any(type(v) is Var for v in inputs):
                continue
            key: CoverageKey = (predicate, binding.index, inputs)
            coverage = self.store.coverage(key, self.now)
            if coverage is None:
                self.fetch_or_block(binding, resolved)
                return
            for log in self.coverage_logs:
                log.append(key)
            yield from self.stored(predicate, args)
            return
        # No binding has its inputs: known facts are used, but they may not be all.
        if not self.lookahead:
            needs = sorted(
                {
                    binding.pattern.args[i].name  # type: ignore[union-attr]
                    for binding in self.rb.bindings[predicate]
                    for i in binding.input_positions
                    if type(resolved[i]) is Var
                }
            )
            goal = _show(predicate, resolved)
            self.blockers.setdefault(
                ("input", goal),
                Blocker(
                    "unbound_input",
                    goal,
                    predicate,
                    _plain(resolved),
                    tool=self.rb.bindings[predicate][0].tool,
                    reason=f"its tool needs {', '.join(needs)} bound first",
                ),
            )
        yield from self.stored(predicate, args, note=False)

    def fetch_or_block(self, binding: Binding, resolved: tuple[Any, ...]) -> None:
        arguments: dict[str, Any] = {}
        slot = {a.name: i for i, a in enumerate(binding.pattern.args) if isinstance(a, Variable)}
        for name, term in binding.args.items():
            arguments[name] = resolved[slot[term.name]] if isinstance(term, Variable) else term
        key = call_key(binding.tool, arguments)
        goal = _show(binding.predicate, resolved)
        if key in self.failed:
            if not self.lookahead:
                self.blockers.setdefault(
                    ("data", goal),
                    Blocker(
                        "missing_data",
                        goal,
                        binding.predicate,
                        _plain(resolved),
                        tool=binding.tool,
                        reason=self.failed[key],
                    ),
                )
            return
        self.pending_hits += 1
        self.pending.setdefault(key, _PendingCall(binding.tool, arguments, goal))

    def askable(self, predicate: str, args: tuple[Any, ...]) -> Iterator[Any]:
        found = False
        for proof in self.stored(predicate, args, note=False):
            found = True
            yield proof
        if not found:
            resolved = tuple(deref(a) for a in args)
            yield ("assumed", predicate, resolved), ((predicate, resolved),)

    def derived(self, predicate: str, args: tuple[Any, ...], depth: int) -> Iterator[Any]:
        if depth > self.limits.max_depth:
            self.depth_hit = True
            return
        resolved = tuple(deref(a) for a in args)
        if all(type(a) is not Var for a in resolved):
            cached = self.store.derived(predicate, resolved, self.rb.id, self.now)
            if cached is not None:
                yield ("derived", cached.fact, cached.supports), ()
                return
        key = (predicate, _variant(resolved))
        table = self.tables.get(key)
        if table is not None and (table.complete or table.active):
            yield from self.read_table(table, resolved)
        else:
            yield from self.pioneer(key, predicate, resolved, depth)

    def read_table(self, table: _Table, resolved: tuple[Any, ...]) -> Iterator[Any]:
        if table.active:  # a variant of a goal being solved above: read its answers so far
            table.looped = True
            above = False
            for entry in self.stack:
                if above:
                    entry.dependent = True
                elif entry is table:
                    above = True
        for values, node, assumed in list(table.answers):
            mark = len(self.trail)
            if self.match(resolved, values):
                yield node, assumed
            self.undo(mark)

    def pioneer(
        self, key: Any, predicate: str, resolved: tuple[Any, ...], depth: int
    ) -> Iterator[Any]:
        """Solve a goal by its rules, tabling the answers; re-run while a descendant read this
        table and new answers keep coming (the fixpoint of a recursive goal)."""
        table = self.tables[key] = _Table()
        self.stack.append(table)
        suspended = False
        try:
            while True:
                table.looped = False
                before = len(table.answers)
                for node, assumed in self.apply_rules(predicate, resolved, depth):
                    if not self.table_answer(table, node, assumed):
                        continue
                    # While the consumer runs, this goal is not on the call path: a sibling
                    # variant is solved on its own instead of reading this table.
                    suspended = self.suspend(key, table)
                    yield node, assumed
                    suspended = self.resume(key, table)
                if not table.looped or len(table.answers) == before:
                    break
            table.complete = not (table.dependent or table.partial)
        finally:
            if not suspended:
                table.active = False
                self.stack.pop()
            if not table.complete and self.tables.get(key) is table:
                del self.tables[key]

    def apply_rules(self, predicate: str, resolved: tuple[Any, ...], depth: int) -> Iterator[Any]:
        for clause in self.program.clauses.get(predicate, ()):
            frame = [Var(name) for name in clause.names]
            mark = len(self.trail)
            head = tuple(frame[t.index] if type(t) is _Slot else t for t in clause.head)
            if all(self.unify(h, a) for h, a in zip(head, resolved, strict=True)):
                body = [_instantiate(lit, frame) for lit in clause.body]
                for children, assumed in self.conj(body, 0, depth + 1):
                    values = tuple(deref(a) for a in resolved)
                    yield ("rule", clause.text, predicate, values, children), assumed
            self.undo(mark)

    @staticmethod
    def table_answer(table: _Table, node: Any, assumed: tuple[Any, ...]) -> bool:
        """Record an answer; False when it was already given. An answer with a free variable
        is given but not tabled (the table is then not complete)."""
        values = node[3]
        if any(type(v) is Var for v in values) or any(
            type(v) is Var for _, vs in assumed for v in vs
        ):
            table.partial = True
            return True
        seen = (values, assumed)
        if seen in table.seen:
            return False
        table.seen.add(seen)
        table.answers.append((values, node, assumed))
        return True

    def suspend(self, key: Any, table: _Table) -> bool:
        self.stack.pop()
        table.active = False
        if self.tables.get(key) is table:
            del self.tables[key]
        return True

    def resume(self, key: Any, table: _Table) -> bool:
        self.stack.append(table)
        table.active = True
        self.tables[key] = table
        return False

    def negation(self, predicate: str, args: tuple[Any, ...], depth: int) -> Iterator[Any]:
        mark = len(self.trail)
        hits = self.pending_hits
        failures = dict(self.failures)  # what the inner goal lacks is what makes this hold
        log: list[CoverageKey] = []
        self.coverage_logs.append(log)
        clean = False
        assumptions: list[tuple[Any, ...]] = []
        try:
            proofs = self.atom(predicate, args, depth + 1)
            for _, assumed in proofs:
                if not assumed:
                    clean = True
                    break
                assumptions.append(assumed)
            proofs.close()
        finally:
            self.coverage_logs.pop()
            self.undo(mark)
        for parent in self.coverage_logs:
            parent.extend(log)
        goal = "not " + _show(predicate, args)
        self.failures = failures
        if clean and not self.lookahead and len(self.failures) < 20:
            self.failures[("not", goal)] = f"{goal} does not hold: {goal[4:]} is proven"
        if clean or self.pending_hits > hits:
            return
        if assumptions:
            # It holds only if the user does not confirm: undecided, so ask rather than guess.
            if not self.lookahead:
                for assumed in assumptions[:3]:
                    for name, values in assumed:
                        self.ask(name, values)
            return
        yield ("not", goal, tuple(log), predicate), ()

    def compare(self, op: str, left: Any, right: Any) -> Iterator[Any]:
        left, right = deref(left), deref(right)
        text = f"{_term(left)} {op} {_term(right)}"
        if op == "=":
            mark = len(self.trail)
            if self.unify(left, right):
                yield ("cmp", f"{_term(deref(left))} = {_term(deref(right))}"), ()
            self.undo(mark)
            return
        if type(left) is Var or type(right) is Var:
            return
        if op == "!=":
            holds = left != right
        else:
            numeric = isinstance(left, int | float) and isinstance(right, int | float)
            if not numeric and not (isinstance(left, str) and isinstance(right, str)):
                return
            holds = {
                "<": left < right,
                "=<": left <= right,
                ">": left > right,
                ">=": left >= right,
            }[op]
        if holds:
            yield ("cmp", text), ()

    def ask(self, predicate: str, values: tuple[Any, ...]) -> None:
        goal = _show(predicate, values)
        askable = self.rb.askables[predicate]
        self.blockers.setdefault(
            ("ask", goal),
            Blocker(
                "ask",
                goal,
                predicate,
                _plain(values),
                question=askable.ask(tuple(deref(v) for v in values)),
            ),
        )


def _term(value: Any) -> str:
    return value.name if type(value) is Var else format_term(value)


def _plain(values: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(v.name if type(v) is Var else v for v in (deref(x) for x in values))


def _free(goal: tuple[Any, ...]) -> set[Var]:
    terms = goal[2:] if goal[0] == "c" else goal[2]
    return {t for t in (deref(x) for x in terms) if type(t) is Var}


def _variant(values: tuple[Any, ...]) -> tuple[Any, ...]:
    numbering: dict[int, int] = {}
    out = []
    for value in values:
        if type(value) is Var:
            out.append(("?", numbering.setdefault(id(value), len(numbering))))
        else:
            out.append(value)
    return tuple(out)


# -- proof nodes to steps and supports -----------------------------------------------------


def _step(node: Any, now: float) -> Step:
    kind = node[0]
    if kind == "fact":
        fact: Fact = node[1]
        return Step(
            "tool" if fact.provenance.tool else fact.provenance.source,
            str(fact),
            _provenance_text(fact, now),
        )
    if kind == "rule":
        _, text, predicate, values, children = node
        return Step("rule", _show(predicate, values), text, tuple(_step(c, now) for c in children))
    if kind == "derived":
        return Step("derived", str(node[1]), "established earlier; its facts are still valid")
    if kind == "not":
        return Step("not", node[1], "no fact and no proof (the data it reads was fetched)")
    if kind == "cmp":
        return Step("compare", node[1])
    return Step("ask", _show(node[1], node[2]), "assumed: the user has not answered yet")


def _provenance_text(fact: Fact, now: float) -> str:
    provenance = fact.provenance
    if provenance.tool:
        args = ", ".join(f"{k}={format_term(v)}" for k, v in (provenance.call_args or {}).items())
        age = max(0.0, now - provenance.at)
        return f"{provenance.tool}({args}) {age:.0f}s ago"
    return provenance.source


def _supports(node: Any, facts: set[Any], negated: set[str], program: _Program) -> None:
    kind = node[0]
    if kind == "fact":
        facts.add(node[1].key)
    elif kind == "derived":
        facts.update(node[2])
    elif kind == "not":
        facts.update(node[2])
        negated.update(program.below.get(node[3], {node[3]}))
    elif kind == "rule":
        for child in node[4]:
            _supports(child, facts, negated, program)


def _remember(node: Any, store: FactStore, rulebase: Rulebase, program: _Program) -> None:
    """Store every ground derived atom of a finished proof with the facts it rests on."""
    if node[0] != "rule":
        return
    for child in node[4]:
        _remember(child, store, rulebase, program)
    values = node[3]
    if any(type(v) is Var for v in values):
        return
    facts: set[FactKey | CoverageKey] = set()
    negated: set[str] = set()
    _supports(node, facts, negated, program)
    store.add_derived(node[2], values, facts, negated, rulebase.id)


# -- the driver ----------------------------------------------------------------------------


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
        run = _Pass(rulebase, store, failed, budget.deadline, limits)
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
class _Found:
    answers: list[Answer] = field(default_factory=list)
    assumption_sets: list[tuple[Any, ...]] = field(default_factory=list)


def _collect(run: _Pass, literals: Sequence[Lit], max_answers: int, remember: bool) -> _Found:
    """One pass over the goal: answers without assumptions (stored as derived facts when
    ``remember``), and the assumption sets of proofs that need the user."""
    names: dict[str, Var] = {}
    goals = [_compile_query(lit, names) for lit in literals]
    found = _Found()
    seen: set[Any] = set()
    program = _program(run.rb)
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
                    _remember(node, run.store, run.rb, program)
            bindings = {k: v for k, v in values.items() if type(v) is not Var}
            found.answers.append(Answer(bindings, tuple(_step(n, run.now) for n in nodes)))
            if len(found.answers) >= max_answers:
                break
    except _StopError:
        pass
    return found


async def _fetch_all(
    rulebase: Rulebase,
    store: FactStore,
    pending: list[_PendingCall],
    invoke: Invoker,
    *,
    budget: Budget,
    failed: dict[tuple[str, str], str],
) -> bool:
    """Run the calls concurrently and store their facts; True when the time ran out."""

    async def one(call: _PendingCall) -> None:
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


def _compile_query(lit: Lit, names: dict[str, Var]) -> tuple[Any, ...]:
    def term(t: Term) -> Any:
        if isinstance(t, Variable):
            if t.name not in names:
                names[t.name] = Var(t.name)
            return names[t.name]
        return t

    return _compile_literal(lit, term)


def _result(
    text: str,
    run: _Pass,
    found: _Found,
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
