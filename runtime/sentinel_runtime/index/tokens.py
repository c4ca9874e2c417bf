"""The one word tokenizer of the index: BM25 (``bm25``) and the built-in embedder
(``hashing``) must agree on what a word is, or lexical and dense scores drift apart.

No stemming: "refunds" and "refund" are different words to BM25 (the hashing embedder
still relates them through character n-grams). Folding plurals was tried and changes which
chunks the demo scenarios retrieve; it is a decision for retrieval and pipeline together.
"""

from __future__ import annotations

import re

# Letters and digits of any script; the underscore counts as a separator so that
# ``snake_case`` matches a query for "snake case".
_WORD = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased words of ``text`` in order (duplicates kept: callers count them)."""
    return _WORD.findall(text.lower())
