"""Text analysis for the index and the pipeline: the one tokenizer, the stopword lists
(``data/stopwords.txt``), topic keywords, content terms, a light stemmer, sentences.

Two views of a text's words, each with its own stopword set:

* :func:`tokenize`, what the index reads: BM25 (``bm25``), the Milvus store (``milvus``)
  and the built-in embedder (``hashing``, which weighs ``STOPWORDS`` down) must agree on
  what a word is, or lexical and dense scores drift apart. :func:`keywords` are its topic
  words, for comparing an answer with chunks (``pipeline.citations`` and the modules that
  read them through it).
* :func:`terms`, what comparisons of sentences read (``pipeline.conflicts``,
  ``pipeline.evidence``, ``pipeline.injection``): ASCII words that may hold an apostrophe or
  a hyphen, stopwords dropped, stemmed by :func:`stem` so that plural and verb forms meet.

No stemming in the tokenizer: "refunds" and "refund" are different words to BM25 (the
hashing embedder still relates them through character n-grams). Folding plurals was tried
and changes which chunks the demo scenarios retrieve; it is a decision for retrieval and
pipeline together.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Set as AbstractSet
from importlib import resources

# Letters and digits of any script; the underscore counts as a separator so that
# ``snake_case`` matches a query for "snake case".
_WORD = re.compile(r"[^\W_]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased words of ``text`` in order (duplicates kept: callers count them)."""
    return _WORD.findall(text.lower())


# -- stopwords ---------------------------------------------------------------------------


@functools.cache
def stopword_lists() -> dict[str, frozenset[str]]:
    """The ``[sections]`` of ``data/stopwords.txt`` by name, read once."""
    data = resources.files("sentinel_runtime.index") / "data" / "stopwords.txt"
    lists: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in data.read_text("utf-8").splitlines():
        content = line.partition("#")[0].strip()
        if content.startswith("[") and content.endswith("]"):
            current = lists.setdefault(content[1:-1], set())
            continue
        for word in content.split():
            if current is None or tokenize(word) != [word]:
                raise ValueError(f"stopwords.txt: {word!r} outside a section or not one token")
            current.add(word)
    return {name: frozenset(words) for name, words in lists.items()}


def stopwords(*names: str) -> frozenset[str]:
    """The union of the named lists of ``data/stopwords.txt``."""
    lists = stopword_lists()
    return frozenset().union(*(lists[name] for name in names))


# Function words: left in, they make every pair of English texts look alike.
STOPWORDS = stopwords("common")
# What keywords() drops: a shared "could" or "about" is no evidence that an answer and a
# chunk talk about the same thing.
KEYWORD_STOPWORDS = stopwords("common", "keywords")
# What terms() drops.
TERM_STOPWORDS = stopwords("common", "terms")


def keywords(text: str) -> set[str]:
    """Topic words: the tokens of ``text`` minus ``KEYWORD_STOPWORDS`` and words of one or
    two characters (not stemmed)."""
    return {word for word in tokenize(text) if len(word) > 2 and word not in KEYWORD_STOPWORDS}


# -- content terms -----------------------------------------------------------------------

_TERM_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*")
NUMBER_WORDS = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "thirteen": "13",
    "fourteen": "14",
    "fifteen": "15",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
    "first": "1",
    "second": "2",
    "third": "3",
    "fourth": "4",
    "fifth": "5",
    "sixth": "6",
    "seventh": "7",
    "eighth": "8",
    "ninth": "9",
    "tenth": "10",
}
# A full stop glued to a capitalised word ("...florida.In a") also ends a sentence; an
# initial ("John F. Kennedy") does not.
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)\s+(?=[\"'(\[]?[A-Z0-9])|(?<=[.!?])(?=[A-Z][a-z])|\n+"
)


def stem(word: str) -> str:
    """A light suffix stripper: enough for plural and verb forms to meet. Number words
    become digits ("four" is "4")."""
    if word in NUMBER_WORDS:
        return NUMBER_WORDS[word]
    for suffix, keep in (
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + keep
    return word


@functools.lru_cache(maxsize=32768)
def terms(text: str) -> frozenset[str]:
    """Content terms of ``text``: lower-cased, ``TERM_STOPWORDS`` dropped, lightly stemmed.

    Cached: the same chunk is read by relevance, clustering and conflict detection in one
    request, and popular chunks come back request after request. A text's first reading
    looks each distinct word up once (``_term``): words recur across texts far more than
    texts recur."""
    words = set(_TERM_WORD.findall(text.lower()))
    return frozenset(term for term in map(_term, words) if term is not None)


@functools.lru_cache(maxsize=65536)
def _term(raw: str) -> str | None:
    """The term a matched word stands for, or None for a stopword or a stray letter."""
    word = raw.strip("'-")
    if (len(word) < 2 and not word.isdigit()) or word in TERM_STOPWORDS:
        return None
    return stem(word)


def coverage(query_terms: AbstractSet[str], text_terms: AbstractSet[str]) -> float:
    """Share of the query's terms found in the text (0 when the query has none)."""
    return len(query_terms & text_terms) / len(query_terms) if query_terms else 0.0


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, empty ones left out."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def normalise(text: str) -> str:
    """Lower-cased, with number words as digits ("four" and "4" read alike)."""
    return _TERM_WORD.sub(lambda m: NUMBER_WORDS.get(m.group(0), m.group(0)), text.lower())
