"""The shared text analysis: stopword lists read from a data file that ships in the wheel,
topic keywords and content terms."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from sentinel_runtime.index import analysis

ROOT = Path(__file__).resolve().parents[2]


def test_the_stopword_file_ships_with_the_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert (
        "index/data/stopwords.txt"
        in config["tool"]["setuptools"]["package-data"]["sentinel_runtime"]
    )


def test_each_caller_keeps_its_own_stopword_set() -> None:
    assert set(analysis.stopword_lists()) == {"common", "keywords", "terms"}
    assert analysis.STOPWORDS < analysis.KEYWORD_STOPWORDS
    assert analysis.STOPWORDS < analysis.TERM_STOPWORDS
    # Not one merged list: "yes" is no topic word, but a content term; "however" the reverse.
    assert "yes" in analysis.KEYWORD_STOPWORDS - analysis.TERM_STOPWORDS
    assert "however" in analysis.TERM_STOPWORDS - analysis.KEYWORD_STOPWORDS


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Could you refund my order?", {"refund", "order"}, id="stopwords"),
        pytest.param("Refunds: 30 days, EU VAT", {"refunds", "days", "vat"}, id="short-words"),
        pytest.param("snake_case naïve", {"snake", "case", "naïve"}, id="tokenizer-words"),
    ],
)
def test_keywords(text: str, expected: set[str]) -> None:
    assert analysis.keywords(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("The refunds were issued", {"refund", "issu"}, id="stemmed"),
        pytest.param("four episodes, however", {"4", "episod"}, id="number-words"),
        pytest.param("e-mail isn't", {"e-mail", "isn't"}, id="inner-punctuation"),
    ],
)
def test_terms(text: str, expected: frozenset[str]) -> None:
    assert analysis.terms(text) == expected
