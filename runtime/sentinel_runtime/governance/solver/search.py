"""One pass of the proof search: SLD resolution with backtracking over the facts known at
its start, noting the tool calls it would need instead of making them (no I/O).

:class:`Pass` yields proofs of a conjunction as ``(nodes, assumed)``: one proof node per goal
and the askable facts assumed on the way. A node is a tuple: ``("fact", fact)``,
``("rule", clause_text, predicate, values, children)``, ``("derived", fact, supports)`` (a
derived fact stored earlier), ``("not", goal, coverage, predicate)``, ``("cmp", text)`` or
``("assumed", predicate, values)``; :mod:`.proofs` turns them into steps and supports. A goal
whose tool data is missing fails here and becomes a :class:`PendingCall`; :mod:`.driver` runs
those and starts the next pass. Derived goals are tabled (see the package's docstring).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sentinel_runtime.governance.extraction import call_key
from sentinel_runtime.governance.facts import CoverageKey, FactStore
from sentinel_runtime.governance.rulebase import Binding, Limits, Rulebase
from sentinel_runtime.governance.solver.results import Blocker
from sentinel_runtime.governance.solver.terms import (
    UNBOUND,
    Slot,
    Var,
    deref,
    free_vars,
    instantiate,
    plain,
    program_of,
    show,
    term_text,
    variant,
)
from sentinel_runtime.governance.syntax import Const, Variable


class BoundReachedError(Exception):
    """The step or time bound was hit: the pass stops (``Pass.bound`` says which)."""


@dataclass
class _Table:
    """The answers so far of one derived goal (up to renaming its variables)."""

    answers: list[tuple[tuple[Const, ...], Any, tuple[Any, ...]]] = field(default_factory=list)
    seen: set[Any] = field(default_factory=set)
    active: bool = True
    looped: bool = False
    dependent: bool = False  # read an ancestor's incomplete table: not complete on its own
    partial: bool = False  # an answer with a free variable was not tabled
    complete: bool = False


@dataclass
class PendingCall:
    """A data tool call the pass needed; the driver makes it before the next pass."""

    tool: str
    arguments: dict[str, Any]
    goal: str


class Pass:
    """One resolution over the store as it is; what it lacks is noted, never fetched."""

    def __init__(
        self,
        rulebase: Rulebase,
        store: FactStore,
        failed: Mapping[tuple[str, str], str],
        deadline: float,
        limits: Limits,
    ) -> None:
        self.rb = rulebase
        self.program = program_of(rulebase)
        self.store = store
        self.failed = failed
        self.deadline = deadline
        self.limits = limits
        self.now = store.clock()
        self.trail: list[Var] = []
        self.pending: dict[tuple[str, str], PendingCall] = {}
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
            trail.pop().ref = UNBOUND

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
            raise BoundReachedError
        if not self.steps & 255 and time.monotonic() > self.deadline:
            self.bound = "time"
            raise BoundReachedError

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
        tainted = free_vars(goals[i])
        self.lookahead += 1
        try:
            for goal in goals[i + 1 :]:
                free = free_vars(goal)
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
        goal = show(predicate, resolved)
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
            goal = show(predicate, resolved)
            self.blockers.setdefault(
                ("input", goal),
                Blocker(
                    "unbound_input",
                    goal,
                    predicate,
                    plain(resolved),
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
        goal = show(binding.predicate, resolved)
        if key in self.failed:
            if not self.lookahead:
                self.blockers.setdefault(
                    ("data", goal),
                    Blocker(
                        "missing_data",
                        goal,
                        binding.predicate,
                        plain(resolved),
                        tool=binding.tool,
                        reason=self.failed[key],
                    ),
                )
            return
        self.pending_hits += 1
        self.pending.setdefault(key, PendingCall(binding.tool, arguments, goal))

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
        key = (predicate, variant(resolved))
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
            head = tuple(frame[t.index] if type(t) is Slot else t for t in clause.head)
            if all(self.unify(h, a) for h, a in zip(head, resolved, strict=True)):
                body = [instantiate(lit, frame) for lit in clause.body]
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
        goal = "not " + show(predicate, args)
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
        text = f"{term_text(left)} {op} {term_text(right)}"
        if op == "=":
            mark = len(self.trail)
            if self.unify(left, right):
                yield ("cmp", f"{term_text(deref(left))} = {term_text(deref(right))}"), ()
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
        goal = show(predicate, values)
        askable = self.rb.askables[predicate]
        self.blockers.setdefault(
            ("ask", goal),
            Blocker(
                "ask",
                goal,
                predicate,
                plain(values),
                question=askable.ask(tuple(deref(v) for v in values)),
            ),
        )
