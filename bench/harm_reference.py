"""Bench-only baseline: ``harm.assess_harm`` as it was at commit 17cec56, before the
trigger-word index. Same lexicon, same scoring; every pattern is searched over the whole
text (``pattern.search(text)``), which is what cost ~5 ms per 1,000 characters. Kept
here, not in the runtime, so ``harm_speed`` can measure both in one run and check that
they agree.
"""

from __future__ import annotations

from sentinel_runtime.pipeline.signals import harm
from sentinel_runtime.pipeline.signals import harm_lexicon as lexicon
from sentinel_runtime.pipeline.signals.harm import ACT, BASE, GOAL, MENTION, HarmAssessment


def assess_harm(text: str) -> HarmAssessment:
    if not text or not text.strip():
        return harm.NONE
    literal = lexicon.IDIOMS.sub(" ", text)
    signals: list[str] = ["context:idiom"] if literal != text else []
    strength = _strengths(literal, signals)
    kinds = _procedural_kinds(literal)
    signals.extend(f"procedural:{kind}" for kind in sorted(kinds))
    strong = bool(kinds & lexicon.STRONG_PROCEDURAL)
    procedural = strong or "how_to" in kinds
    if not strength:
        return HarmAssessment("none", 0.0, procedural, tuple(signals))
    if not kinds:
        strength = {
            name: min(level, MENTION) if level == ACT else level for name, level in strength.items()
        }
    category = max(strength, key=lambda name: (strength[name] * BASE[name], BASE[name]))
    factor = strength[category]
    if strong:
        factor += harm.STRONG_BONUS
    elif kinds & {"how_to", "write"}:
        factor += harm.WEAK_BONUS
    for kind, pattern in lexicon.AGGRAVATORS:
        if kind == "target" and strength[category] < ACT:
            continue
        if kind == "household" and not kinds & {"make", "instructions", "quantities"}:
            continue
        if pattern.search(literal):
            signals.append(f"intent:{kind}")
            factor += harm.AGGRAVATION
    span = harm.REQUEST_SPAN_CHARS
    request = text[-span:] if len(text) > span else text
    for defuser in _defusers(request, kinds, goal=strength[category] >= GOAL):
        signals.append(f"context:{defuser.kind}")
        factor *= defuser.weight
    severity = round(max(0.0, min(1.0, BASE[category] * factor)), 3)
    return HarmAssessment(category, severity, procedural, tuple(signals))


def _strengths(text: str, signals: list[str]) -> dict[str, float]:
    strength: dict[str, float] = {}
    for rules, level, prefix in (
        (lexicon.MENTIONS, MENTION, "topic"),
        (lexicon.ACTS, ACT, "act"),
        (lexicon.GOALS, GOAL, "goal"),
    ):
        for rule in rules:
            if rule.pattern.search(text):
                strength[rule.category] = max(strength.get(rule.category, 0.0), level)
                signals.append(f"{prefix}:{rule.code}")
    sentences = harm._SENTENCES.split(text)
    for pair in lexicon.PAIRS:
        if any(harm._in_order(pair, sentence) for sentence in sentences):
            strength[pair.category] = GOAL
            signals.append(f"goal:{pair.code}")
    return strength


def _procedural_kinds(text: str) -> set[str]:
    kinds = {kind for kind, pattern in lexicon.PROCEDURAL if pattern.search(text)}
    if len(lexicon.STEPS.findall(text)) >= 2:
        kinds.add("steps")
    return kinds


def _defusers(request: str, kinds: set[str], *, goal: bool) -> list[lexicon.Defuser]:
    found = []
    for defuser in lexicon.DEFUSERS:
        if goal and not defuser.defuses_goals:
            continue
        if defuser.kind in lexicon.PROTECTIVE_DEFUSERS and kinds & lexicon.STRONG_PROCEDURAL:
            continue
        if defuser.kind in lexicon.SETTING_DEFUSERS and (
            kinds & lexicon.DETAIL_PROCEDURAL or lexicon.REAL_WORLD.search(request)
        ):
            continue
        if defuser.pattern.search(request):
            found.append(defuser)
    return found
