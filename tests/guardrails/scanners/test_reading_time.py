"""``reading_time`` scanner: 200 words per minute, ``max_time`` in minutes, truncation."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from sentinel_runtime.guardrails.scanners import REGISTRY
from sentinel_runtime.guardrails.scanners.reading_time import (
    SCANNER,
    WORDS_PER_MINUTE,
    ReadingTimeParams,
)
from support.scanners import scanning

scan = scanning(SCANNER)


def words(count: int, sep: str = " ") -> str:
    return sep.join(f"w{i}" for i in range(count))


def test_registered_under_seed_name() -> None:
    assert REGISTRY["reading_time"] is SCANNER


def test_seed_defaults() -> None:
    params = ReadingTimeParams.model_validate({"max_time": 1.0})
    assert params.truncate is False
    assert params.can_redact() is False
    assert WORDS_PER_MINUTE == 200


@pytest.mark.parametrize(
    ("max_time", "allowed"),
    [
        pytest.param(1.0, 200, id="one-minute"),
        pytest.param(0.25, 50, id="quarter-minute"),
        pytest.param(0.1, 20, id="tenth"),
        pytest.param(0.29, 58, id="float-rounding-0.29"),
        pytest.param(0.57, 114, id="float-rounding-0.57"),
        pytest.param(1.15, 230, id="float-rounding-1.15"),
        pytest.param(0.2525, 50, id="fraction-of-a-word"),
    ],
)
def test_limit_is_200_words_per_minute(max_time: float, allowed: int) -> None:
    # As llm-guard: a hit when words / 200 > max_time.
    assert scan(words(allowed), max_time=max_time).valid
    assert not scan(words(allowed + 1), max_time=max_time).valid


def test_integer_max_time_is_accepted() -> None:
    assert scan(words(200), max_time=1).valid


def test_over_limit_without_truncate_is_left_to_the_action() -> None:
    text = words(60)
    result = scan(text, max_time=0.25)
    assert result.text == text
    assert not result.valid


@pytest.mark.parametrize(
    ("count", "score"),
    [
        pytest.param(60, 0.2, id="twenty-percent-over"),
        pytest.param(75, 0.5, id="half-over"),
        pytest.param(500, 1.0, id="capped-at-one"),
    ],
)
def test_score_grows_with_overrun(count: int, score: float) -> None:
    assert scan(words(count), max_time=0.25).score == pytest.approx(score)


def test_truncate_keeps_the_words_that_fit() -> None:
    text = words(80)
    result = scan(text, max_time=0.25, truncate=True)
    assert result.text == words(50)
    assert not result.valid


def test_truncate_keeps_original_spacing_and_drops_trailing_whitespace() -> None:
    text = "alpha  beta\n\tgamma   delta epsilon"
    result = scan(text, max_time=3 / WORDS_PER_MINUTE, truncate=True)
    assert result.text == "alpha  beta\n\tgamma"


def test_truncate_without_a_rewrite_leaves_text_unchanged() -> None:
    text = words(80)
    assert scan(text, rewrite=False, max_time=0.25, truncate=True).text == text


def test_truncate_with_room_for_no_word_cannot_rewrite() -> None:
    text = words(3)
    result = scan(text, max_time=0.001, truncate=True)
    assert result.text == text
    assert not result.valid


@pytest.mark.parametrize(
    "text",
    [pytest.param("", id="empty"), pytest.param(" \n\t ", id="whitespace-only")],
)
def test_text_without_words_is_clean(text: str) -> None:
    assert scan(text, max_time=0.001).valid


def test_truncate_enables_redaction() -> None:
    assert ReadingTimeParams.model_validate({"max_time": 1, "truncate": True}).can_redact()


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({}, id="max-time-missing"),
        pytest.param({"max_time": 0}, id="zero"),
        pytest.param({"max_time": -1.0}, id="negative"),
        pytest.param({"max_time": "1"}, id="number-as-string"),
        pytest.param({"max_time": 1.0, "truncate": "yes"}, id="bool-as-string"),
    ],
)
def test_invalid_config_is_rejected(config: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ReadingTimeParams.model_validate(config)


@pytest.mark.parametrize("value", [".inf", ".nan"])
def test_infinite_or_nan_max_time_is_invalid_config(value: str) -> None:
    from sentinel_runtime.guardrails.policy import parse_policy

    policy = parse_policy(f"scanners:\n  - type: reading_time\n    max_time: {value}\n")
    assert policy.scanners == ()
    assert "max_time" in policy.skipped[0].reason
