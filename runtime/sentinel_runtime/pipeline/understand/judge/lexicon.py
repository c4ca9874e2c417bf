"""The few terms kept as lists (``data/``), matched in one pass each.

What a learned model gives is not repeated here, only what it cannot be trusted with:
``unambiguous.tsv`` names terms whose presence puts a request at least in the restricted
band (``presence``), and terms that a request to make, get or use (a verb of
``acquisition_verbs.txt`` shortly before the term, with no word between them that turns
the request around, such as "against" or "rid") makes harmful (``request``). Each list
is one compiled alternation of the ``regex`` module, built once per process, on word
boundaries, case-insensitively.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import regex

# Up to this many words between the verb and the term ("build a small pipe bomb").
GAP_WORDS = 3
# Words that, between a verb and a term, say the term is not what is being made or got.
_TURNING = (
    "against|from|about|rid|of|without|prevent|preventing|detect|detecting|remove|removing|"
    "stop|stopping|protect|protecting|recognise|recognize|report|treat|treating|for"
)


@dataclass(frozen=True)
class Term:
    code: str
    category: str
    floor: str  # "presence" | "request"
    phrase: str


def _data(name: str) -> str:
    return (
        resources.files("sentinel_runtime.pipeline.understand.judge")
        .joinpath("data", name)
        .read_text("utf-8")
    )


def data_lines(name: str) -> list[str]:
    """The non-comment, non-blank lines of a data file of this package, folded to lower case."""
    return [line.strip().casefold() for line in _lines(name)]


def _lines(name: str) -> list[str]:
    return [line for line in _data(name).splitlines() if line.strip() and not line.startswith("#")]


@cache
def terms() -> tuple[Term, ...]:
    found = []
    for line in _lines("unambiguous.tsv"):
        code, category, floor, phrase = line.split("\t")
        if floor not in {"presence", "request"}:
            raise ValueError(f"unambiguous.tsv: floor must be presence or request: {line!r}")
        found.append(Term(code, category, floor, phrase.strip().casefold()))
    return tuple(found)


def alternation(phrases: list[str]) -> str:
    """One regex alternation of ``phrases``, longest first, any run of spaces inside."""
    ordered = sorted(set(phrases), key=len, reverse=True)
    return "|".join(regex.escape(phrase).replace(r"\ ", r"\s+") for phrase in ordered)


@cache
def _matchers() -> tuple[regex.Pattern[str], regex.Pattern[str], dict[str, Term]]:
    by_phrase = {term.phrase: term for term in terms()}
    presence = alternation([t.phrase for t in terms() if t.floor == "presence"])
    verbs = alternation(data_lines("acquisition_verbs.txt"))
    gap = rf"(?:\s+(?!(?:{_TURNING})\b)[\w'-]+){{0,{GAP_WORDS}}}"
    request = regex.compile(
        rf"\b(?:{verbs})\b{gap}\s+(?P<term>{alternation(list(by_phrase))})\b", regex.IGNORECASE
    )
    return regex.compile(rf"\b(?:{presence})\b", regex.IGNORECASE), request, by_phrase


def _term(text: str, by_phrase: dict[str, Term]) -> Term | None:
    return by_phrase.get(" ".join(text.casefold().split()))


def find(text: str) -> tuple[Term, ...]:
    """The ``presence`` terms ``text`` names, each code once, in order of appearance."""
    pattern, _, by_phrase = _matchers()
    found: dict[str, Term] = {}
    for match in pattern.finditer(text):
        term = _term(match.group(0), by_phrase)
        if term is not None:
            found.setdefault(term.code, term)
    return tuple(found.values())


def requested(text: str) -> tuple[Term, ...]:
    """The terms ``text`` asks to make, get or use ("how do I cook meth?")."""
    _, pattern, by_phrase = _matchers()
    found: dict[str, Term] = {}
    for match in pattern.finditer(text, overlapped=True):
        term = _term(match.group("term"), by_phrase)
        if term is not None:
            found.setdefault(term.code, term)
    return tuple(found.values())
