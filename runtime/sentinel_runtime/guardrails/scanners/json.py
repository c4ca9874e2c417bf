"""``json`` scanner: JSON in the output must parse (docs/contracts.md; llm-guard's semantics).

Every top-level ``{...}`` object in the text is a candidate (as llm-guard, so prose like
"[citation needed]" is not judged as JSON), and so is an object still open at the end of the
text, which llm-guard's brace matching does not see: an answer cut off inside its JSON is
judged, not waved through. A hit is a candidate that does not parse and cannot be repaired
(with ``repair: false``, one that does not parse), or fewer than ``required_elements``
candidates that parse or repair. A candidate that repairs is not a hit, whatever the action,
as in llm-guard's scanner, which KAITO uses: ``{"a": 1, "b": 2`` passes under ``block`` too.
Text without JSON and with ``required_elements: 0`` is valid.

What Sentinel adds is the delivery: under ``action: redact`` with ``repair``, the repaired
form of each broken block is sent, which the engine counts as a redaction; KAITO validates
with the repair but sends the text as written. Under ``block`` nothing is rewritten.

Repair is json-repair's, the library llm-guard's own JSON scanner delegates to (quotes,
Python literals, trailing or missing commas, comments, unquoted keys, missing closers).
A repair counts only when it yields a JSON object, as the candidate was one, and keeps every
word of the block: json-repair makes ``["curly braces}"]`` of "{curly braces}" (0.64) or
``{}`` (0.44, the version llm-guard pins), and ``{"a": 1}`` of ``{"a": 1, "b"}``; each of
those is prose or lost data, not a repair, so the block stays a hit for the action (llm-guard
takes any repair that parses: a deliberate difference).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

import json_repair
from pydantic import Field

from sentinel_runtime.guardrails.scanners.base import ScannerParams, ScannerType, ScanResult

_CLOSERS = {"{": "}", "[": "]"}
_WORD = re.compile(r"\w+")
# Python's literals are JSON's after a repair; the guard on dropped words reads them so.
_LITERALS = {"True": "true", "False": "false", "None": "null"}


class JsonParams(ScannerParams):
    required_elements: int = Field(default=0, ge=0)
    repair: bool = True

    def can_redact(self) -> bool:
        return self.repair


def candidates(text: str) -> list[tuple[int, int]]:
    """Spans of top-level ``{...}`` blocks, found in one string-aware pass; an object left
    open at the end of the text is a candidate too."""
    spans: list[tuple[int, int]] = []
    stack: list[str] = []
    start = 0
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"' and stack:
            in_string = True
        elif char in _CLOSERS and (stack or char == "{"):
            if not stack:
                start = index
            stack.append(char)
        elif stack and char == _CLOSERS[stack[-1]]:
            stack.pop()
            if not stack:
                spans.append((start, index + 1))
    if stack:
        spans.append((start, len(text)))
    return spans


def _parses(block: str) -> bool:
    try:
        json.loads(block)
    except ValueError:
        return False
    return True


def _strings(value: object) -> Iterator[str]:
    """Every key and string in a parsed JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def _words(text: str) -> set[str]:
    return {_LITERALS.get(word, word) for word in _WORD.findall(text)}


def repair(block: str) -> str | None:
    """json-repair's repair of a broken ``{...}`` block; None unless it is a JSON object
    that keeps every word of the block."""
    try:
        # Non-ASCII stays as written: "José", not "Jos\u00e9".
        fixed = json_repair.repair_json(block, skip_json_loads=True, ensure_ascii=False)
    except (ValueError, RecursionError):  # nesting deeper than its parser goes
        return None
    if not isinstance(fixed, str):
        return None
    try:
        value = json.loads(fixed)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    # Words of keys and strings as parsed (escapes undone), and of the text (numbers).
    kept = _words(fixed).union(*(_words(text) for text in _strings(value)))
    return fixed if _words(block) <= kept else None


@dataclass(frozen=True)
class JsonScanner:
    required_elements: int
    repair: bool
    # Under action: redact, repaired blocks are delivered (never under block).
    rewrite: bool = False

    def scan(self, text: str) -> ScanResult:
        pieces: list[str] = []
        cursor = 0
        valid = broken = 0
        for start, end in candidates(text) if "{" in text else []:
            block = text[start:end]
            if _parses(block):
                valid += 1
                continue
            fixed = repair(block) if self.repair else None
            if fixed is None:
                broken += 1
                continue
            valid += 1
            if self.rewrite:
                pieces.extend((text[cursor:start], fixed))
                cursor = end
        if broken or valid < self.required_elements:
            return ScanResult(text, False, 1.0)  # left to the action
        if not pieces:
            return ScanResult.clean(text)
        pieces.append(text[cursor:])
        return ScanResult("".join(pieces), False, 1.0)


def build(params: JsonParams, rewrite: bool) -> JsonScanner:
    return JsonScanner(
        required_elements=params.required_elements, repair=params.repair, rewrite=rewrite
    )


SCANNER = ScannerType(
    name="json",
    params=JsonParams,
    build=build,
    summary="JSON blocks in the output parse; optional repair and required count",
)
