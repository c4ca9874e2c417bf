"""Terms at run time: logic variables bound through a trail, and a rulebase compiled for
resolution (pure).

A :class:`Var` is bound by setting ``ref`` (:mod:`.search` records it on its trail to undo on
backtracking); :func:`deref` follows the chain. A :class:`Program` holds each rule as a
:class:`CompiledClause` whose variables are :class:`Slot` indexes into a fresh frame of
``Var`` per use, and which predicates each one reads (for what a derived fact rests on). A
compiled literal is a tuple: ``("a", predicate, args)`` an atom, ``("n", predicate, args)`` a
negation, ``("c", op, left, right)`` a comparison.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sentinel_runtime.governance.rulebase import Rulebase
from sentinel_runtime.governance.syntax import Atom, Negation, Term, Variable, format_term
from sentinel_runtime.governance.syntax import Literal as Lit

UNBOUND: Any = object()


class Var:
    __slots__ = ("name", "ref")

    def __init__(self, name: str) -> None:
        self.name = name
        self.ref: Any = UNBOUND

    def __repr__(self) -> str:
        return f"_{self.name}"


def deref(term: Any) -> Any:
    while type(term) is Var:
        ref = term.ref
        if ref is UNBOUND:
            return term
        term = ref
    return term


class Slot:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


@dataclass(frozen=True)
class CompiledClause:
    head: tuple[Any, ...]  # Slot or constant
    body: tuple[tuple[Any, ...], ...]  # ("a"|"n", pred, args) or ("c", op, left, right)
    names: tuple[str, ...]
    text: str


class Program:
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


_programs: weakref.WeakKeyDictionary[Rulebase, Program] = weakref.WeakKeyDictionary()


def program_of(rulebase: Rulebase) -> Program:
    program = _programs.get(rulebase)
    if program is None:
        program = _programs[rulebase] = Program(rulebase)
    return program


def _compile_clause(clause: Any) -> CompiledClause:
    names: dict[str, int] = {}

    def term(t: Term) -> Any:
        if isinstance(t, Variable):
            if t.name not in names:
                names[t.name] = len(names)
            return Slot(names[t.name])
        return t

    head = tuple(term(a) for a in clause.head.args)
    return CompiledClause(
        head, tuple(_compile_literal(lit, term) for lit in clause.body), tuple(names), str(clause)
    )


def _compile_literal(lit: Lit, term: Callable[[Term], Any]) -> tuple[Any, ...]:
    if isinstance(lit, Atom):
        return ("a", lit.predicate, tuple(term(a) for a in lit.args))
    if isinstance(lit, Negation):
        return ("n", lit.atom.predicate, tuple(term(a) for a in lit.atom.args))
    return ("c", lit.op, term(lit.left), term(lit.right))


def instantiate(template: tuple[Any, ...], frame: list[Var]) -> tuple[Any, ...]:
    def term(t: Any) -> Any:
        return frame[t.index] if type(t) is Slot else t

    if template[0] == "c":
        return ("c", template[1], term(template[2]), term(template[3]))
    return (template[0], template[1], tuple(term(a) for a in template[2]))


def show(predicate: str, args: Iterable[Any]) -> str:
    shown = ", ".join(
        f"{a.name}" if type(a) is Var else format_term(a) for a in (deref(x) for x in args)
    )
    return f"{predicate}({shown})" if shown else predicate


def term_text(value: Any) -> str:
    return value.name if type(value) is Var else format_term(value)


def plain(values: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(v.name if type(v) is Var else v for v in (deref(x) for x in values))


def free_vars(goal: tuple[Any, ...]) -> set[Var]:
    terms = goal[2:] if goal[0] == "c" else goal[2]
    return {t for t in (deref(x) for x in terms) if type(t) is Var}


def variant(values: tuple[Any, ...]) -> tuple[Any, ...]:
    numbering: dict[int, int] = {}
    out = []
    for value in values:
        if type(value) is Var:
            out.append(("?", numbering.setdefault(id(value), len(numbering))))
        else:
            out.append(value)
    return tuple(out)


def compile_query(lit: Lit, names: dict[str, Var]) -> tuple[Any, ...]:
    def term(t: Term) -> Any:
        if isinstance(t, Variable):
            if t.name not in names:
                names[t.name] = Var(t.name)
            return names[t.name]
        return t

    return _compile_literal(lit, term)
