"""``regex`` scanner: match output against regular expressions (docs/contracts.md).

Patterns are compiled with the ``regex`` module because it enforces a timeout: a pattern
that backtracks catastrophically raises instead of stalling the worker. Unlike
llm-guard, which redacts only the first matching pattern, every match of every pattern is
redacted.

Most answers match no pattern, and the ``regex`` module sets up its timeout on every call
(about 1.5 microseconds, most of a pattern's cost on a short answer). So on a short text the
patterns that can be shown to match as one alternation (:func:`as_branch`) are first searched
together, under one timeout; only when that finds something does every pattern run alone, as
before.
"""

from __future__ import annotations

import re
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
# Inline flags a pattern may open with that mean the same scoped to its own group: a leading
# "(?i)" applies to the whole pattern, "(?i:...)" to what it wraps, and nothing else is in it.
_SCOPABLE_FLAGS = frozenset("ims")
_LEADING_FLAGS = re.compile(r"\(\?([A-Za-z]+)\)")
# Constructs that keep their meaning inside an alternation of other patterns: groups that
# number nothing or only name themselves, lookarounds, atomic groups, comments, scoped flags.
_SAFE_GROUP = re.compile(r"\(\?(?::|=|!|<=|<!|>|#|[ims]*(?:-[ims]+)?:|P?<(?P<name>\w+)>)")
# Escapes that refer to other groups or to where the search started, or that the module reads
# in ways not worth proving here (backreferences, \g, \k, \G, \K, named lists, quoting).
_UNSAFE_ESCAPES = frozenset("0123456789gkGKLQE")
# Longest text the joined pre-check is tried on. The alternation tries every branch at every
# start (about 25 ns a character for the default policy's six), where a pattern alone skips
# ahead to its literal; it costs less than the patterns' timeouts below about 550 characters
# (bench/scanner_answer_cost.py), so longer texts go straight to the patterns alone.
JOIN_MAX_CHARS = 400
_BRACED_ESCAPES = frozenset("pPN")
# A counted repeat; any other brace may be fuzzy matching ("{e<=1}"), which is left alone.
_REPEAT = re.compile(r"\{\d*(?:,\d*)?\}")


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


def as_branch(pattern: str) -> tuple[str, frozenset[str]] | None:
    """``pattern`` as one branch of an alternation, and the group names it defines; None
    when its text holds anything whose meaning there is not plainly its own.

    A branch ``(?:pattern)`` matches at a start exactly where ``pattern`` does, so an
    alternation of branches finds a match iff one of its patterns does. What could break
    that is refused, over-cautiously (an ``(`` or ``{`` inside a class is refused too):
    backreferences and group calls (the alternation renumbers groups), global inline flags
    other than a leading scopable one, verbose mode (a ``#`` comment would swallow the
    closing parenthesis), fuzzy matching and unusual escapes. Reads only the pattern's text.
    """
    flags, body = "", pattern
    leading = _LEADING_FLAGS.match(pattern)
    if leading:
        flags, body = leading.group(1), pattern[leading.end() :]
        if not set(flags) <= _SCOPABLE_FLAGS:
            return None
    names: set[str] = set()
    at = 0
    while at < len(body):
        char = body[at]
        if char == "\\":
            escaped = body[at + 1 : at + 2]
            if escaped in _UNSAFE_ESCAPES:
                return None
            at += 2
            # "\p{L}", "\N{...}": the braces belong to the escape.
            if escaped in _BRACED_ESCAPES and body.startswith("{", at):
                close = body.find("}", at)
                at = len(body) if close == -1 else close + 1
            continue
        if char == "(" and body.startswith("?", at + 1):
            group = _SAFE_GROUP.match(body, at)
            if group is None:
                return None
            if group.group("name"):
                names.add(group.group("name"))
        elif char == "{":
            repeat = _REPEAT.match(body, at)
            if repeat is None:
                return None
        at += 1
    return f"(?{flags}:{body})", frozenset(names)


def any_match(patterns: list[str]) -> tuple[regex.Pattern[str] | None, tuple[int, ...]]:
    """One alternation of the patterns that can join it, and the indexes of those that
    cannot (they always run alone). None when fewer than two join, or when the joined
    pattern does not number and name their groups as they do apart."""
    branches: list[str] = []
    rest: list[int] = []
    names: set[str] = set()
    groups = 0
    for index, pattern in enumerate(patterns):
        branch = as_branch(pattern)
        if branch is None or names & branch[1]:
            rest.append(index)
            continue
        branches.append(branch[0])
        names |= branch[1]
        groups += _compile(pattern).groups
    if len(branches) < 2:
        return None, tuple(range(len(patterns)))
    try:
        joined = regex.compile("|".join(branches), flags=regex.VERSION0)
    except regex.error:
        return None, tuple(range(len(patterns)))
    if joined.groups != groups or set(joined.groupindex) != names:
        return None, tuple(range(len(patterns)))
    return joined, tuple(rest)


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
    # The patterns that could join one alternation (:func:`any_match`), searched together
    # first, and those that could not, which always run alone; None: every pattern alone.
    joined: regex.Pattern[str] | None = None
    alone: tuple[regex.Pattern[str], ...] = ()

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

    def _joined_matches(self, text: str) -> bool:
        """Whether some joined pattern may match ``text``: False only when none does."""
        assert self.joined is not None
        try:
            if self.fullmatch:
                return self.joined.fullmatch(text, timeout=SCAN_TIMEOUT_SECONDS) is not None
            return self.joined.search(text, timeout=SCAN_TIMEOUT_SECONDS) is not None
        except TimeoutError:
            # Unknown: the patterns then run alone, each with its own budget, so one that
            # backtracks catastrophically still raises and one that is merely slow does not.
            return True

    def _spans(self, text: str) -> list[tuple[int, int]]:
        if self.joined is None or len(text) > JOIN_MAX_CHARS or self._joined_matches(text):
            return self._spans_of(self.patterns, text)
        return self._spans_of(self.alone, text)

    def _spans_of(
        self, patterns: tuple[regex.Pattern[str], ...], text: str
    ) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        for pattern in patterns:
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
    patterns = tuple(_compile(p) for p in params.patterns)
    joined, alone = any_match(params.patterns)
    return RegexScanner(
        patterns=patterns,
        fullmatch=params.match_type == "fullmatch",
        is_blocked=params.is_blocked,
        rewrite=rewrite,
        open_ends=tuple(hold_pattern(p) for p in params.patterns),
        joined=joined,
        alone=tuple(patterns[i] for i in alone),
    )


SCANNER = ScannerType(
    name="regex",
    params=RegexParams,
    build=build,
    summary="regular expressions; every match of every pattern is redacted",
)
