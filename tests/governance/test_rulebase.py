"""The tools section's parser: the sample parses; every problem of a bad section is reported
at once, each at its line and column of the policy file."""

from __future__ import annotations

import pytest
import yaml

from sentinel_runtime.governance import rulebase as rulebase_mod
from sentinel_runtime.governance.facts import SessionStore
from sentinel_runtime.governance.rulebase import RulebaseError, parse_rulebase
from sentinel_runtime.governance.service import Governance
from sentinel_runtime.guardrails.policy import parse_policy
from support.airline import SAMPLE

BAD = """\
blockMessage: Blocked.
tools:
  functions:
    get_flight: {url: "http://127.0.0.1:9/f"}
  bindings:
    - fact: flight_status(Flight, Status)
      tool: get_flight
      args: {flight_id: Flight}
      extract: {Status: "$.status[", Other: $.x}
  guards:
    refund: {requires: "eligible(U, B)"}
  rules: |
    eligible(U, B) :- flight_status(B, cancelled), owner(U, B).
    lonely(X) :- flight_status(Y, cancelled).
    broken(X :- flight_status(X, _).
    p(X) :- flight_status(X, S), not q(X).
    q(X) :- flight_status(X, S), not p(X).
    arity(X) :- flight_status(X).
"""


def _at(source: str, line: int, column: int) -> str:
    return source.splitlines()[line - 1][column - 1 :]


def test_the_airline_sample_parses_into_its_parts() -> None:
    policy = parse_policy((SAMPLE / "guardrails.yaml").read_bytes())
    rulebase = rulebase_mod.for_policy(policy)
    assert rulebase is not None and rulebase.strict
    assert rulebase.kinds["eligible_for_refund"] == "derived"
    assert rulebase.kinds["flight_status"] == "tool"
    assert rulebase.kinds["user_confirms_refund"] == "askable"
    assert set(rulebase.contexts) == {"current_user", "booking_of_interest"}
    assert rulebase.ttl_of(rulebase.bindings["flight_status"][0]) == 60
    assert rulebase.ttl_of(rulebase.bindings["booking_status"][0]) == 300
    assert rulebase.functions["get_flight"].url == "http://127.0.0.1:8765/tools/get_flight"
    schema = rulebase.functions["refund_booking"].openai_schema()
    assert schema["type"] == "function"
    assert schema["function"]["name"] == "refund_booking"
    assert schema["function"]["parameters"]["required"] == ["booking_id"]
    assert len(rulebase.tool_schemas()) == 4
    assert rulebase_mod.for_policy(policy) is rulebase  # parsed once per policy hash
    assert rulebase_mod.for_policy(parse_policy(b"scanners: []")) is None


def test_every_problem_is_reported_at_its_line_and_column_of_the_file() -> None:
    with pytest.raises(RulebaseError) as caught:
        rulebase_mod.for_policy(parse_policy(BAD), BAD)
    found = {(i.line, i.column): i.message for i in caught.value.issues}
    assert all(i.in_file for i in caught.value.issues)
    expected = [
        (9, "[", "expected '.name'"),
        (9, "Other", "extract names 'Other', which is not a variable"),
        (11, "refund", "guard for unknown tool 'refund'"),
        (13, "owner(U, B)", "unknown predicate owner/2"),
        (14, "lonely(X)", "unsafe variable X"),
        (15, ":- flight_status", "expected ')' to close the arguments of broken"),
        (16, "not q(X)", "unstratified negation: p depends on not q"),
        (17, "not p(X)", "unstratified negation: q depends on not p"),
        (18, "flight_status(X)", "flight_status has 2 arguments"),
    ]
    for line, text, message in expected:
        hits = [
            (column, m) for (ln, column), m in found.items() if ln == line and m.startswith(message)
        ]
        assert hits, (line, message, found)
        column = hits[0][0]
        assert _at(BAD, line, column).startswith(text), (line, column, _at(BAD, line, column))
    assert len(caught.value.issues) == len(expected)
    assert caught.value.line == 9  # the first problem is the error's own line and column
    assert str(caught.value).startswith("the tools section has 9 problems:")


