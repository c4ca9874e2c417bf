"""The citation markers of an answer's text: ``[1]``, ``[1, 3]``, ``[doc#p0]``, ``[Source 2]``.

The grammar both sides of a cited answer read: the generator maps a model's numbered markers
to chunk ids (``generate.grounded``), and the citation checks split an answer into sentences
with the markers that follow them (``cite.citations_stream``, the runner's support check).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# "[1]", "[1, 3]", "[1][2]", "[doc#p0]", "[Source 2]" - one group per bracket.
_MARKER = re.compile(r"\[\s*((?:source\s*|chunk\s*)?[^\[\]\n]{1,120}?)\s*\]", re.IGNORECASE)
_NUMBER_LIST = re.compile(
    r"^(?:source\s*|chunk\s*)?\d+(?:\s*[,;]\s*(?:source\s*|chunk\s*)?\d+)*$", re.I
)
# A sentence ends at . ! ? before whitespace (not inside "2.5") or at a line break.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")
LEADING_MARKERS = re.compile(r"^(?:\[[^\[\]\n]{1,120}\]\s*)+")


def resolve(citation: str, ids: Sequence[str]) -> str:
    """A chunk id for a citation given as an id or a 1-based marker number; anything else
    stays as written (and fails validation as unknown)."""
    value = citation.strip().strip("[]").strip()
    if value in ids:
        return value
    number = re.sub(r"^(?:source|chunk)\s*", "", value, flags=re.IGNORECASE)
    if number.isdigit() and 1 <= int(number) <= len(ids):
        return ids[int(number) - 1]
    return value


def markers(text: str, ids: Sequence[str]) -> list[str]:
    found: list[str] = []
    for match in _MARKER.finditer(text):
        inner = match.group(1).strip()
        if inner in ids:
            found.append(inner)
        elif _NUMBER_LIST.match(inner):
            found.extend(resolve(n, ids) for n in re.split(r"\s*[,;]\s*", inner))
    return found


def rewrite_markers(text: str, ids: Sequence[str]) -> str:
    """``[1]`` / ``[1, 2]`` as ``[doc#p0]`` / ``[doc#p0][doc#p1]``: the client reads ids."""

    def rewrite(match: re.Match[str]) -> str:
        inner = match.group(1).strip()
        if inner in ids or not _NUMBER_LIST.match(inner):
            return match.group(0)
        parts = [resolve(n, ids) for n in re.split(r"\s*[,;]\s*", inner)]
        return "".join(f"[{p}]" for p in parts)

    return _MARKER.sub(rewrite, text)


def strip_markers(text: str) -> str:
    return re.sub(r"\s*\[[^\[\]\n]{1,120}\]", "", text).strip()


def sentences(text: str) -> list[str]:
    """Sentences with the markers that follow them: in "Claim. [1] Next." the [1] belongs to
    "Claim."."""
    found: list[str] = []
    for piece in SENTENCE_END.split(text):
        part = piece.strip()
        lead = LEADING_MARKERS.match(part)
        if lead and found:
            found[-1] = f"{found[-1]} {lead.group(0).strip()}"
            part = part[lead.end() :].strip()
        if part:
            found.append(part)
    return found


def without_claims(text: str, claims: Sequence[str]) -> str:
    """``text`` without the sentences whose claims are listed (each with its markers)."""
    dropped = set(claims)
    return " ".join(s for s in sentences(text) if strip_markers(s) not in dropped)
