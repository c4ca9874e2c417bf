"""The lexicon and request grammar behind ``harm.assess_harm`` (no scoring): patterns built
from the data files ``data/harm_*.yaml``, and ``Scan``, which looks for them in a text.

The data is general English, not data set strings: figurative uses and safe targets removed
first (``IDIOMS``: "kill time", "poison the weeds"), harmful topics (``MENTIONS``), wrongful
acts (``ACTS``: fraud, harassment, sabotage), harmful goals, which mostly need a victim or a
target in the same clause (``GOALS``, ``PAIRS``), the grammar of asking for a procedure or
for content (``PROCEDURAL``), aggravating intent (``AGGRAVATORS``) and the contexts of a
request that defuse a harmful word (``DEFUSERS``). ``harm_words.yaml`` holds the pieces the
others name as ``{NAME}`` (who can be harmed, verb lists); ``harm_topics.yaml`` idioms,
topics and acts; ``harm_goals.yaml`` goals and pairs; ``harm_requests.yaml`` the request
grammar. Each file is read once, when this module is imported. ``harm`` weighs what is
found; nothing here decides. Verb lists are compiled as tries (``harm_regex.trie``), and
``Scan`` tries each pattern only where one of its trigger words starts (``harm_scan``),
which keeps documents fast.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

from sentinel_runtime.pipeline.signals import harm_regex, harm_scan

# A piece of ``harm_words.yaml`` named in a pattern: "{TARGET}" (never "{0,2}", a repeat).
_NAME = re.compile(r"\{([A-Z][A-Z_]*)\}")
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def data(name: str) -> dict[str, Any]:
    """``data/harm_<name>.yaml`` of this package, read once."""
    path = resources.files("sentinel_runtime.pipeline.signals") / "data" / f"harm_{name}.yaml"
    # libyaml's safe loader when PyYAML has it: ~15 times faster than the pure-Python one.
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER)


def rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{part})" for part in parts), re.IGNORECASE)


def words(*alternatives: str) -> str:
    return r"\b(?:" + "|".join(alternatives) + r")\b"


def verbs(phrases: str) -> str:
    """Present forms of each comma-separated verb phrase (base, -s, -ing) as one trie-shaped
    pattern; a participle such as "injured people" describes victims rather than asking to
    harm them, so -ed forms are left out."""
    forms: set[str] = set()
    for stem in (phrase.strip() for phrase in phrases.split(",")):
        head, _, tail = stem.partition(" ")
        rest = f" {tail}" if tail else ""
        if head.endswith("e"):
            heads = {head, f"{head}s", f"{head[:-1]}ing"}
        elif head.endswith("y") and head[-2] not in "aeiou":
            heads = {head, f"{head[:-1]}ies", f"{head}ing"}
        else:
            heads = {head, f"{head}s", f"{head}es", f"{head}ing", f"{head}{head[-1]}ing"}
        forms.update(f"{form}{rest}" for form in heads)
    return harm_regex.trie(forms)


@functools.cache
def pieces() -> dict[str, str]:
    """The named pieces of ``harm_words.yaml``: verb lists as tries, then the fragments in
    file order (each may name the verb lists and the fragments before it)."""
    found = {name: verbs(phrases) for name, phrases in data("words")["verbs"].items()}
    for name, source in data("words")["fragments"].items():
        found[name] = _source(source, found)
    return found


def _source(text: str, named: dict[str, str] | None = None) -> str:
    """A pattern as the data files write it: its lines joined, each ``{NAME}`` filled in."""
    named = pieces() if named is None else named
    return _NAME.sub(lambda name: named[name[1]], "".join(text.splitlines()))


def _pattern(parts: list[str | dict[str, str]]) -> re.Pattern[str]:
    """One case-insensitive pattern of ``parts``: patterns, or ``{words: a|b}`` for a list
    of whole words."""
    return rx(*(words(_source(p["words"])) if isinstance(p, dict) else _source(p) for p in parts))


@dataclass(frozen=True)
class Rule:
    category: str
    code: str
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Pair:
    """Harm when both patterns occur in one sentence (a group and a discriminatory claim);
    ``ordered``: the first must come before the second."""

    category: str
    code: str
    first: re.Pattern[str]
    second: re.Pattern[str]
    ordered: bool = True


@dataclass(frozen=True)
class Defuser:
    """A context of the request that multiplies severity by ``weight``. Only those that
    change what is being asked (a definition, history, a game) also defuse a goal with a
    victim; a protective word next to "hack into her account" does not."""

    kind: str
    weight: float
    defuses_goals: bool
    pattern: re.Pattern[str]


def _rules(entries: list[dict[str, Any]]) -> tuple[Rule, ...]:
    return tuple(
        Rule(rule["category"], rule["code"], _pattern(rule["patterns"])) for rule in entries
    )


def _kinds(entries: list[dict[str, Any]]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((entry["kind"], _pattern(entry["patterns"])) for entry in entries)


_TOPICS, _GOALS, _REQUESTS = data("topics"), data("goals"), data("requests")
IDIOMS = _pattern(_TOPICS["idioms"])
MENTIONS = _rules(_TOPICS["mentions"])
ACTS = _rules(_TOPICS["acts"])
GOALS = _rules(_GOALS["goals"])
PAIRS = tuple(
    Pair(
        pair["category"],
        pair["code"],
        _pattern(pair["first"]),
        _pattern(pair["second"]),
        pair["ordered"],
    )
    for pair in _GOALS["pairs"]
)
# A yes/no question ("Was the bombing justified?") asks for a debate, not for praise.
YES_NO = re.compile(_source(_GOALS["yes_no"]), re.IGNORECASE)
PROCEDURAL = _kinds(_REQUESTS["procedural"])
STRONG_PROCEDURAL = frozenset(_REQUESTS["strong_procedural"])
DETAIL_PROCEDURAL = frozenset(_REQUESTS["detail_procedural"])  # not excused by a game or story
STEPS = re.compile(_source(_REQUESTS["steps"]), re.IGNORECASE)
DEFUSERS = tuple(
    Defuser(entry["kind"], entry["weight"], entry["defuses_goals"], _pattern(entry["patterns"]))
    for entry in _REQUESTS["defusers"]
)
REAL_WORLD = _pattern(_REQUESTS["real_world"])  # takes a question out of the game it names
PROTECTIVE_DEFUSERS = frozenset(_REQUESTS["protective_defusers"])
SETTING_DEFUSERS = frozenset(_REQUESTS["setting_defusers"])
AGGRAVATORS = _kinds(_REQUESTS["aggravators"])

# --- where the patterns can match -------------------------------------------------------


class Scan(harm_scan.Scan):
    """One text and where the lexicon's trigger words start in it: ``search(pattern)``
    answers as ``pattern.search(text) is not None`` would, for the patterns of
    ``searched()`` only where their trigger words start (``harm_scan``)."""

    def __init__(self, text: str) -> None:
        super().__init__(_index(), text)


def searched() -> list[re.Pattern[str]]:
    """Every pattern ``harm`` looks for through ``Scan`` (``STEPS`` and ``YES_NO`` are
    matched directly)."""
    return [
        IDIOMS,
        REAL_WORLD,
        *(rule.pattern for rule in (*MENTIONS, *ACTS, *GOALS)),
        *(pattern for pair in PAIRS for pattern in (pair.first, pair.second)),
        *(pattern for _, pattern in (*PROCEDURAL, *AGGRAVATORS)),
        *(defuser.pattern for defuser in DEFUSERS),
    ]


@functools.cache
def _index() -> harm_scan.Index:
    """Built on first use rather than at import: reading ~2,000 alternatives takes ~0.5 s,
    and most importers of the pipeline (the CLI) never judge a text."""
    return harm_scan.Index(searched())
