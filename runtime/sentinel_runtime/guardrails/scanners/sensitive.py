"""``sensitive`` scanner: email, phone, credit card and IP address patterns (docs/contracts.md).

Matches are replaced with ``<EMAIL>``, ``<PHONE>``, ``<CREDIT_CARD>`` and ``<IP_ADDRESS>``
as KAITO does. Card numbers must pass the Luhn check; phone numbers need 10 to 15 digits
with a separator or a leading ``+``, and ISO dates, times and ISBN-13s are left alone.

``ip_address`` finds IPv4 and IPv6 (full, compressed with ``::``, IPv4-mapped like
``::ffff:192.0.2.1``), each candidate validated by the standard library's ``ipaddress``, so
times ("10:30:00"), versions and ratios are not addresses. Also left alone, by choice:
colon-separated bytes (MAC addresses never parse; an EUI-64 written as eight two-digit
groups would, and is a hardware address, not an IP), and IPv6 written without a single
digit ("::" alone, ``ab::cd`` or ``dead::beef``), which in answers is code far more often
than an address. A zone (``%eth0``) stays after the placeholder.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

import regex
from pydantic import Field, field_validator

from sentinel_runtime.guardrails.scanners.base import (
    ScannerParams,
    ScannerType,
    ScanResult,
    hold_from,
    hold_pattern,
    replace_spans,
)

Detector = Literal["email", "phone", "credit_card", "ip_address"]
ALL_DETECTORS: tuple[Detector, ...] = ("email", "phone", "credit_card", "ip_address")

_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b"
)
# Each pattern starts by consuming a character and only then looks behind it: a leading
# lookbehind would make the engine try every position instead of skipping to candidates.
_PHONE = re.compile(r"[+(\d](?<![\w+(][+(\d])(?:(?<=[+(])\(?\d|(?<=\d))[\d().\- ]{8,}\d(?!\w)")
# Not phone numbers although they are digit runs with separators.
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME_AFTER = re.compile(r":\d")
_CARD = re.compile(r"\d(?<![\d-]\d)(?:[ -]?\d){12,18}(?![\d-])")
_IPV4 = re.compile(r"\d(?<![\d.]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3}(?!\.?\d)")
# A whole run of hex digits, colons and dots (an IPv4-mapped address ends in dots) that no
# word, colon or dot touches. Possessive, so a long run costs one pass, never a backtrack;
# which part of it is an address is decided in code (``_ipv6s``).
_IPV6 = re.compile(r"[0-9A-Fa-f:](?<![\w:.][0-9A-Fa-f:])[0-9A-Fa-f:.]*+(?!\w)")
_NON_DIGIT = re.compile(r"\D")
_DIGIT = re.compile(r"[0-9]")
# Every card, phone number and IPv4 match holds a ``\d`` and every IPv6 address a [0-9]:
# a text without one (most short answers) is searched for none of them, after one search.
_ANY_DIGIT = re.compile(r"\d")
_NEED_A_DIGIT = frozenset({"credit_card", "ip_address", "phone"})


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _emails(text: str) -> Iterator[tuple[int, int]]:
    if "@" in text:
        yield from (m.span() for m in _EMAIL.finditer(text))


def _isbn13(digits: str) -> bool:
    if len(digits) != 13 or not digits.startswith(("978", "979")):
        return False
    total = sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(digits))
    return total % 10 == 0


def _phones(text: str) -> Iterator[tuple[int, int]]:
    for m in _PHONE.finditer(text):
        candidate = m.group(0)
        digits = _NON_DIGIT.sub("", candidate)
        if not 10 <= len(digits) <= 15 or digits == candidate:
            continue
        if _ISO_DATE.search(candidate) or _TIME_AFTER.match(text, m.end()):
            continue  # "2024-01-15 10:30" is a timestamp
        if candidate[0] not in "+(" and _isbn13(digits):
            continue  # "978-3-16-148410-0" is a book
        yield m.span()


def _cards(text: str) -> Iterator[tuple[int, int]]:
    for m in _CARD.finditer(text):
        digits = _NON_DIGIT.sub("", m.group(0))
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            yield m.span()


def _ipv4s(text: str) -> Iterator[tuple[int, int]]:
    if "." not in text:
        return
    for m in _IPV4.finditer(text):
        try:
            ipaddress.IPv4Address(m.group(0))
        except ValueError:
            continue
        yield m.span()


def _ipv6(candidate: str) -> bool:
    try:
        ipaddress.IPv6Address(candidate)
    except ValueError:
        return False
    groups = candidate.split(":")
    eui64 = len(groups) == 8 and all(len(group) == 2 for group in groups)
    return not eui64 and _DIGIT.search(candidate) is not None


def _ipv6s(text: str) -> Iterator[tuple[int, int]]:
    if text.count(":") < 2:
        return
    for m in _IPV6.finditer(text):
        # Dots after it end a sentence; a lone colon after it introduces ("fe80::1: ...").
        candidate = m.group(0).rstrip(".")
        if candidate.count(":") < 2:
            continue
        if not _ipv6(candidate) and candidate[-1] == ":" and candidate[-2] != ":":
            candidate = candidate[:-1]
            if not _ipv6(candidate):
                continue
        elif not _ipv6(candidate):
            continue
        yield m.start(), m.start() + len(candidate)


def _ips(text: str) -> Iterator[tuple[int, int]]:
    yield from _ipv4s(text)
    yield from _ipv6s(text)


# Order matters on overlap at the same start and length: the earlier detector names it.
_FINDERS: dict[str, Callable[[str], Iterator[tuple[int, int]]]] = {
    "credit_card": _cards,
    "ip_address": _ips,
    "email": _emails,
    "phone": _phones,
}

# For streaming: each detector's pattern anchored at the end (scanners.base.hold_pattern).
# A phone number followed by ":" waits for the digit that makes it a time.
_OPEN_ENDS: dict[str, regex.Pattern[str]] = {
    "credit_card": hold_pattern(_CARD.pattern),
    "ip_address": hold_pattern(f"{_IPV4.pattern}|{_IPV6.pattern}"),
    "email": hold_pattern(_EMAIL.pattern),
    "phone": hold_pattern(_PHONE.pattern, tail=r"(?::\d)?"),
}
# Budget of one hold search, as the regex scanner's per pattern.
HOLD_TIMEOUT_SECONDS = 0.25


class SensitiveParams(ScannerParams):
    detectors: list[Detector] = Field(default=list(ALL_DETECTORS), min_length=1)

    @field_validator("detectors", mode="before")
    @classmethod
    def _lowercase(cls, value: object) -> object:
        if isinstance(value, list):
            return [v.lower() if isinstance(v, str) else v for v in value]
        return value


@dataclass(frozen=True)
class SensitiveScanner:
    detectors: tuple[str, ...]
    rewrite: bool

    def find(self, text: str) -> list[tuple[int, int, str]]:
        digits = _ANY_DIGIT.search(text) is not None
        return [
            (start, end, f"<{name.upper()}>")
            for name in self.detectors
            if digits or name not in _NEED_A_DIGIT
            for start, end in _FINDERS[name](text)
        ]

    def hold(self, text: str) -> int:
        """Where a detector's match may still be growing, or may still start."""
        return hold_from((_OPEN_ENDS[name] for name in self.detectors), text, HOLD_TIMEOUT_SECONDS)

    def scan(self, text: str) -> ScanResult:
        spans = self.find(text)
        if not spans:
            return ScanResult.clean(text)
        return ScanResult(replace_spans(text, spans) if self.rewrite else text, False, 1.0)


def build(params: SensitiveParams, rewrite: bool) -> SensitiveScanner:
    chosen = set(params.detectors)
    return SensitiveScanner(
        detectors=tuple(name for name in _FINDERS if name in chosen), rewrite=rewrite
    )


SCANNER = ScannerType(
    name="sensitive",
    params=SensitiveParams,
    build=build,
    summary="email, phone, Luhn-checked credit card and IPv4/IPv6 address patterns",
)
