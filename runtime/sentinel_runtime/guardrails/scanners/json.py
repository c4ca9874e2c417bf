"""``json`` scanner: JSON in the output must parse (docs/contracts.md; llm-guard's semantics).

Every top-level ``{...}`` object in the text is a candidate (as llm-guard, so prose like
"[citation needed]" is not judged as JSON). A hit is a
candidate that does not parse (and cannot be repaired when ``repair`` is on), or fewer
than ``required_elements`` valid blocks. With ``repair``, a redact hit returns the text
with broken blocks replaced by their repaired form; text without JSON and with
``required_elements: 0`` is valid.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from pydantic import Field

from sentinel_runtime.guardrails.scanners.base import ScannerParams, ScannerType, ScanResult

_CLOSERS = {"{": "}", "[": "]"}
# Each of these first matches a whole double-quoted string, kept as it is, so a repair
# never rewrites text inside string values ("True story", "a,}").
_DOUBLE_QUOTED = r'"(?:[^"\\]|\\.)*"'
_TRAILING_COMMA = re.compile(rf"({_DOUBLE_QUOTED})|,\s*([}}\]])")
_PY_LITERALS = re.compile(rf"({_DOUBLE_QUOTED})|\b(True|False|None)\b")
_LITERALS = {"True": "true", "False": "false", "None": "null"}
_SINGLE_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


class JsonParams(ScannerParams):
    required_elements: int = Field(default=0, ge=0)
    repair: bool = True

    def can_redact(self) -> bool:
        return self.repair


def _walk(text: str) -> tuple[list[tuple[int, int]], list[str]]:
    """One string-aware pass: spans of top-level objects, and brackets left open at the end."""
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
        spans.append((start, len(text)))  # an unterminated object is a candidate too
    return spans, stack


def candidates(text: str) -> list[tuple[int, int]]:
    """Spans of top-level ``{...}`` blocks."""
    return _walk(text)[0]


def _parses(block: str) -> bool:
    try:
        json.loads(block)
    except ValueError:
        return False
    return True


def _drop_comma(m: re.Match[str]) -> str:
    return m[1] or m[2]


def repair(block: str) -> str | None:
    """A conservative repair: quotes, Python literals, trailing commas, missing closers."""
    fixed = _SINGLE_QUOTED.sub(lambda m: json.dumps(m.group(1)), block)
    fixed = _PY_LITERALS.sub(lambda m: m[1] or _LITERALS[m[2]], fixed)
    fixed = _TRAILING_COMMA.sub(_drop_comma, fixed)
    missing = [_CLOSERS[c] for c in _walk(fixed)[1]]
    closed = fixed.rstrip().rstrip(",") + "".join(reversed(missing))
    fixed = _TRAILING_COMMA.sub(_drop_comma, closed)
    return fixed if _parses(fixed) else None


@dataclass(frozen=True)
class JsonScanner:
    required_elements: int
    repair: bool

    def scan(self, text: str) -> ScanResult:
        spans = candidates(text) if "{" in text else []
        if len(spans) < self.required_elements:
            return ScanResult(text, False, 1.0)
        pieces: list[str] = []
        cursor = 0
        broken = repaired_all = 0
        for start, end in spans:
            block = text[start:end]
            if _parses(block):
                continue
            broken += 1
            fixed = repair(block) if self.repair else None
            if fixed is not None:
                repaired_all += 1
                pieces.extend((text[cursor:start], fixed))
                cursor = end
        if not broken:
            return ScanResult.clean(text)
        if repaired_all < broken:
            return ScanResult(text, False, 1.0)  # unrepairable: left to the action
        pieces.append(text[cursor:])
        return ScanResult("".join(pieces), False, 1.0)


def build(params: JsonParams, rewrite: bool) -> JsonScanner:
    return JsonScanner(required_elements=params.required_elements, repair=params.repair and rewrite)


SCANNER = ScannerType(
    name="json",
    params=JsonParams,
    build=build,
    summary="JSON blocks in the output parse; optional repair and required count",
)
