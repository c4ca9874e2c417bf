"""A finished proof's nodes (see :mod:`.search`) as derivation steps for the trace, and as
derived facts stored in the session with the facts, tool coverage and negated predicates
they rest on, so the store drops them when any of those changes.
"""

from __future__ import annotations

from typing import Any

from sentinel_runtime.governance.facts import CoverageKey, Fact, FactKey, FactStore
from sentinel_runtime.governance.rulebase import Rulebase
from sentinel_runtime.governance.solver.results import Step
from sentinel_runtime.governance.solver.terms import Program, Var, show
from sentinel_runtime.governance.syntax import format_term


def step(node: Any, now: float) -> Step:
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
        return Step("rule", show(predicate, values), text, tuple(step(c, now) for c in children))
    if kind == "derived":
        return Step("derived", str(node[1]), "established earlier; its facts are still valid")
    if kind == "not":
        return Step("not", node[1], "no fact and no proof (the data it reads was fetched)")
    if kind == "cmp":
        return Step("compare", node[1])
    return Step("ask", show(node[1], node[2]), "assumed: the user has not answered yet")


def _provenance_text(fact: Fact, now: float) -> str:
    provenance = fact.provenance
    if provenance.tool:
        args = ", ".join(f"{k}={format_term(v)}" for k, v in (provenance.call_args or {}).items())
        age = max(0.0, now - provenance.at)
        return f"{provenance.tool}({args}) {age:.0f}s ago"
    return provenance.source


def _supports(node: Any, facts: set[Any], negated: set[str], program: Program) -> None:
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


def remember(node: Any, store: FactStore, rulebase: Rulebase, program: Program) -> None:
    """Store every ground derived atom of a finished proof with the facts it rests on."""
    if node[0] != "rule":
        return
    for child in node[4]:
        remember(child, store, rulebase, program)
    values = node[3]
    if any(type(v) is Var for v in values):
        return
    facts: set[FactKey | CoverageKey] = set()
    negated: set[str] = set()
    _supports(node, facts, negated, program)
    store.add_derived(node[2], values, facts, negated, rulebase.id)
