"""Does a turn need the user's documents? (stage 1's retrieval necessity)

Questions about the user's own documents need retrieval; self-contained turns need none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sentinel_runtime.pipeline.types import RetrievalNeed


@dataclass(frozen=True)
class NeedAssessment:
    need: RetrievalNeed
    reason: str  # a short code, e.g. "document_reference", "self_contained"


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)


_NEEDS_DOCUMENTS = _rx(
    r"\b(?:my|our|the|this|these|attached|uploaded|provided|internal|company)\s+(?:\w+\s+)?"
    r"(?:documents?|docs|files?|pdfs?|reports?|contracts?|polic(?:y|ies)|handbook|manual|"
    r"notes|records|knowledge\s+base|wiki|runbooks?|tickets?|emails?|spreadsheets?|"
    r"slides|transcripts?|minutes|specs?|specifications)\b",
    r"\b(?:according\s+to|based\s+on|from|in)\s+(?:the|our|my)\s+(?:\w+\s+)?(?:sources?|"
    r"index|corpus|context|documentation|data)\b",
    r"\b(?:our|my\s+company's|the\s+company's)\b",
    r"\bcite\b|\bcitations?\b|\bsources?\b",
)
_SELF_CONTAINED = _rx(
    r"^\s*(?:hi|hello|hey|thanks|thank\s+you|good\s+(?:morning|evening))\b[^?]{0,30}$",
    r"^\s*(?:what|who)(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:a|an|the)?\s*[\w'-]+"
    r"(?:\s+[\w'-]+){0,2}\s*\??\s*$",
    r"^\s*(?:define|definition\s+of|meaning\s+of|translate|spell|rephrase|summari[sz]e\s+this)\b",
    r"^\s*(?:what\s+does)\s+[^?]{1,40}\s+mean\s*\??\s*$",
    r"^[\d\s+\-*/().=^%x]+\??$",
)


def assess(text: str) -> NeedAssessment:
    if _NEEDS_DOCUMENTS.search(text):
        return NeedAssessment("required", "document_reference")
    if _SELF_CONTAINED.search(text):
        return NeedAssessment("none", "self_contained")
    return NeedAssessment("optional", "general_question")
