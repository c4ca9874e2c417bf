"""The index's word tokenizer, defined in ``analysis`` (tokenising, stopwords, topic words).

Kept as a name for the modules that read words through it (``store``, ``bm25``,
``bench/index_build.py``): ``tokens.tokenize`` is ``analysis.tokenize``, the same function.
"""

from __future__ import annotations

from sentinel_runtime.index import analysis

tokenize = analysis.tokenize
