"""The one word tokenizer of the index: BM25 (``bm25``) and the built-in embedder
(``hashing``) must agree on what a word is, or lexical and dense scores drift apart."""

from __future__ import annotations

import re

# Letters and digits of any script; the underscore counts as a separator so that
# ``snake_case`` matches a query for "snake case".
_WORD = re.compile(r"[^\W_]+")

# English plurals folded onto the singular, so "refund" finds "refunds" and "index" finds
# "indexes" (a light S-stemmer, run as C-level regex substitutions over the whole text).
# Short words and -ss/-us/-is endings stay: "this", "status", "analysis", "class", "was".
_IES = re.compile(r"(?<=[^\W_]{2})ies\b")
_ES = re.compile(r"(?:(?<=[^\W_][sxz])|(?<=[^\W_][cs]h))es\b")
_S = re.compile(r"(?<=[^\W_]{3})(?<![isu])s\b")


def tokenize(text: str) -> list[str]:
    """Lower-cased, plural-folded words of ``text`` in order (duplicates kept)."""
    text = _S.sub("", _ES.sub("", _IES.sub("y", text.lower())))
    return _WORD.findall(text)
