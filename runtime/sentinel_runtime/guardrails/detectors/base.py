"""What every detector reports."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Detection:
    """A secret at ``text[start:end]``; ``detector`` names the rule that found it
    (``tokens/github-pat``, ``private_keys``, ``assignments/password``, ...)."""

    detector: str
    start: int
    end: int


def trailing_run_start(text: str, limit: int) -> int:
    """Where the text's last run of non-whitespace begins (at most ``limit`` back): the only
    place a secret that holds no whitespace can still begin or grow while text streams in."""
    start = len(text)
    floor = max(0, len(text) - limit)
    while start > floor and not text[start - 1].isspace():
        start -= 1
    return start
