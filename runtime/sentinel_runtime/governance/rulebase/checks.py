"""Static checks of rules, guards and goals against what a ``tools`` section declares (pure).

:mod:`.build` parses the section and declares its predicates; these functions judge what it
parsed and return :class:`~.model.Problem` values, which the builder locates in the file:
known predicates and arity, context names (queries and guards only), safety (every variable of
a negation, a comparison or a rule's head bound by a positive atom), stratified negation, and
guards that could never be called. :func:`order_literals` also orders a body for solving, and
:func:`compile_goal` checks and orders a query at run time for the solver.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sentinel_runtime.governance.rulebase.model import (
    Binding,
    GoalError,
    Guard,
    Offset,
    Problem,
    Rulebase,
    SectionPath,
)
from sentinel_runtime.governance.syntax import (
    Atom,
    Clause,
    ClauseSyntaxError,
    Comparison,
    Literal,
    Negation,
    Variable,
    parse_body,
)


@dataclass(frozen=True)
class Declared:
    """The names a section declares, as far as the checks need them."""

    arity: Mapping[str, int]
    first_use: Mapping[str, str]  # predicate -> the atom that fixed its arity (for messages)
    contexts: Mapping[str, str]


def arity_mismatch(atom: Atom, declared: Declared) -> str | None:
    """Why ``atom`` disagrees with its predicate's arity, or None (also for a new predicate)."""
    known = declared.arity.get(atom.predicate)
    if known is None or known == atom.arity:
        return None
    return (
        f"{atom.predicate} has {known} argument{'s' if known != 1 else ''} "
        f"(as in {declared.first_use[atom.predicate]}), not {atom.arity} as in {atom}"
    )


def literal_problems(
    lit: Literal, path: SectionPath, declared: Declared, allow_contexts: bool
) -> list[Problem]:
    """An unknown predicate, a wrong arity, or a context name where none is allowed."""
    problems: list[Problem] = []
    atom = lit.atom if isinstance(lit, Negation) else lit
    terms = (lit.left, lit.right) if isinstance(lit, Comparison) else atom.args
    for term in terms:
        if isinstance(term, str) and term in declared.contexts and not allow_contexts:
            problems.append(_context_in_rule(term, path, (lit.line, lit.column)))
    if isinstance(atom, Atom):
        where = (atom.line, atom.column)
        if atom.predicate not in declared.arity:
            problems.append(
                Problem(
                    f"unknown predicate {atom.predicate}/{atom.arity}: no rule, binding, "
                    "askable or facts entry defines it",
                    path,
                    where,
                )
            )
        else:
            mismatch = arity_mismatch(atom, declared)
            if mismatch is not None:
                problems.append(Problem(mismatch, path, where))
    return problems


def clause_problems(
    clause: Clause, path: SectionPath, declared: Declared
) -> tuple[Clause, list[Problem]]:
    """The clause with its body ordered for solving, and its problems: its literals', a
    context name in it, an unsafe variable in the body or the head."""
    problems: list[Problem] = []
    for lit in clause.body:
        problems.extend(literal_problems(lit, path, declared, allow_contexts=False))
    head_at = (clause.head.line, clause.head.column)
    for term in clause.head.args:
        if isinstance(term, str) and term in declared.contexts:
            problems.append(_context_in_rule(term, path, head_at))
    body, unsafe = order_safely(list(clause.body), set(), path, "rule")
    problems.extend(unsafe)
    bound = bound_by(body, set())
    for var in clause.head.variables():
        if var.name not in bound:
            problems.append(
                Problem(
                    f"unsafe variable {var.name}: it appears in the head {clause.head} but in "
                    "no positive atom of the body",
                    path,
                    head_at,
                )
            )
            break
    return Clause(clause.head, tuple(body), clause.line, clause.column), problems


def _context_in_rule(name: str, path: SectionPath, where: Offset) -> Problem:
    return Problem(f"context {name} is usable in queries and guards, not in rules", path, where)


def order_safely(
    literals: list[Literal], bound: set[str], path: SectionPath, what: str
) -> tuple[list[Literal], list[Problem]]:
    """Order for solving (see :func:`order_literals`); an unsafe literal is a problem."""
    ordered, waiting = order_literals(literals, bound)
    known = bound_by(ordered, bound)
    problems = []
    for lit in waiting:
        free = sorted({v.name for v in lit.variables()} - known)
        problems.append(
            Problem(
                f"unsafe variable {', '.join(free)} in {lit}: a negation or comparison needs "
                f"its variables bound by a positive atom of the {what}",
                path,
                (lit.line, lit.column),
            )
        )
    return ordered, problems


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


def bound_by(literals: Iterable[Literal], bound: set[str]) -> set[str]:
    """The variables bound once ``literals`` ran: ``bound`` and those of positive atoms and
    ``=`` comparisons."""
    known = set(bound)
    for lit in literals:
        if isinstance(lit, Atom) or (isinstance(lit, Comparison) and lit.op == "="):
            known.update(v.name for v in lit.variables())
    return known


def stratification_problems(clauses: Iterable[tuple[Clause, SectionPath]]) -> list[Problem]:
    """A negation of a predicate in the head's own recursive component: no single meaning."""
    edges: dict[str, set[str]] = {}
    negative: list[tuple[str, str, Negation, SectionPath]] = []
    for clause, path in clauses:
        head = clause.head.predicate
        for lit in clause.body:
            if isinstance(lit, Atom):
                edges.setdefault(head, set()).add(lit.predicate)
            elif isinstance(lit, Negation):
                edges.setdefault(head, set()).add(lit.atom.predicate)
                negative.append((head, lit.atom.predicate, lit, path))
    component = components(edges)
    return [
        Problem(
            f"unstratified negation: {head} depends on not {target}, and {target} "
            f"depends on {head}; negation through recursion has no single meaning",
            path,
            (lit.line, lit.column),
        )
        for head, target, lit, path in negative
        if component.get(head) is not None and component.get(head) == component.get(target)
    ]


def guard_cycle_problems(
    guards: Mapping[str, Guard],
    bindings: Mapping[str, Sequence[Binding]],
    clauses: Mapping[str, Sequence[Clause]],
) -> list[Problem]:
    """A guard whose preconditions need data that only its own tool (directly or through other
    guarded tools) establishes: the tool could never be called."""

    def tools_of(predicates: Iterable[str]) -> set[str]:
        seen: set[str] = set()
        stack = list(predicates)
        tools: set[str] = set()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            tools.update(b.tool for b in bindings.get(name, ()) if b.fetch)
            for clause in clauses.get(name, ()):
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
        for tool, guard in guards.items()
    }
    problems = []
    for tool, called in calls.items():
        stack, seen = list(called), set()
        while stack:
            other = stack.pop()
            if other == tool:
                problems.append(
                    Problem(
                        f"the guard of {tool} needs facts that only {tool} itself establishes "
                        "(through its preconditions' bindings): it could never be called",
                        ("guards", tool),
                        key=True,
                    )
                )
                break
            if other not in seen:
                seen.add(other)
                stack.extend(calls.get(other, ()))
    return problems


def components(edges: Mapping[str, set[str]]) -> dict[str, int]:
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
