"""``ban_substrings`` scanner: exact substrings, as plain text or whole words (docs/contracts.md).

All substrings compile into one alternation, so a text is walked once however long the
list is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, field_validator

from sentinel_runtime.guardrails.scanners.base import (
    REDACTION,
    ScannerParams,
    ScannerType,
    ScanResult,
    replace_spans,
)


class BanSubstringsParams(ScannerParams):
    substrings: list[str] = Field(min_length=1)
    match_type: Literal["str", "word"] = "word"
    case_sensitive: bool = False
    contains_all: bool = False

    @field_validator("substrings")
    @classmethod
    def _non_empty(cls, substrings: list[str]) -> list[str]:
        if any(not s for s in substrings):
            raise ValueError("substrings must not contain empty strings")
        return substrings


@dataclass(frozen=True)
class BanSubstringsScanner:
    pattern: re.Pattern[str]
    # One pattern per substring, for contains_all: the longest-first alternation reports
    # "top secret" but not the "secret" inside it, so its matches cannot tell what occurs.
    each: tuple[re.Pattern[str], ...]
    contains_all: bool
    rewrite: bool

    def scan(self, text: str) -> ScanResult:
        matches = list(self.pattern.finditer(text))
        if not matches:
            return ScanResult.clean(text)
        if self.contains_all and not all(p.search(text) for p in self.each):
            return ScanResult.clean(text)
        if not self.rewrite:
            return ScanResult(text, False, 1.0)
        return ScanResult(
            replace_spans(text, [(*m.span(), REDACTION) for m in matches]), False, 1.0
        )


def _compile(alternatives: str, params: BanSubstringsParams) -> re.Pattern[str]:
    body = rf"(?<!\w)(?:{alternatives})(?!\w)" if params.match_type == "word" else alternatives
    return re.compile(body, 0 if params.case_sensitive else re.IGNORECASE)


def build(params: BanSubstringsParams, rewrite: bool) -> BanSubstringsScanner:
    # Longest first so "Do Not Distribute Externally" wins over "Do Not Distribute".
    ordered = sorted(set(params.substrings), key=len, reverse=True)
    return BanSubstringsScanner(
        pattern=_compile("|".join(re.escape(s) for s in ordered), params),
        each=tuple(_compile(re.escape(s), params) for s in ordered),
        contains_all=params.contains_all,
        rewrite=rewrite,
    )


SCANNER = ScannerType(
    name="ban_substrings",
    params=BanSubstringsParams,
    build=build,
    summary="exact substrings (match_type str) or whole words (match_type word)",
)
