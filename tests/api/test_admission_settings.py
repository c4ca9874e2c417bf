"""The admission settings: defaults that fit together, and bad values refused at start with
a message that names the variable."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sentinel_runtime.settings import Settings


def test_defaults_give_every_admitted_turn_an_upstream_connection() -> None:
    settings = Settings()
    assert settings.upstream_connections() == 2 * settings.MAX_INFLIGHT_TURNS
    assert 0 < settings.MAX_QUEUE_SECONDS <= 5


def test_more_turns_alone_bring_their_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_INFLIGHT_TURNS", "3000")
    assert Settings().upstream_connections() == 6000


@pytest.mark.parametrize(
    ("env", "named"),
    [
        pytest.param({"MAX_INFLIGHT_TURNS": "0"}, "MAX_INFLIGHT_TURNS", id="no-turns"),
        pytest.param({"MAX_QUEUE_SECONDS": "-1"}, "MAX_QUEUE_SECONDS", id="negative-wait"),
        pytest.param({"MAX_QUEUE_SECONDS": "500"}, "MAX_QUEUE_SECONDS", id="milliseconds"),
        pytest.param({"LLM_MAX_CONNECTIONS": "many"}, "LLM_MAX_CONNECTIONS", id="not-a-number"),
        pytest.param(
            {"MAX_INFLIGHT_TURNS": "64", "LLM_MAX_CONNECTIONS": "32"},
            "LLM_MAX_CONNECTIONS (32) is below MAX_INFLIGHT_TURNS (64)",
            id="fewer-connections-than-turns",
        ),
    ],
)
def test_bad_values_are_refused_naming_the_variable(
    env: dict[str, str], named: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError, match=named.replace("(", r"\(").replace(")", r"\)")):
        Settings()


def test_no_wait_is_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_QUEUE_SECONDS", "0")
    assert Settings().MAX_QUEUE_SECONDS == 0