def test_without_the_file_text_positions_are_within_the_rules_block() -> None:
    section = yaml.safe_load(BAD)["tools"]
    with pytest.raises(RulebaseError) as caught:
        parse_rulebase(section)
    owner = next(i for i in caught.value.issues if "owner/2" in i.message)
    assert (owner.line, owner.column, owner.in_file) == (1, 48, False)
    assert owner.path == "tools.rules"
    assert str(owner).startswith("line 1, column 48 of tools.rules")


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ("p(X) :- e(X), not p(X).", "unstratified negation: p depends on not p"),
        ("p(X) :- not e(X).", "unsafe variable X in not e(X)"),
        ("p(X) :- e(Y), X > Y.", "unsafe variable X in X > Y"),
        ("p(X, Y) :- e(X).", "unsafe variable Y: it appears in the head p(X, Y)"),
        ("p(X) :- e(X, X).", "e has 1 argument (as in e(Node)), not 2"),
        ("p(X) :- e(X), X = here.", "context here is usable in queries and guards, not in rules"),
        ("e(a).", "e is a declared fact; it cannot also be derived by rules"),
        ("p(X) :- e(X) q(X).", "expected ',' or '.' after e(X), found 'q'"),
        ("p(X) :- e(X), 'open.", "unexpected character"),
    ],
)
def test_bad_rules(rules: str, message: str) -> None:
    section = {"facts": ["e(Node)"], "contexts": {"here": ""}, "rules": rules}
    with pytest.raises(RulebaseError) as caught:
        parse_rulebase(section)
    assert any(message in i.message for i in caught.value.issues), caught.value


def test_stratified_negation_and_recursion_are_accepted() -> None:
    rulebase = parse_rulebase(
        {
            "facts": ["edge(A, B)", "node(N)"],
            "rules": """
                path(A, B) :- edge(A, B).
                path(A, C) :- path(A, B), edge(B, C).
                unreachable(A, B) :- node(A), node(B), not path(A, B).
            """,
        }
    )
    assert [str(c) for c in rulebase.clauses["unreachable"]] == [
        "unreachable(A, B) :- node(A), node(B), not path(A, B)."
    ]


def test_a_negation_written_first_is_moved_after_what_binds_it() -> None:
    rulebase = parse_rulebase(
        {"facts": ["e(X)", "f(X)"], "rules": "p(X) :- not f(X), X != 3, e(X)."}
    )
    assert str(rulebase.clauses["p"][0]) == "p(X) :- e(X), not f(X), X != 3."


@pytest.mark.parametrize(
    ("binding", "message"),
    [
        ({"fact": "s(F, S)", "tool": "nope", "args": {"id": "F"}}, "names tool 'nope'"),
        ({"fact": "s(F, S)", "tool": "t", "args": {"id": "F"}}, "variable S of s(F, S)"),
        ({"fact": "s(F, S)", "tool": "t", "args": {"id": "G"}}, "args maps id to G"),
        (
            {"fact": "s(F, S)", "tool": "t", "args": {"id": "F"}, "extract": {"S": "$.a[*]"}},
            "[*] gives many values",
        ),
        ({"fact": "s(F, F)", "tool": "t"}, "distinct variables"),
        (
            {"fact": "s(F, S)", "tool": "t", "args": {"id": "F"}, "extract": {"F": "$.a"}},
            "F is an input",
        ),
        (
            {"fact": "s(F, S)", "tool": "t", "args": {"id": "F"}, "extract": {"S": "status"}},
            "a path starts with '$'",
        ),
    ],
)
def test_bad_bindings(binding: dict, message: str) -> None:
    section = {"functions": {"t": {"url": "http://127.0.0.1:9/t"}}, "bindings": [binding]}
    with pytest.raises(RulebaseError) as caught:
        parse_rulebase(section)
    assert any(message in i.message for i in caught.value.issues), caught.value


def test_a_guard_that_needs_its_own_tool_is_refused() -> None:
    section = {
        "functions": {"get": {"url": "http://127.0.0.1:9/get"}},
        "bindings": [
            {"fact": "owner(B, U)", "tool": "get", "args": {"id": "B"}, "extract": {"U": "$.user"}}
        ],
        "rules": "mine(B) :- owner(B, me).",
        "guards": {"get": {"args": {"id": "B"}, "requires": "mine(B)"}},
    }
    with pytest.raises(RulebaseError, match="the guard of get needs facts that only get"):
        parse_rulebase(section)


def test_unknown_keys_and_bad_values_are_problems_too() -> None:
    with pytest.raises(RulebaseError) as caught:
        parse_rulebase({"stritc": True, "defaultTtl": "soon", "limits": {"maxDepth": 0}})
    messages = " | ".join(i.message for i in caught.value.issues)
    assert "unknown key 'stritc'" in messages
    assert "got 'soon'" in messages
    assert "max_depth must be a positive integer" in messages or "maxDepth" in messages


def test_a_bad_tools_section_keeps_the_previous_rulebase_active() -> None:
    good = (SAMPLE / "guardrails.yaml").read_text(encoding="utf-8")
    governance = Governance(SessionStore())
    first = governance.load(parse_policy(good), good)
    assert first is not None and governance.error is None
    broken = good.replace("not refunded(Booking).", "not refunded(Booking)")
    kept = governance.load(parse_policy(broken), broken)
    assert kept is first and governance.rulebase is first
    assert governance.error is not None
    messages = [i.message for i in governance.error.issues]
    assert "expected ',' or '.' after not refunded(Booking), found the end of the text" in messages
