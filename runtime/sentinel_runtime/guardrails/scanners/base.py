"""The scanner contract every output scanner implements.

A scanner is built once per policy version from a validated params model and then
called for every assistant message. ``scan`` is pure: text in, :class:`ScanResult` out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar, Protocol

import regex
from pydantic import BaseModel, ConfigDict


@dataclass(frozen=True, slots=True)
class ScanResult:
    """Outcome of one scanner over one text.

    ``text`` is the sanitized text (identical to the input when the scanner cannot or
    was not asked to rewrite); ``valid`` is False when the scanner found a hit; ``score``
    is a risk score in [-1, 1] (-1: nothing found, 1: certain hit).
    """

    text: str
    valid: bool
    score: float

    @staticmethod
    def clean(text: str) -> ScanResult:
        return ScanResult(text=text, valid=True, score=-1.0)


class Scanner(Protocol):
    def scan(self, text: str) -> ScanResult: ...


class ScannerParams(BaseModel):
    """Base of every scanner's typed params; unknown keys are ignored (permissive policy)."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)
    # List fields whose unusable items (an empty string, a number, null) the policy drops one
    # by one, as the contract's parser does, rather than skipping the scanner (policy.py).
    item_lists: ClassVar[tuple[str, ...]] = ()

    def can_redact(self) -> bool:
        """Whether a hit under ``action: redact`` can be rewritten rather than blocked."""
        return True


@dataclass(frozen=True)
class ScannerType:
    """Registry entry: the policy ``type`` name, its params model and its builder."""

    name: str
    params: type[ScannerParams]
    # build(params, rewrite): ``rewrite`` is True when hits will be redacted, so scanners
    # under ``action: block`` skip the work of producing sanitized text.
    build: Callable[[ScannerParams, bool], Scanner]
    summary: str


REDACTION = "[REDACTED]"


def replace_spans(text: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """Replace each ``(start, end, replacement)`` span of ``text``.

    Overlapping spans merge into one replacement (the first span's, by start then length),
    so a secret matched by two patterns is never half-revealed between two redactions.
    """
    ordered = sorted(spans, key=lambda s: (s[0], -(s[1] - s[0])))
    merged: list[list] = []
    for start, end, replacement in ordered:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, replacement])
    out: list[str] = []
    cursor = 0
    for start, end, replacement in merged:
        out.append(text[cursor:start])
        out.append(replacement)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


# -- streaming: how much of a text is final ------------------------------------------------
#
# A scanner that can judge a stream piece by piece has ``hold(text) -> int``: the offset
# from which ``text`` must wait for more, because some continuation could still pull it into
# a match (``len(text)`` when nothing must wait). Everything before it is final: each match
# starting there is the same in every longer text. A scanner whose verdict needs the whole
# answer says why in ``whole_text_reason`` instead; the stream guard then holds the answer.


class Holding(Protocol):
    def hold(self, text: str) -> int: ...


def whole_text_reason(scanner: object) -> str | None:
    """Why ``scanner`` needs the whole answer before its verdict; None when it can stream."""
    if not callable(getattr(scanner, "hold", None)):
        return "its verdict needs the whole answer"
    return getattr(scanner, "whole_text_reason", None)


def hold_pattern(pattern: str, flags: int = 0, tail: str = "") -> regex.Pattern[str]:
    """``pattern`` (then ``tail``) anchored at the end of the text, for :func:`hold_from`.

    The anchor makes the ``regex`` module's partial matching report every start whose match
    could still change: a partial match (the text ends inside one) and a match that ends
    exactly at the end (``\\d+``, ``ab|abcdef`` or a ``\\b`` there may still grow or fail).
    Without it, ``partial=True`` prefers a complete match that a continuation could extend
    (``a.*b`` on "a b c" reports "a b" as complete). ``tail`` extends what a match claims
    (the secrets scanner redacts a token's rest after a fixed-length match).
    """
    return regex.compile(f"(?:{pattern}){tail}\\Z", flags=flags | regex.VERSION0)


def hold_from(patterns: Iterable[regex.Pattern[str]], text: str, timeout: float) -> int:
    """The earliest start of a match of any :func:`hold_pattern` that is still open."""
    end = len(text)
    hold = end
    for pattern in patterns:
        # The whole text each time: an end position would move the end the anchor sees.
        m = pattern.search(text, partial=True, timeout=timeout)
        # An empty partial match at the end only says that a match could start there.
        if m is not None and m.start() < hold:
            hold = m.start()
    return hold
