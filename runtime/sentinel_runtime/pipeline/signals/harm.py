"""Harm assessment of a text: which risk category, how severe, and whether it is actionable.

One judge for both sides of retrieval: ``introspection`` asks it about the user's request,
the evidence scorer asks it about retrieved documents. It is lexical and model-free: it
weighs what ``harm_lexicon`` finds (a harmful topic named, a harmful goal with a victim or
target, the grammar of asking for a procedure or content, the contexts that defuse a word).
It returns reason codes, never text, so its result can be logged. It looks for each
pattern through ``harm_lexicon.Scan``, which finds where the lexicon's trigger words start
in one pass and tries patterns only there: the same answers as searching each pattern over
the whole text, ten times faster or more on ordinary documents (``bench/harm_speed.py``).

Severity is ``base(category) * factor``: naming a topic gives a factor of 0.55, naming a
wrongful act (fraud, harassment, sabotage) 0.75, a harmful goal 0.9; asking for (or
containing) the procedure or the content adds 0.2 (a question or a request for content)
or 0.4 (instructions, making, code, quantities, numbered steps); aggravating intent
(evasion, a real target) adds 0.1 each; a defusing context of the request (a definition,
history, a game or fiction setting, prevention, how something works) multiplies it down.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sentinel_runtime.pipeline.signals import harm_lexicon as lexicon

CATEGORIES: tuple[str, ...] = (
    "none",
    "weapons",
    "explosives",
    "chemical_biological",
    "cyber",
    "drugs",
    "violence",
    "self_harm",
    "sexual_minors",
    "sexual_content",
    "hate_harassment",
    "fraud_deception",
    "privacy",
    "extremism",
    "misinformation",
    "copyright",
    "other",
)


@dataclass(frozen=True)
class HarmAssessment:
    category: str  # one of CATEGORIES
    severity: float  # 0 (harmless) .. 1 (severe)
    procedural: bool  # asks for, or contains, actionable how-to content
    signals: tuple[str, ...] = ()  # reason codes such as "topic:explosives", "procedural:steps"


NONE = HarmAssessment(category="none", severity=0.0, procedural=False)

# Severity of each category at full strength, before the request grammar raises or lowers it.
BASE: dict[str, float] = {
    "weapons": 0.75,
    "explosives": 0.9,
    "chemical_biological": 0.95,
    "cyber": 0.75,
    "drugs": 0.75,
    "violence": 0.85,
    "self_harm": 0.85,
    "sexual_minors": 1.0,
    "sexual_content": 0.7,
    "hate_harassment": 0.75,
    "fraud_deception": 0.75,
    "privacy": 0.75,
    "extremism": 0.85,
    "misinformation": 0.75,
    "copyright": 0.75,
    "other": 0.7,
}
MENTION, ACT, GOAL = 0.55, 0.75, 0.9
STRONG_BONUS, WEAK_BONUS, AGGRAVATION = 0.4, 0.2, 0.1
# Long texts (a pasted document and a request) are judged for context on their last part.
REQUEST_SPAN_CHARS = 600
_SENTENCES = re.compile(r"(?<=[.?!])\s+|\n+")


def assess_harm(text: str) -> HarmAssessment:
    """Judge ``text`` (a request or a document) for harmful, actionable content."""
    if not text or not text.strip():
        return NONE
    return _judge(_Reading.of(text))


def assess_procedural_harm(text: str) -> HarmAssessment:
    """``assess_harm(text)`` when the text asks for or holds a procedure, else ``NONE``.

    What the evidence filter weighs: a harmful topic without a procedure costs a retrieved
    chunk nothing, and finding the topic (every rule of the lexicon) is most of the work,
    while finding a procedure is a few patterns. Most documents hold none."""
    if not text or not text.strip():
        return NONE
    reading = _Reading.of(text)
    return _judge(reading) if reading.procedural else NONE


def is_procedural(text: str) -> bool:
    """``assess_harm(text).procedural`` without judging the topic: whether the text asks
    for or holds a procedure (how-to, steps, quantities, ...)."""
    return bool(text and text.strip()) and _Reading.of(text).procedural


@dataclass(frozen=True)
class _Reading:
    """A text scanned for the lexicon's trigger words, figurative speech set aside, and
    the procedure it asks for or holds."""

    text: str
    scan: lexicon.Scan  # of the text
    found: lexicon.Scan  # of the literal text (idioms removed)
    kinds: frozenset[str]  # procedural kinds
    idiom: bool

    @classmethod
    def of(cls, text: str) -> _Reading:
        # One pass finds where the lexicon's trigger words start; patterns are tried only there.
        scan = lexicon.Scan(text)
        # Figurative speech and pests go first, so "kill time" never reaches the lexicon.
        literal = lexicon.IDIOMS.sub(" ", text) if scan.search(lexicon.IDIOMS) else text
        found = scan if literal == text else lexicon.Scan(literal)
        return cls(text, scan, found, frozenset(_procedural_kinds(found)), literal != text)

    @property
    def strong(self) -> bool:
        return bool(self.kinds & lexicon.STRONG_PROCEDURAL)

    @property
    def procedural(self) -> bool:
        return self.strong or "how_to" in self.kinds


def _judge(reading: _Reading) -> HarmAssessment:
    text, scan, found, kinds = reading.text, reading.scan, reading.found, reading.kinds
    signals: list[str] = ["context:idiom"] if reading.idiom else []
    strength = _strengths(found, signals)
    signals.extend(f"procedural:{kind}" for kind in sorted(kinds))
    strong, procedural = reading.strong, reading.procedural
    if not strength:
        return HarmAssessment("none", 0.0, procedural, tuple(signals))
    if not kinds:
        # Naming a wrongful act without asking for anything ("Who assassinated Lincoln?")
        # is talk about it, not a request to commit it.
        strength = {
            name: min(level, MENTION) if level == ACT else level for name, level in strength.items()
        }
    category = max(strength, key=lambda name: (strength[name] * BASE[name], BASE[name]))
    factor = strength[category]
    if strong:
        factor += STRONG_BONUS
    elif kinds & {"how_to", "write"}:
        factor += WEAK_BONUS
    for kind, pattern in lexicon.AGGRAVATORS:
        # A relative named next to a mere topic ("talk to my kids about drugs") is no target.
        if kind == "target" and strength[category] < ACT:
            continue
        # "At home" only aggravates making something, not storing or discussing it.
        if kind == "household" and not kinds & {"make", "instructions", "quantities"}:
            continue
        if found.search(pattern):
            signals.append(f"intent:{kind}")
            factor += AGGRAVATION
    span = REQUEST_SPAN_CHARS
    request = scan if len(text) <= span else lexicon.Scan(text[-span:])
    for defuser in _defusers(request, kinds, goal=strength[category] >= GOAL):
        signals.append(f"context:{defuser.kind}")
        factor *= defuser.weight
    severity = round(max(0.0, min(1.0, BASE[category] * factor)), 3)
    return HarmAssessment(category, severity, procedural, tuple(signals))


def _strengths(found: lexicon.Scan, signals: list[str]) -> dict[str, float]:
    """The strongest evidence per category: a topic, a wrongful act, or a goal."""
    strength: dict[str, float] = {}
    for rules, level, prefix in (
        (lexicon.MENTIONS, MENTION, "topic"),
        (lexicon.ACTS, ACT, "act"),
        (lexicon.GOALS, GOAL, "goal"),
    ):
        for rule in rules:
            if found.search(rule.pattern):
                strength[rule.category] = max(strength.get(rule.category, 0.0), level)
                signals.append(f"{prefix}:{rule.code}")
    # Most texts hold the words of neither half of a pair: then no sentence needs a look.
    pairs = [
        pair
        for pair in lexicon.PAIRS
        if found.may_match(pair.first) and found.may_match(pair.second)
    ]
    sentences = _SENTENCES.split(found.text) if pairs else []
    for pair in pairs:
        if any(_in_order(pair, sentence) for sentence in sentences):
            strength[pair.category] = GOAL
            signals.append(f"goal:{pair.code}")
    return strength


def _procedural_kinds(found: lexicon.Scan) -> set[str]:
    kinds = {kind for kind, pattern in lexicon.PROCEDURAL if found.search(pattern)}
    # A step starts the text or a line: without a line break there is one at most.
    if "\n" in found.text and len(lexicon.STEPS.findall(found.text)) >= 2:
        kinds.add("steps")
    return kinds


def _defusers(request: lexicon.Scan, kinds: set[str], *, goal: bool) -> list[lexicon.Defuser]:
    found = []
    for defuser in lexicon.DEFUSERS:
        if goal and not defuser.defuses_goals:
            continue
        # Protective or explanatory framing does not excuse a request for the procedure.
        if defuser.kind in lexicon.PROTECTIVE_DEFUSERS and kinds & lexicon.STRONG_PROCEDURAL:
            continue
        # Nor does a game or a story excuse real detail, or a question "in real life".
        if defuser.kind in lexicon.SETTING_DEFUSERS and (
            kinds & lexicon.DETAIL_PROCEDURAL or request.search(lexicon.REAL_WORLD)
        ):
            continue
        if request.search(defuser.pattern):
            found.append(defuser)
    return found


def _in_order(pair: lexicon.Pair, sentence: str) -> bool:
    """Both patterns in one statement; for ordered pairs the first (who) comes before the
    second (what is claimed about them)."""
    if lexicon.YES_NO.match(sentence):
        return False
    if not pair.ordered:
        return bool(pair.first.search(sentence) and pair.second.search(sentence))
    return any(pair.second.search(sentence, m.end()) for m in pair.first.finditer(sentence))
