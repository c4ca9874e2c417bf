"""Turn a data tool's JSON result into facts (docs/contracts.md, "Governed tool calls": a
session's facts come from tool results among others): every binding of that tool whose
arguments match the call is applied, so one call establishes all the predicates it can (in the
airline sample, ``samples/airline/guardrails.yaml``, one ``get_booking`` call gives
``booking_owner``, ``booking_status``, ``booking_flight`` and ``refunded``). It runs after
every tool call: the solver's data calls and the calls the LLM proposes
(``guard.GuardedTools.invoke``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sentinel_runtime.governance.facts import FactStore
from sentinel_runtime.governance.rulebase import Binding, Rulebase
from sentinel_runtime.governance.syntax import Const, Variable


def to_const(value: Any) -> Const | None:
    """A JSON scalar as a constant (true/false become the names ``true``/``false``); None for
    null, lists and objects, which no fact argument can hold."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return value
    return None


def call_key(tool: str, arguments: Mapping[str, Any]) -> tuple[str, str]:
    return (tool, json.dumps(arguments, sort_keys=True, default=str))


def binding_inputs(binding: Binding, arguments: Mapping[str, Any]) -> dict[str, Const] | None:
    """The binding's input variables as the call's arguments give them, or None when the call
    does not fit the binding (an argument missing or a constant differing)."""
    env: dict[str, Const] = {}
    for name, term in binding.args.items():
        if name not in arguments:
            return None
        value = to_const(arguments[name])
        if value is None:
            return None
        if isinstance(term, Variable):
            env[term.name] = value
        elif term != value:
            return None
    return env


def facts_of(binding: Binding, env: Mapping[str, Const], result: Any) -> list[tuple[Const, ...]]:
    items = binding.each.select(result) if binding.each is not None else [result]
    facts: list[tuple[Const, ...]] = []
    for item in items:
        if binding.when is not None:
            test = binding.when.select(item)
            if not test or not test[0]:
                continue
        values: list[Const] = []
        for term in binding.pattern.args:
            name = term.name if isinstance(term, Variable) else ""
            if name in env:
                values.append(env[name])
                continue
            found = binding.extract[name].select(item)
            value = to_const(found[0]) if found else None
            if value is None:
                break
            values.append(value)
        else:
            facts.append(tuple(values))
    return facts


def record_tool_result(
    rulebase: Rulebase, store: FactStore, tool: str, arguments: Mapping[str, Any], result: Any
) -> int:
    """Apply ``tool``'s result to the store through every fitting binding; the facts added."""
    added = 0
    for binding in rulebase.bindings_of_tool(tool):
        env = binding_inputs(binding, arguments)
        if env is None:
            continue
        positions = binding.input_positions
        inputs = tuple(env[binding.pattern.args[i].name] for i in positions)  # type: ignore[union-attr]
        facts = facts_of(binding, env, result)
        store.record_call(
            (binding.predicate, binding.index, inputs),
            tool,
            arguments,
            facts,
            rulebase.ttl_of(binding),
        )
        added += len(facts)
    return added
