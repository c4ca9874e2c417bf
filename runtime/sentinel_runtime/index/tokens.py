"""The one word tokenizer of the index: BM25 (``bm25``) and the built-in embedder
(``hashing``) must agree on what a word is, or lexical and dense scores drift apart."""

from __future__ import annotations

import functools
import re

# Letters and digits of any script; the underscore counts as a separator so that
# ``snake_case`` matches a query for "snake case".
_WORD = re.compile(r"[^\W_]+")


@functools.lru_cache(maxsize=1 << 17)
def singular(word: str) -> str:
    """English plurals folded onto the singular (a light S-stemmer), so that "refund"
    finds "refunds" and "index" finds "indexes". Short words and -ss/-us/-is endings stay:
    "this", "status", "analysis", "class", "was"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("es") and (word[-3] in "sxz" or word[-4:-2] in ("ch", "sh")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and word[-2] not in "isu":
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Lower-cased, plural-folded words of ``text`` in order (duplicates kept)."""
    # Only words ending in "s" pay for the (cached) folding call.
    return [singular(w) if w[-1] == "s" else w for w in _WORD.findall(text.lower())]
