"""``invisible_text`` scanner: invisible or non-printable Unicode (docs/contracts.md).

Removes format (Cf), private-use (Co) and unassigned (Cn) code points, and control
characters other than tab, newline and carriage return. This covers zero-width spaces,
bidi overrides and the tag block used to smuggle hidden ASCII instructions.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex
from pydantic import ConfigDict

from sentinel_runtime.guardrails.scanners.base import ScannerParams, ScannerType, ScanResult

# One character class, matched in C; the Cc range leaves out \t, \n and \r.
INVISIBLE = regex.compile(r"[\p{Cf}\p{Co}\p{Cn}\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


class InvisibleTextParams(ScannerParams):
    """No fields. Unlike the other types, whose unknown keys are reported and ignored, an
    entry with any field of its own is an invalid config and skips the scanner, as the
    contract's parser treats it (docs/contracts.md; ``failMode`` and ``action`` are entry
    keys, not fields)."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class InvisibleTextScanner:
    rewrite: bool

    def hold(self, text: str) -> int:
        """Each character is judged alone: nothing waits for more text."""
        return len(text)

    def scan(self, text: str) -> ScanResult:
        if INVISIBLE.search(text) is None:
            return ScanResult.clean(text)
        return ScanResult(INVISIBLE.sub("", text) if self.rewrite else text, False, 1.0)


def build(params: InvisibleTextParams, rewrite: bool) -> InvisibleTextScanner:
    return InvisibleTextScanner(rewrite=rewrite)


SCANNER = ScannerType(
    name="invisible_text",
    params=InvisibleTextParams,
    build=build,
    summary="zero-width, bidi, tag and other invisible or control characters",
)
