"""Judge a request: how harmful, which risk category, is it an attack, what was hidden.

The learned model (``model.shipped``) reads the canonical prompt and every decoded
reading of it (``deobfuscate.decoded_forms``: leetspeak, base64, look-alike letters, ...);
the most harmful reading counts, and the decoding that produced it is named. The
request-like sentences of a longer text (``segments``) are read on their own too, so a
wrapper's words do not dilute the request it carries. A request
naming a listed term (``lexicon.find``) is raised at least to the restricted band, one
asking to make or get one (``lexicon.requested``) to a refusal. Severity
maps the harm probability onto the introspection's scale so that the model's own
thresholds land on fixed points of it: ``refuse`` on ``HARMFUL_SEVERITY`` and ``ambiguous``
on ``AMBIGUOUS_SEVERITY`` (the default of ``IntrospectionConfig.ambiguous_severity``; its
``harmful_severity`` defaults a little higher, at the operating point
``evaluation/operating_point.py`` chooses). When an ``encoder`` is
given and the linear probability of the most harmful reading falls in its band, the
encoder reads that reading and its probability, on its own thresholds, sets the severity
(signals ``encoder:<verdict>``, ``encoder_harm:<p>``); elsewhere, or when it cannot run,
the linear model decides. Signals are codes and numbers, never words of the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import regex

from sentinel_runtime.pipeline.understand import deobfuscate
from sentinel_runtime.pipeline.understand.judge import encoder as encoder_stage
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


@dataclass(frozen=True)
class Readings:
    """The prompt and its decoded readings (text, decoding), and the linear model's scores of
    the most harmful one among them and the request-like sentences."""

    readings: tuple[tuple[str, str], ...]
    best: model.Scores
    best_text: str  # the reading or sentence that scored ``best`` (what the encoder reads)
    best_decoding: str  # the decoding that produced it, when it reads as more harmful
    injection: float  # the highest injection probability among them


def strongest_reading(text: str, judge: model.LinearJudge) -> Readings:
    readings = [(text, "")]
    readings.extend((form.text, form.decoding) for form in deobfuscate.decoded_forms(text))
    scored = [(judge.score(reading), reading, decoding) for reading, decoding in readings]
    # A wrapper's words dilute the request inside it: each sentence is judged on its own too.
    scored.extend((judge.score(part), part, "") for part in segments(text))
    best, best_text, best_decoding = max(scored, key=lambda item: item[0].harm)
    injection = max(scores.injection for scores, _, _ in scored)
    shown = best_decoding if best.harm > scored[0][0].harm else ""
    return Readings(tuple(readings), best, best_text, shown, injection)


def assess_request(
    text: str,
    judge: model.LinearJudge | None = None,
    encoder: encoder_stage.EncoderJudge | None = None,
) -> RequestAssessment:
    """Judge ``text`` with ``judge`` (the shipped model unless another one is measured),
    and with ``encoder`` inside its band."""
    judge = judge or model.shipped()
    found = strongest_reading(text, judge)
    best, injection, readings = found.best, found.injection, found.readings
    decodings = tuple(dict.fromkeys(d for _, d in readings if d))
    severity = severity_of(best.harm, judge.thresholds)
    signals = [f"judge_harm:{best.harm:.3f}", f"judge_injection:{injection:.3f}"]
    if encoder is not None and encoder.in_band(best.harm):
        second = encoder.probability(found.best_text)
        if second is None:
            signals.append("encoder:unavailable")
        else:
            severity = severity_of(second, encoder.thresholds)
            verdict = (
                "harmful"
                if severity >= HARMFUL_SEVERITY
                else "ambiguous"
                if severity >= AMBIGUOUS_SEVERITY
                else "benign"
            )
            signals += [f"encoder:{verdict}", f"encoder_harm:{second:.3f}"]
    category = best.category if severity >= AMBIGUOUS_SEVERITY else "none"
    if category != "none":
        signals.append(f"judge_category:{category}")
    if found.best_decoding:
        signals.append(f"decoded:{found.best_decoding.replace('+', '_')}")
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
