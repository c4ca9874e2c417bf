"""``harm_scan``: for any patterns, ``Scan(index, text).search(pattern)`` answers as
``pattern.search(text)`` does, whether the index could read the pattern's trigger words,
had to search it whole, or does not hold it at all. The lexicon's own patterns are checked
on large corpora by ``test_harm_equivalence``.
"""

from __future__ import annotations

import re

import pytest

from sentinel_runtime.pipeline.signals import harm_scan

PATTERNS = [
    re.compile(r"\bkill(?:s|ing)?\s+(?:my|the)\s+\w+", re.IGNORECASE),  # first words
    re.compile(r"\b(?:a|the)\s+(?:\w+\s+)?bomb\b", re.IGNORECASE),  # a rarer word guards
    re.compile(r"\b\d{1,2}[- ]year[- ]olds?\b", re.IGNORECASE),  # a needed word inside
    re.compile(r"^\s*(?:was|is)\b", re.IGNORECASE),  # at the start only
    re.compile(r"(?-i:[A-Z])\w+\s+(?:is|was)\s+guilty", re.IGNORECASE),  # needs "guilty"
    re.compile(r"[\"']quoted[\"']", re.IGNORECASE),  # a word within a word
    re.compile(r"(\w+) \1", re.IGNORECASE),  # a back reference: searched whole
    re.compile(r"\bfoo\b", re.IGNORECASE | re.ASCII),  # another \b: searched whole
    re.compile(r"(?x) s p a c e d", re.IGNORECASE),  # global flags: searched whole
]
TEXTS = [
    "",
    "Kill the neighbour",
    "KILLING my dog now",
    "skill the test",
    "the small bomb went off",
    "A BOMB",
    "bombs",
    "a 12-year-old and a 9 year olds",
    "\u0661\u0662-year-old",  # Arabic-Indic digits are \d
    "  was it?",
    "it was",
    "Smith is guilty",
    "smith is guilty",
    "a 'quoted' word, x'quoted'y",
    "the the",
    "foo bar \u00e9foo",
    "spaced",
    "K\u0130LL\u0130NG the cat",  # dotted capital I matches i case-insensitively
    "\u212aill my cat",  # Kelvin sign: a k case-insensitively
]


@pytest.fixture(scope="module")
def index() -> harm_scan.Index:
    return harm_scan.Index(PATTERNS)


@pytest.mark.parametrize(
    "text", [pytest.param(text, id=f"text{n}") for n, text in enumerate(TEXTS)]
)
def test_scan_answers_as_a_search(index: harm_scan.Index, text: str) -> None:
    scan = harm_scan.Scan(index, text)
    assert [scan.search(p) for p in PATTERNS] == [p.search(text) is not None for p in PATTERNS]


def test_a_pattern_the_index_does_not_hold_is_searched_whole(index: harm_scan.Index) -> None:
    other = re.compile(r"neighbou?r", re.IGNORECASE)
    assert harm_scan.Scan(index, "Kill the neighbour").search(other)
    assert harm_scan.Scan(index, "Kill the neighbour").may_match(other)
    assert not harm_scan.Scan(index, "Kill the dog").search(other)


def test_may_match_rules_out_only_what_no_sentence_matches(index: harm_scan.Index) -> None:
    for text in TEXTS:
        scan = harm_scan.Scan(index, text)
        for pattern in PATTERNS:
            if pattern.search(text):
                assert scan.may_match(pattern), (pattern.pattern, text)


def test_unread_patterns_are_searched_whole(index: harm_scan.Index) -> None:
    assert [index.plans[id(p)].always for p in PATTERNS[-3:]] == [True, True, True]
    assert not any(index.plans[id(p)].always for p in PATTERNS[:-3])
