"""The one word tokenizer of the index: BM25 (``bm25``) and the built-in embedder
(``embedders``) must agree on what a word is, or lexical and dense scores drift apart."""

from __future__ import annotations

import re

# Letters and digits of any script; the underscore counts as a separator so that
# ``snake_case`` matches a query for "snake case".
_WORD = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased words of ``text`` in order (duplicates kept: callers count them)."""
    return _WORD.findall(text.lower())
