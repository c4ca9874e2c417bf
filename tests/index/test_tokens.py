"""The shared tokenizer: lower-cased words, underscores split, English plurals folded."""

from __future__ import annotations

import pytest

from sentinel_runtime.index.tokens import tokenize


@pytest.mark.parametrize(
    ("text", "words"),
    [
        pytest.param(
            "Refunds, REFUND or refund.", ["refund", "refund", "or", "refund"], id="case-plural"
        ),
        pytest.param(
            "policies indexes boxes matches", ["policy", "index", "box", "match"], id="es-ies"
        ),
        pytest.param(
            "status analysis class this was gas",
            ["status", "analysis", "class", "this", "was", "gas"],
            id="kept",
        ),
        pytest.param(
            "snake_case v2 naïve", ["snake", "case", "v2", "naïve"], id="separators-unicode"
        ),
        pytest.param("AKIAIOSFODNN7EXAMPLE", ["akiaiosfodnn7example"], id="identifier"),
        pytest.param("?! -- ...", [], id="no-words"),
    ],
)
def test_tokenize(text: str, words: list[str]) -> None:
    assert tokenize(text) == words
