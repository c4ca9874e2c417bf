"""Which language a prompt is in, for the trace: the judge reads English, French, German and
Italian (docs/how-sentinel-decides.md, "The built-in judge, second round"), and its error
differs by language.

py3langid's naive Bayes model over byte n-grams (about 0.2 ms a prompt), restricted to the
languages the judge was measured on, so a short prompt is not read as one of ninety others;
below ``MIN_PROBABILITY`` the language is ``und`` (undetermined, ISO 639-2), as for "Hi".
"""

from __future__ import annotations

from functools import cache
from typing import Any

# The judge's languages (evaluation/data/non_english.yaml measures es beside the other three).
LANGUAGES = ("en", "fr", "de", "it", "es")
MIN_PROBABILITY = 0.9
UNDETERMINED = "und"


@cache
def _identifier() -> Any:
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(LANGUAGES))
    return identifier


def detect(text: str) -> tuple[str, float]:
    """(ISO 639-1 code or ``und``, probability)."""
    if not any(ch.isalpha() for ch in text):
        return UNDETERMINED, 0.0
    code, probability = _identifier().classify(text)
    probability = float(probability)
    return (str(code) if probability >= MIN_PROBABILITY else UNDETERMINED), probability
