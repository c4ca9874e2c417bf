"""``ban_substrings`` scanner: exact substrings, as plain text or whole words (docs/contracts.md).

``match_type: word`` has the contract's meaning, which is llm-guard's (KAITO builds llm-guard's
BanSubstrings): a substring matches where ``\\b`` + the escaped substring + ``\\b`` does. A
``\\b`` is a change between a word character and a non-word one (or the text's edge), so the
boundary a substring needs depends on its own first and last characters: "secret" must not
touch a word character on either side, while "unsafe-" must be followed by one ("unsafe-x"
matches, "unsafe- x" does not) and "." must sit between two ("a.b"). Case-insensitive
matching is ``re.IGNORECASE``, llm-guard's lower-casing of both sides in effect. Redaction
replaces the matches found, and only them: llm-guard also replaces the substring where it
occurs without its boundaries ("secrets" beside a banned word "secret"), which a stream
could not take back once sent, so Sentinel leaves such words alone.

All substrings compile into one alternation, so a text is walked once however long the
list is. For streaming, an Aho-Corasick trie of the substrings (``pyahocorasick``) tells how
much of a text's end could still begin one (:meth:`BanSubstringsScanner.hold`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import ahocorasick
from pydantic import Field, field_validator

from sentinel_runtime.guardrails.scanners.base import (
    REDACTION,
    ScannerParams,
    ScannerType,
    ScanResult,
    replace_spans,
)

# Characters below this are searched for case variants (test_ban_substrings checks the bound).
CASED_LIMIT = 0x20000


class BanSubstringsParams(ScannerParams):
    item_lists: ClassVar[tuple[str, ...]] = ("substrings",)

    substrings: list[str] = Field(min_length=1)
    match_type: Literal["str", "word"] = "word"
    case_sensitive: bool = False
    contains_all: bool = False

    @field_validator("match_type", mode="before")
    @classmethod
    def _any_case(cls, value: Any) -> Any:
        # The contract's parser lower-cases match_type: "WORD" is "word".
        return value.lower() if isinstance(value, str) else value

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
    # The substrings as the matcher compares them (``fold``), for :meth:`hold`.
    prefixes: ahocorasick.Automaton
    fold: dict[int, str]
    longest: int

    @property
    def whole_text_reason(self) -> str | None:
        if self.contains_all:
            return "contains_all needs every substring, which only the whole answer shows"
        return None

    def hold(self, text: str) -> int:
        """The start of the longest end of ``text`` that begins a banned substring: only it
        can still become a match (a whole substring at the end waits for the character
        that tells whether its closing ``\\b`` holds). A match that starts later needs no
        hold: its opening ``\\b`` reads a character already final."""
        tail = text[-self.longest :].translate(self.fold)
        for start in range(len(tail)):
            # A trie key (or a prefix of one) equal to this end of the text.
            if self.prefixes.match(tail[start:]):
                return len(text) - len(tail) + start
        return len(text)

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


def _alternative(substring: str, match_type: str) -> str:
    escaped = re.escape(substring)
    # Each substring gets its own \b pair, as a search per substring would: "C++" then needs
    # a word character after it, "secret" a non-word one.
    return rf"\b{escaped}\b" if match_type == "word" else escaped


def _compile(substrings: list[str], params: BanSubstringsParams) -> re.Pattern[str]:
    body = "|".join(_alternative(s, params.match_type) for s in substrings)
    return re.compile(body, 0 if params.case_sensitive else re.IGNORECASE)


@functools.cache
def _every_character() -> str:
    # Every cased character lies below U+20000 (the last, Adlam, ends at U+1E95F).
    return "".join(chr(c) for c in range(CASED_LIMIT) if not 0xD800 <= c < 0xE000)


def case_fold(substrings: list[str]) -> dict[int, str]:
    """A translation table that maps every character ``re.IGNORECASE`` takes for a character
    of ``substrings`` to that character; other characters cannot be part of a match.

    Taken from ``re`` itself rather than ``str.casefold``: ``re`` matches "i" to U+0131 (the
    dotless i) and U+0130, which casefold keeps apart, and never folds one character to two.
    """
    chars = sorted(set("".join(substrings)))
    table: dict[int, str] = {}
    any_of = re.compile("[" + "".join(re.escape(c) for c in chars) + "]", re.IGNORECASE)
    for m in any_of.finditer(_every_character()):
        found = m.group()
        table[ord(found)] = next(
            c for c in chars if re.fullmatch(re.escape(c), found, re.IGNORECASE)
        )
    return table


def _trie(substrings: list[str], fold: dict[int, str]) -> ahocorasick.Automaton:
    trie = ahocorasick.Automaton()
    for substring in substrings:
        trie.add_word(substring.translate(fold), len(substring))
    return trie


def build(params: BanSubstringsParams, rewrite: bool) -> BanSubstringsScanner:
    # Longest first so "Do Not Distribute Externally" wins over "Do Not Distribute".
    ordered = sorted(set(params.substrings), key=len, reverse=True)
    fold = {} if params.case_sensitive else case_fold(ordered)
    return BanSubstringsScanner(
        pattern=_compile(ordered, params),
        each=tuple(_compile([s], params) for s in ordered),
        contains_all=params.contains_all,
        rewrite=rewrite,
        prefixes=_trie(ordered, fold),
        fold=fold,
        longest=len(ordered[0]),
    )


SCANNER = ScannerType(
    name="ban_substrings",
    params=BanSubstringsParams,
    build=build,
    summary="exact substrings (match_type str) or between \\b boundaries (match_type word)",
)
