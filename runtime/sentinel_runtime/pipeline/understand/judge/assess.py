"""Judge a request: how harmful, which risk category, is it an attack, what was hidden.

The learned model (``model.shipped``) reads the canonical prompt and every decoded
reading of it (``deobfuscate.decoded_forms``: leetspeak, base64, look-alike letters, ...);
the most harmful reading counts, and the decoding that produced it is named. The
request-like sentences of a longer text (``segments``) are read on their own too, so a
wrapper's words do not dilute the request it carries. A request
naming a listed term (``lexicon.find``) is raised at least to the restricted band, one
asking to make or get one (``lexicon.requested``) to a refusal. Severity
maps the harm probability onto the introspection's scale so that the model's own
thresholds land on the policy's: ``refuse`` on ``HARMFUL_SEVERITY`` and ``ambiguous`` on
``AMBIGUOUS_SEVERITY`` (the defaults of ``IntrospectionConfig``). Signals are codes and
numbers, never words of the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import regex

from sentinel_runtime.pipeline.understand import deobfuscate
from sentinel_runtime.pipeline.understand.judge import lexicon, model

HARMFUL_SEVERITY = 0.6
AMBIGUOUS_SEVERITY = 0.35
# Asking to make or get a listed term (``lexicon.requested``) is harmful whatever the model
# says: a little above the refusal line, so framing cannot be needed to reach it.
REQUESTED_SEVERITY = 0.7
MAX_SEGMENTS = 16
MIN_SEGMENT_WORDS = 4
_SENTENCE = regex.compile(r"(?<=[.?!:;])\s+|\n+")
# Asking for the actionable part: a how-to, steps, code, making or obtaining something.
_PROCEDURAL = regex.compile(
    r"\b(?:how\s+(?:to|do|can|could|would|should|much|many)|step[- ]by[- ]step|steps?\b|"
    r"instructions?|tutorial|guide|recipe|walk\s+me\s+through|teach\s+me|show\s+me|"
    r"(?:write|give|provide|create|generate|draft|compose|develop|design)\b|"
    r"make|build|synthesi[sz]e|produce|obtain|buy|acquire|code|script|program)",
    regex.IGNORECASE,
)


@dataclass(frozen=True)
class RequestAssessment:
    category: str  # one of harm.CATEGORIES
    severity: float  # 0 .. 1, on the introspection's scale
    procedural: bool
    harm_probability: float
    injection_probability: float
    injection: bool  # the injection head is at or above its threshold
    decodings: tuple[str, ...]  # decodings that produced a reading ("base64", ...)
    signals: tuple[str, ...]


def severity_of(probability: float, thresholds: model.Thresholds) -> float:
    """Piecewise-linear: [0, ambiguous) -> [0, 0.35), [ambiguous, refuse) -> [0.35, 0.6),
    [refuse, 1] -> [0.6, 1]."""
    low, high = thresholds.ambiguous, thresholds.refuse
    if probability < low:
        value = AMBIGUOUS_SEVERITY * probability / low if low > 0 else AMBIGUOUS_SEVERITY
    elif probability < high:
        value = AMBIGUOUS_SEVERITY + (HARMFUL_SEVERITY - AMBIGUOUS_SEVERITY) * (
            (probability - low) / (high - low)
        )
    else:
        span = 1.0 - high
        value = HARMFUL_SEVERITY + (1.0 - HARMFUL_SEVERITY) * (
            (probability - high) / span if span > 0 else 1.0
        )
    return round(min(1.0, max(0.0, value)), 3)


@cache
def _request_like() -> regex.Pattern[str]:
    """A question, or a sentence opening with a word of ``data/request_openers.txt``."""
    openers = lexicon.alternation(lexicon.data_lines("request_openers.txt"))
    return regex.compile(
        rf"\?\s*$|^(?:please\s+|now\s+|so\s+|then\s+|and\s+)?(?:{openers})\b", regex.IGNORECASE
    )


def segments(text: str) -> list[str]:
    """The request-like sentences (questions, imperatives) of a text of several, longest
    first, at most ``MAX_SEGMENTS``. Statements are left to the whole-text score: a
    pasted document's sentences, judged alone, read as requests far too often."""
    sentences = [p.strip() for p in _SENTENCE.split(text) if p.strip()]
    if len(sentences) < 2:
        return []
    asks = _request_like()
    parts = [p for p in sentences if len(p.split()) >= MIN_SEGMENT_WORDS and asks.search(p)]
    return sorted(parts, key=len, reverse=True)[:MAX_SEGMENTS]


def assess_request(text: str, judge: model.LinearJudge | None = None) -> RequestAssessment:
    """Judge ``text`` with ``judge`` (the shipped model unless another one is measured)."""
    judge = judge or model.shipped()
    readings = [(text, "")]
    readings.extend((form.text, form.decoding) for form in deobfuscate.decoded_forms(text))
    scored = [(judge.score(reading), decoding) for reading, decoding in readings]
    # A wrapper's words dilute the request inside it: each sentence is judged on its own too.
    scored.extend((judge.score(part), "") for part in segments(text))
    best, best_decoding = max(scored, key=lambda item: item[0].harm)
    injection = max(scores.injection for scores, _ in scored)
    decodings = tuple(dict.fromkeys(d for _, d in readings if d))
    severity = severity_of(best.harm, judge.thresholds)
    category = best.category if severity >= AMBIGUOUS_SEVERITY else "none"
    signals = [f"judge_harm:{best.harm:.3f}", f"judge_injection:{injection:.3f}"]
    if category != "none":
        signals.append(f"judge_category:{category}")
    if best_decoding and best.harm > scored[0][0].harm:
        signals.append(f"decoded:{best_decoding.replace('+', '_')}")
    everything = "\n".join(reading for reading, _ in readings)
    terms = lexicon.find(everything)
    for term in terms:
        signals.append(f"lexicon:{term.code}")
    if terms and severity < AMBIGUOUS_SEVERITY:
        severity, category = AMBIGUOUS_SEVERITY, terms[0].category
    asked = lexicon.requested(everything)
    for term in asked:
        signals.append(f"lexicon_request:{term.code}")
    if asked:
        # The listed term names what is asked for more precisely than the model's category.
        severity, category = max(severity, REQUESTED_SEVERITY), asked[0].category
    procedural = any(_PROCEDURAL.search(reading) for reading, _ in readings)
    return RequestAssessment(
        category=category,
        severity=severity,
        procedural=procedural,
        harm_probability=round(best.harm, 4),
        injection_probability=round(injection, 4),
        injection=injection >= judge.thresholds.injection,
        decodings=decodings,
        signals=tuple(signals),
    )
