"""A prompt without its procedural triggers and request boilerplate: the topic alone.

The gate's restricted retrieval searches for this query (``gate.planner``), and the evidence
filter's fallback asks whether a rewrite would change a restricted query at all
(``evidence.scoring.fallback_for``); both read it from here so they cannot disagree.
"""

from __future__ import annotations

import re


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)


# Words that ask for the actionable part; a restricted query keeps only the topic.
_PROCEDURAL_TRIGGERS = _rx(
    r"\bstep[- ]by[- ]step\b|\bin\s+\d+\s+(?:\w+\s+)?steps\b",
    r"\b(?:detailed|exact|precise|specific|complete|full)\s+(?:\w+\s+)?(?:instructions?|steps|"
    r"procedures?|recipes?|amounts?|quantities|measurements|dosages?|guide|plan|list)\b",
    r"\b(?:instructions?|tutorial|recipe|guide|walkthrough|blueprints?)\s*(?:for|on|to|of)?\b",
    r"\bhow\s+(?:to|do\s+i|can\s+i|could\s+i|would\s+i|should\s+i|do\s+you|does\s+one|one\s+"
    r"(?:can|could))\s+(?:make|build|create|synthesi[sz]e|manufacture|produce|assemble|cook|"
    r"brew|grow|obtain|get|buy|make\s+my\s+own)\b",
    r"\bhow\s+(?:to|do\s+i|can\s+i)\b",
    r"\b\d+(?:[.,]\d+)?\s?(?:mg|g|kg|grams?|ml|l|litres?|liters?|oz|ounces?|lbs?|cups?|%|percent)\b",
    r"\b(?:list|give|provide|outline|write|tell)\s+(?:me\s+)?(?:all\s+)?(?:the\s+)?"
    r"(?:steps|ingredients|materials|equipment|tools)\b",
    r"\b(?:walk|talk)\s+me\s+through\b|\bteach\s+me\b|\bshow\s+me\b",
    r"\b(?:at\s+home|from\s+scratch|diy|homemade|without\s+getting\s+caught)\b",
)
# Request boilerplate that carries no topic.
_FILLER = _rx(
    r"\b(?:please|kindly)\b",
    r"\b(?:can|could|would|will)\s+you\b",
    r"\b(?:give|tell|show|send|provide)\s+me\b",
    r"\bi\s+(?:want|need|would\s+like)\s+(?:to\s+know\s+)?",
)
_SPACES = re.compile(r"\s+")
_EDGE_WORDS = re.compile(
    r"^(?:(?:the|a|an|and|or|of|for|to|on|with|me|some|all|exact)\b\W*)+|"
    r"(?:\W*\b(?:the|a|an|and|or|of|for|to|on|with|me|some|all))+\W*$",
    re.IGNORECASE,
)
_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")


def rewrite_query(text: str) -> str:
    """The prompt with procedural triggers and request boilerplate removed, for a
    restricted retrieval; "" when nothing topical is left."""
    stripped = _FILLER.sub(" ", _PROCEDURAL_TRIGGERS.sub(" ", text))
    collapsed = _PUNCTUATION.sub("", _SPACES.sub(" ", stripped).strip())
    return _PUNCTUATION.sub("", _EDGE_WORDS.sub("", collapsed)).strip()
