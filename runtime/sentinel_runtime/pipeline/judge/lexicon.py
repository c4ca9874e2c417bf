"""The few terms kept as a list (``data/unambiguous.tsv``), matched in one pass.

What a learned model gives is not repeated here: only terms whose presence alone must
raise a request into the restricted band. One compiled alternation of the ``regex``
module, built once per process, on word boundaries, case-insensitively.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import regex


@dataclass(frozen=True)
class Term:
    code: str
    category: str
    phrase: str


@cache
def terms() -> tuple[Term, ...]:
    text = (
        resources.files("sentinel_runtime.pipeline.judge")
        .joinpath("data", "unambiguous.tsv")
        .read_text(encoding="utf-8")
    )
    found = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        code, category, phrase = line.split("\t")
        found.append(Term(code, category, phrase.strip().casefold()))
    return tuple(found)


@cache
def _matcher() -> tuple[regex.Pattern[str], dict[str, Term]]:
    by_phrase = {term.phrase: term for term in terms()}
    ordered = sorted(by_phrase, key=len, reverse=True)
    words = "|".join(regex.escape(phrase).replace(r"\ ", r"\s+") for phrase in ordered)
    return regex.compile(rf"\b(?:{words})\b", regex.IGNORECASE), by_phrase


def find(text: str) -> tuple[Term, ...]:
    """The listed terms ``text`` contains, each once, in order of appearance."""
    pattern, by_phrase = _matcher()
    found: dict[str, Term] = {}
    for match in pattern.finditer(text):
        key = " ".join(match.group(0).casefold().split())
        term = by_phrase.get(key)
        if term is not None:
            found.setdefault(term.code, term)
    return tuple(found.values())
