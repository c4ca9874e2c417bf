"""Provider tokens from the format table in ``data/provider_tokens.yaml``.

An Aho-Corasick automaton over every rule's literal prefixes finds the places a token can
start in one pass; each rule's regex is then tried only there (and a ``before`` part read
behind the prefix), so the cost is linear in the text whatever the number of rules.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any

import ahocorasick
import regex
import yaml

from sentinel_runtime.guardrails.detectors.base import Detection, trailing_run_start

TABLE = "provider_tokens.yaml"
CHARSETS = {
    "alnum": "[A-Za-z0-9]",
    "alnum_": "[A-Za-z0-9_]",
    "base64url": "[A-Za-z0-9_\\-]",
    "base64": "[A-Za-z0-9+/]",
    "hex": "[0-9a-f]",
    "HEX": "[0-9A-Fa-f]",
    "upper_alnum": "[A-Z0-9]",
    "lower_alnum": "[a-z0-9]",
    "letters": "[A-Za-z]",
    "dotted": "[A-Za-z0-9_.\\-]",
}
# Base64 bodies may end in padding.
_PADDED = {"base64": "={0,2}"}
# A prefix that begins with a letter or digit must not continue a word ("risk-..." is not
# an "sk-" key); prefixes starting with punctuation are their own boundary.
_WORD_BOUNDARY = "(?<![A-Za-z0-9])"
# The longest a token the table describes can be; matches are cut here (and the hold below
# relies on it: no token spans whitespace, none is longer).
MAX_TOKEN = 8192


@dataclass(frozen=True)
class TokenRule:
    id: str
    provider: str
    category: str
    prefixes: tuple[str, ...]
    pattern: regex.Pattern[str]
    has_before: bool

    def match_at(self, text: str, start: int) -> tuple[int, int] | None:
        m = self.pattern.match(text, start, min(len(text), start + MAX_TOKEN))
        if m is None:
            return None
        begin = m.start("pre") if self.has_before and m.start("pre") >= 0 else start
        return begin, m.end()


def _length(value: Any) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    low, high = value
    return int(low), int(high)


def compile_rule(entry: dict[str, Any]) -> TokenRule:
    """One table entry as a rule; a malformed entry is a ValueError naming it."""
    rule_id = entry.get("id", "?")
    try:
        prefixes = tuple(str(p) for p in entry["prefixes"])
        if "body" in entry:
            body = f"(?:{entry['body']})"
        else:
            charset = CHARSETS[entry["charset"]]
            low, _high = _length(entry["length"])
            # Past the documented maximum, the same characters still belong to the token:
            # a longer run is redacted whole rather than cut (the maximum documents the
            # format; tests/guardrails/detectors check the table's entries against it).
            body = f"{charset}{{{low},}}{_PADDED.get(entry['charset'], '')}"
        alternatives = "|".join(regex.escape(p) for p in sorted(prefixes, key=len, reverse=True))
        before = entry.get("before")
        if before:
            lead = f"(?<=(?P<pre>{before}))"
        else:
            lead = _WORD_BOUNDARY if prefixes[0][:1].isalnum() else ""
        pattern = regex.compile(f"{lead}(?:{alternatives}){body}", regex.VERSION0)
    except (KeyError, TypeError, ValueError, regex.error) as exc:
        raise ValueError(f"token rule {rule_id!r} is malformed: {exc}") from exc
    return TokenRule(
        id=str(rule_id),
        provider=str(entry.get("provider", "")),
        category=str(entry.get("category", "")),
        prefixes=prefixes,
        pattern=pattern,
        has_before=bool(before),
    )


@functools.cache
def table() -> tuple[dict[str, Any], ...]:
    """The table's raw entries, as shipped with the package."""
    text = resources.files(__package__).joinpath("data", TABLE).read_text(encoding="utf-8")
    return tuple(yaml.safe_load(text)["tokens"])


class TokenDetector:
    """Every rule of the table behind one prefix automaton."""

    family = "tokens"

    def __init__(self, entries: tuple[dict[str, Any], ...] | None = None) -> None:
        self.rules = tuple(compile_rule(e) for e in (entries if entries is not None else table()))
        ids = [r.id for r in self.rules]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate token rule ids in {TABLE}")
        by_prefix: dict[str, list[int]] = {}
        for index, rule in enumerate(self.rules):
            for prefix in rule.prefixes:
                by_prefix.setdefault(prefix, []).append(index)
        self.automaton = ahocorasick.Automaton()
        for prefix, indexes in by_prefix.items():
            self.automaton.add_word(prefix, (len(prefix), tuple(indexes)))
        self.automaton.make_automaton()

    def names(self) -> tuple[str, ...]:
        return tuple(f"{self.family}/{rule.id}" for rule in self.rules)

    def find(self, text: str) -> Iterator[Detection]:
        for last, (length, indexes) in self.automaton.iter(text):
            start = last - length + 1
            for index in indexes:
                rule = self.rules[index]
                span = rule.match_at(text, start)
                if span is not None:
                    yield Detection(f"{self.family}/{rule.id}", *span)

    def hold(self, text: str) -> int:
        """Tokens hold no whitespace (nor do their ``before`` parts): only the text's last
        run of non-whitespace can still become or grow a token."""
        return trailing_run_start(text, MAX_TOKEN)
