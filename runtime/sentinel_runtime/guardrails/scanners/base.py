"""The scanner contract every output scanner implements.

A scanner is built once per policy version from a validated params model and then
called for every assistant message. ``scan`` is pure: text in, :class:`ScanResult` out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

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
