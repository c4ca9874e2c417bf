"""Text -> sparse feature vector for the built-in judge (word and character n-grams).

The same function featurises training rows (``sentinel_runtime.training``) and live
prompts, so a shipped model sees exactly the features it was trained on. Features are
hashed into ``DIMENSIONS`` buckets with CRC-32 (stable across processes and machines,
unlike ``hash()``): word unigrams and bigrams, and character 3- to 5-grams inside each
word padded with spaces, which keep a misspelt or inflected word close to its stem.
Weights are sublinear term frequency times inverse document frequency, L2-normalised.
"""

from __future__ import annotations

import itertools
import math
import zlib
from functools import lru_cache

import numpy as np
import regex

DIMENSIONS = 1 << 18
CHAR_NGRAMS = (3, 4, 5)
SKIP_WINDOW = 3
# Longer texts are judged on their first part: a jailbreak wrapper and its payload fit,
# and featurising stays bounded whatever a client sends.
MAX_CHARS = 6000
_WORD = regex.compile(r"\w+")


def _bucket(feature: str) -> int:
    return zlib.crc32(feature.encode("utf-8", "surrogatepass")) % DIMENSIONS


@lru_cache(maxsize=65536)
def _word_buckets(word: str) -> tuple[int, ...]:
    """The unigram and character n-gram buckets of one (lower-cased) word."""
    padded = f" {word} "
    grams = [f"w:{word}"]
    for n in CHAR_NGRAMS:
        grams.extend(f"c:{padded[i : i + n]}" for i in range(max(1, len(padded) - n + 1)))
    return tuple(_bucket(gram) for gram in grams)


def words(text: str) -> list[str]:
    return _WORD.findall(text[:MAX_CHARS].casefold())


def term_counts(text: str) -> dict[int, int]:
    """Bucket -> count for ``text`` (before weighting)."""
    tokens = words(text)
    counts: dict[int, int] = {}
    for token in tokens:
        for bucket in _word_buckets(token):
            counts[bucket] = counts.get(bucket, 0) + 1
    for first, second in itertools.pairwise(tokens):
        bucket = _bucket(f"b:{first} {second}")
        counts[bucket] = counts.get(bucket, 0) + 1
    # Skip-bigrams tie a verb to its object across a determiner or a possessive:
    # "kill -> process" and "kill -> neighbour" are what tells the two requests apart.
    for gap in range(2, SKIP_WINDOW + 1):
        for first, second in zip(tokens, tokens[gap:], strict=False):
            bucket = _bucket(f"s:{first} {second}")
            counts[bucket] = counts.get(bucket, 0) + 1
    return counts


def vectorise(text: str, idf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bucket indices, weights): sublinear tf x idf, L2-normalised; empty for no words."""
    counts = term_counts(text)
    if not counts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    indices = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    tf = np.fromiter(
        (1.0 + math.log(c) for c in counts.values()), dtype=np.float32, count=len(counts)
    )
    weights = tf * idf[indices]
    norm = float(np.linalg.norm(weights))
    return indices, (weights / norm if norm > 0 else weights).astype(np.float32)
