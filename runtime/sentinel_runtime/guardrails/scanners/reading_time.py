"""``reading_time`` scanner: limit output by estimated reading time (docs/contracts.md).

Reading speed is 200 words per minute, as llm-guard assumes; ``max_time`` is in minutes.
With ``truncate: true`` a redact hit keeps the first words that fit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import Field

from sentinel_runtime.guardrails.scanners.base import ScannerParams, ScannerType, ScanResult

WORDS_PER_MINUTE = 200
_WORD = re.compile(r"\S+")


class ReadingTimeParams(ScannerParams):
    max_time: float = Field(gt=0, allow_inf_nan=False)
    truncate: bool = False

    def can_redact(self) -> bool:
        return self.truncate


@dataclass(frozen=True)
class ReadingTimeScanner:
    max_words: int
    max_time: float
    truncate: bool

    def scan(self, text: str) -> ScanResult:
        words = list(_WORD.finditer(text))
        if len(words) <= self.max_words:
            return ScanResult.clean(text)
        minutes = len(words) / WORDS_PER_MINUTE
        score = min(1.0, (minutes - self.max_time) / self.max_time)
        if not self.truncate or self.max_words == 0:
            # Nothing sensible to keep: the hit is left to the action (redact escalates).
            return ScanResult(text, False, score)
        # Cut after the last allowed word, keeping the original spacing before it.
        return ScanResult(text[: words[self.max_words - 1].end()], False, score)


def max_words(max_time: float) -> int:
    """The most words whose reading time ``words / 200`` does not exceed ``max_time``.

    ``int(max_time * 200)`` alone can be one off (``0.29 * 200`` is ``57.99999999999999``).
    """
    words = int(max_time * WORDS_PER_MINUTE)
    if words / WORDS_PER_MINUTE > max_time:
        return words - 1
    if (words + 1) / WORDS_PER_MINUTE <= max_time:
        return words + 1
    return words


def build(params: ReadingTimeParams, rewrite: bool) -> ReadingTimeScanner:
    return ReadingTimeScanner(
        max_words=max_words(params.max_time),
        max_time=params.max_time,
        truncate=params.truncate and rewrite,
    )


SCANNER = ScannerType(
    name="reading_time",
    params=ReadingTimeParams,
    build=build,
    summary="estimated reading time at 200 words per minute; optional truncation",
)
