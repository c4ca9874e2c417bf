"""Stage 0: canonicalise an untrusted prompt before anything reasons about it.

The text every later stage sees (``introspection``, ``gate``, the retrieval query) is the
one produced here, so tricks that hide words from a lexicon cannot reach them: full-width
or ligature look-alikes (NFKC), zero-width joiners inside a word, bidi overrides and the
Unicode tag block that smuggles invisible ASCII instructions.
"""

from __future__ import annotations

import unicodedata

import regex

from sentinel_runtime.pipeline.types import CanonicalPrompt

DEFAULT_MAX_CHARS = 8000

# Format (Cf: zero-width, bidi controls, tags), private-use, unassigned, C0/C1 controls but
# tab/newline/return, variation selectors (they smuggle bytes after an emoji) and the
# Hangul fillers that render as nothing.
INVISIBLE = regex.compile(
    r"[\p{Cf}\p{Co}\p{Cn}\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
    r"\uFE00-\uFE0F\U000E0100-\U000E01EF\u115F\u1160\u3164\uFFA0]"
)
_SPACES = regex.compile(r"[^\S\n]+")
_LINE_EDGES = regex.compile(r" ?\n ?")
_BLANK_LINES = regex.compile(r"\n{3,}")


def canonicalise(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> CanonicalPrompt:
    """NFKC, invisible characters removed (and counted), whitespace collapsed, bounded."""
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    original_chars = len(text)
    # Removing before NFKC keeps a joiner from gluing look-alikes; after, NFKC may expose
    # no new invisibles but some compatibility forms fold into them, so count both passes.
    stripped, removed = INVISIBLE.subn("", text)
    normalised, removed_after = INVISIBLE.subn("", unicodedata.normalize("NFKC", stripped))
    normalised = normalised.replace("\r\n", "\n").replace("\r", "\n")
    collapsed = _SPACES.sub(" ", normalised)
    collapsed = _LINE_EDGES.sub("\n", collapsed)
    collapsed = _BLANK_LINES.sub("\n\n", collapsed).strip()
    truncated = len(collapsed) > max_chars
    if truncated:
        collapsed = collapsed[:max_chars].rstrip()
    return CanonicalPrompt(
        text=collapsed,
        original_chars=original_chars,
        invisible_removed=removed + removed_after,
        truncated=truncated,
    )
