"""Derived literal prefixes: every match of a gated regex starts with one of them."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sentinel_runtime.guardrails.scanners.secrets import builtin_plugins, engine
from sentinel_runtime.guardrails.scanners.secrets_gates import literal_prefixes

GATES = [g for g in engine(tuple(sorted(builtin_plugins()))).gates if g.prefixes]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        pytest.param(r"AKIA[0-9A-Z]{16}", ("AKIA",), id="literal-run"),
        pytest.param(r"(ghp|gho)_x", ("gh",), id="common-prefix-of-branches"),
        pytest.param(r"(?:abc|xyz)d", ("abc", "xyz"), id="branches"),
        pytest.param(r"[MNO]abc", (), id="class-first"),
        pytest.param(r"(?<!\w)abc", (), id="assertion-first"),
        pytest.param(r"(?:ab|c*)d", (), id="branch-that-can-be-empty"),
        pytest.param(r"(?i)abc", (), id="ignorecase"),
    ],
)
def test_literal_prefixes(pattern: str, expected: tuple[str, ...]) -> None:
    assert literal_prefixes(re.compile(pattern)) == expected


def test_most_token_detectors_get_a_prefix() -> None:
    assert len(GATES) >= 20


@pytest.mark.parametrize("gate", GATES, ids=[g.regex.pattern[:24] for g in GATES])
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_generated_match_contains_a_prefix(gate, data) -> None:
    text = data.draw(st.from_regex(gate.regex))
    match = gate.regex.search(text)
    assert match is not None
    assert any(match.group(0).startswith(p) for p in gate.prefixes)
