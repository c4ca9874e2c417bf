"""Texts the fast-path equivalence tests run both paths over: the secrets evaluation set and
every string literal of the guardrails tests (the cases others wrote for these scanners).
Not a test module: the ``test_*_fast_path`` modules import it."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from sentinel_runtime.evaluation.secrets_set import generate

GUARDRAILS_TESTS = Path(__file__).resolve().parents[1]


@functools.cache
def literals_of_tests() -> tuple[str, ...]:
    """Every string constant in tests/guardrails, each once, in a stable order."""
    found: dict[str, None] = {}
    for path in sorted(GUARDRAILS_TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.setdefault(node.value, None)
    return tuple(found)


@functools.cache
def corpus() -> tuple[str, ...]:
    """The evaluation set's answers (two seeds), then the tests' literals."""
    texts = [sample.text for seed in (0, 1) for sample in generate(seed)]
    return tuple(dict.fromkeys([*texts, *literals_of_tests()]))
