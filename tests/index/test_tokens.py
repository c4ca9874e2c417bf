"""The shared tokenizer: lower-cased words of any script, underscores and punctuation split."""

from __future__ import annotations

import pytest

from sentinel_runtime.index.analysis import tokenize


@pytest.mark.parametrize(
    ("text", "words"),
    [
        pytest.param(
            "Refunds, REFUND or refund.", ["refunds", "refund", "or", "refund"], id="case"
        ),
        pytest.param(
            "snake_case v2 naïve", ["snake", "case", "v2", "naïve"], id="separators-unicode"
        ),
        pytest.param("AKIAIOSFODNN7EXAMPLE", ["akiaiosfodnn7example"], id="identifier"),
        pytest.param("it's e-mail", ["it", "s", "e", "mail"], id="punctuation"),
        pytest.param("?! -- ...", [], id="no-words"),
    ],
)
def test_tokenize(text: str, words: list[str]) -> None:
    assert tokenize(text) == words
