"""``regex`` scanner: match output against regular expressions (docs/contracts.md).

Patterns are compiled with the ``regex`` module because it enforces a timeout: a pattern
that backtracks catastrophically raises instead of stalling the worker. Unlike
llm-guard, which redacts only the first matching pattern, every match of every pattern is
redacted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import regex
from pydantic import Field, field_validator

from sentinel_runtime.guardrails.scanners.base import (
    REDACTION,
    ScannerParams,
    ScannerType,
    ScanResult,
    hold_from,
    hold_pattern,
    replace_spans,
)

# Budget for one pattern over one text; a timeout raises ``TimeoutError`` (fail mode applies).
SCAN_TIMEOUT_SECONDS = 0.25
# Probe used when the policy loads: a pattern that cannot finish these in this time is
# rejected as catastrophically backtracking instead of being discovered under traffic.
# The regex module tames nested quantifiers on short runs ("(a+)+$" needs 3 ms for 64
# characters), so the probe must be long enough for their polynomial blow-up to show
# (seconds for 1024); the budget is the scan budget, which benign patterns meet by far.
PROBE_TIMEOUT_SECONDS = SCAN_TIMEOUT_SECONDS
PROBE_LENGTH = 1024


class RegexParams(ScannerParams):
    # A pattern that does not compile still skips the scanner, as in the contract's parser.
    item_lists: ClassVar[tuple[str, ...]] = ("patterns",)

    patterns: list[str] = Field(min_length=1)
    # llm-guard's match types, which the contract's parser accepts in any case. "all" (every
    # match of a pattern) is what "search" already does here: every match is redacted.
    match_type: Literal["search", "fullmatch", "all"] = "search"
    is_blocked: bool = True

    @field_validator("match_type", mode="before")
    @classmethod
    def _any_case(cls, value: Any) -> Any:
        # "FullMatch" is "fullmatch", as the contract's parser lower-cases match_type.
        return value.lower() if isinstance(value, str) else value

    @field_validator("patterns")
    @classmethod
    def _compile_and_probe(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            if not pattern:
                raise ValueError("patterns must not contain empty strings")
            compiled = _compile(pattern)
            _probe(pattern, compiled)
        return patterns

    def can_redact(self) -> bool:
        # With is_blocked=false a hit means "no allowed pattern matched": nothing to cut out.
        return self.is_blocked


def _compile(pattern: str) -> regex.Pattern[str]:
    try:
        return regex.compile(pattern, flags=regex.VERSION0)
    except regex.error as exc:
        raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from exc


def _probe_inputs(pattern: str) -> list[str]:
    chars = {c for c in pattern if c.isalnum() or c in " _-.@:/"} | {"a", "0", " "}
    return [c * PROBE_LENGTH + "\x00" for c in sorted(chars)]


def _probe(pattern: str, compiled: regex.Pattern[str]) -> None:
    for text in _probe_inputs(pattern):
        try:
            compiled.search(text, timeout=PROBE_TIMEOUT_SECONDS)
        except TimeoutError as exc:
            raise ValueError(
                f"pattern {pattern!r} backtracks catastrophically "
                f"(no result within {PROBE_TIMEOUT_SECONDS * 1000:.0f} ms on a "
                f"{PROBE_LENGTH}-character probe)"
            ) from exc


@dataclass(frozen=True)
class RegexScanner:
    patterns: tuple[regex.Pattern[str], ...]
    fullmatch: bool
    is_blocked: bool
    rewrite: bool
    # Each pattern anchored at the end, for streaming (scanners.base.hold_pattern).
    open_ends: tuple[regex.Pattern[str], ...] = ()

    @property
    def whole_text_reason(self) -> str | None:
        if self.fullmatch:
            return "match_type fullmatch judges the whole answer"
        if not self.is_blocked:
            return "is_blocked false (an allow-list) needs a match anywhere in the answer"
        return None

    def hold(self, text: str) -> int:
        """Where a match may still be growing, or may still start, in a streamed ``text``."""
        return hold_from(self.open_ends, text, SCAN_TIMEOUT_SECONDS)

    def _spans(self, text: str) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        for pattern in self.patterns:
            if self.fullmatch:
                m = pattern.fullmatch(text, timeout=SCAN_TIMEOUT_SECONDS)
                if m:
                    spans.append(m.span())
            else:
                spans.extend(
                    m.span()
                    for m in pattern.finditer(text, timeout=SCAN_TIMEOUT_SECONDS)
                    if m.end() > m.start()
                )
        return spans

    def scan(self, text: str) -> ScanResult:
        spans = self._spans(text)
        if not self.is_blocked:
            # Allow-list mode: the output is valid only if some pattern matches.
            return ScanResult.clean(text) if spans else ScanResult(text, False, 1.0)
        if not spans:
            return ScanResult.clean(text)
        redacted = replace_spans(text, [(a, b, REDACTION) for a, b in spans])
        return ScanResult(redacted if self.rewrite else text, False, 1.0)


def build(params: RegexParams, rewrite: bool) -> RegexScanner:
    return RegexScanner(
        patterns=tuple(_compile(p) for p in params.patterns),
        fullmatch=params.match_type == "fullmatch",
        is_blocked=params.is_blocked,
        rewrite=rewrite,
        open_ends=tuple(hold_pattern(p) for p in params.patterns),
    )


SCANNER = ScannerType(
    name="regex",
    params=RegexParams,
    build=build,
    summary="regular expressions; every match of every pattern is redacted",
)
