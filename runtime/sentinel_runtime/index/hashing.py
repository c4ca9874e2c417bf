"""The built-in, model-free embedder: signed feature hashing of words, word pairs and
character n-grams (one of the ``embedders``; words and stop words come from ``analysis``).

What it captures: shared words and phrases, and spelling variants through character 3- and
4-grams inside words ("colour"/"color", "index"/"indexes"). What it does not: meaning.
"car" and "automobile" share nothing here, and a paraphrase with other words scores low.
Use a ``LocalEmbedder`` or ``RemoteEmbedder`` when retrieval must find synonyms.

Hashes are blake2b, never Python's per-process salted ``hash()``: a persisted index must
embed the same text to the same vector in the next process.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sentinel_runtime.index import analysis

DEFAULT_DIM = 384
BATCH = 4096  # texts per vectorised pass: bounds the temporary arrays to tens of MB
CACHE_WORDS = 1 << 16  # about 800 bytes a word: at most ~50 MB, kept after deletes

WORD_WEIGHT = 1.0
BIGRAM_WEIGHT = 0.7
GRAMS_WEIGHT = 0.7  # L2 norm of one word's whole character n-gram block
# Function words carry no topic; left in, they make every pair of English texts look alike.
# The [common] list of index/data/stopwords.txt, spelled as the tokenizer leaves them.

_U64 = np.uint64
_MASK32 = _U64(0xFFFFFFFF)


def stable_hash(data: str) -> int:
    """A 64-bit hash that is the same in every process and on every machine."""
    return int.from_bytes(hashlib.blake2b(data.encode(), digest_size=8).digest(), "little")


def _mix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Order-sensitive combination of two uint64 word hashes (splitmix64 finaliser)."""
    x = (a * _U64(0x9E3779B97F4A7C15)) ^ (b + _U64(0x632BE59BD9B4E019))
    x ^= x >> _U64(30)
    x *= _U64(0xBF58476D1CE4E5B9)
    x ^= x >> _U64(27)
    x *= _U64(0x94D049BB133111EB)
    x ^= x >> _U64(31)
    return x


@dataclass(frozen=True)
class _Word:
    key: int  # 64-bit hash of the word, input of its bigrams
    bucket: int
    value: float  # signed unigram weight, 0 for stop words
    gram_buckets: np.ndarray  # int64
    gram_values: np.ndarray  # float64, signed


class HashingEmbedder:
    """Lexical embeddings without a model: about 20k chunks of 500 characters a second on
    one core (``bench/index_build.py``)."""

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        if dim < 16:
            raise ValueError(f"dim must be at least 16, got {dim}")
        self.dim = dim
        self.name = f"sentinel-hashing-v1-{dim}"
        self._words: dict[str, _Word] = {}

    def close(self) -> None:
        return None

    def _bucket_sign(self, key: int) -> tuple[int, float]:
        return key % self.dim, -1.0 if (key >> 63) & 1 else 1.0

    def _word(self, word: str) -> _Word:
        found = self._words.get(word)
        if found is not None:
            return found
        key = stable_hash("w:" + word)
        bucket, sign = self._bucket_sign(key)
        stop = word in analysis.STOPWORDS
        padded = f"<{word}>"
        grams = (
            [] if stop else [padded[i : i + n] for n in (3, 4) for i in range(len(padded) - n + 1)]
        )
        pairs = [self._bucket_sign(stable_hash("c:" + g)) for g in grams]
        scale = GRAMS_WEIGHT / math.sqrt(len(pairs)) if pairs else 0.0
        found = _Word(
            key=key,
            bucket=bucket,
            value=0.0 if stop else sign * WORD_WEIGHT,
            gram_buckets=np.array([b for b, _ in pairs], dtype=np.int64),
            gram_values=np.array([s * scale for _, s in pairs], dtype=np.float64),
        )
        if len(self._words) >= CACHE_WORDS:
            self._words = {}  # a fresh dict: threads still reading the old one are unaffected
        self._words[word] = found
        return found

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Rows L2-normalised; a text without any word embeds to the zero vector."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._embed_batch(texts[i : i + BATCH]) for i in range(0, len(texts), BATCH)]
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def _embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        n, dim = len(texts), self.dim
        words_of = [analysis.tokenize(text) for text in texts]
        lengths = np.fromiter(map(len, words_of), dtype=np.int64, count=n)
        all_words = list(itertools.chain.from_iterable(words_of))
        # Two C-level passes (dedupe, then look up) instead of a Python loop per word.
        vocab = {w: i for i, w in enumerate(dict.fromkeys(all_words))}
        ids = np.fromiter(map(vocab.__getitem__, all_words), dtype=np.int64, count=len(all_words))
        if not vocab:
            return np.zeros((n, dim), dtype=np.float32)
        table = [self._word(w) for w in vocab]
        size = len(table)
        key = np.fromiter((w.key for w in table), dtype=_U64, count=size)
        bucket = np.fromiter((w.bucket for w in table), dtype=np.int64, count=size)
        value = np.fromiter((w.value for w in table), dtype=np.float64, count=size)
        stop = value == 0.0
        gram_len = np.fromiter((len(w.gram_buckets) for w in table), dtype=np.int64, count=size)
        gram_start = np.concatenate(([0], np.cumsum(gram_len)[:-1]))
        gram_bucket = np.concatenate([w.gram_buckets for w in table])
        gram_value = np.concatenate([w.gram_values for w in table])

        row = np.repeat(np.arange(n, dtype=np.int64), lengths)
        # Sublinear tf per (row, word): 1 + log(count), shared by the word and its n-grams.
        pair, count = np.unique(row * size + ids, return_counts=True)
        p_row, p_word = pair // size, pair % size
        weight = 1.0 + np.log(count)
        flat = [p_row * dim + bucket[p_word]]
        vals = [weight * value[p_word]]

        g_len = gram_len[p_word]
        total = int(g_len.sum())
        offsets = np.repeat(gram_start[p_word] - (np.cumsum(g_len) - g_len), g_len)
        g_idx = offsets + np.arange(total, dtype=np.int64)
        flat.append(np.repeat(p_row * dim, g_len) + gram_bucket[g_idx])
        vals.append(np.repeat(weight, g_len) * gram_value[g_idx])

        flat_b, vals_b = self._bigrams(row, ids, key, stop)
        flat.append(flat_b)
        vals.append(vals_b)
        dense = np.bincount(np.concatenate(flat), np.concatenate(vals), minlength=n * dim)
        matrix = dense.reshape(n, dim).astype(np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        return matrix

    def _bigrams(
        self, row: np.ndarray, ids: np.ndarray, key: np.ndarray, stop: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Adjacent word pairs within a text, skipping pairs of two stop words."""
        keep = row[1:] == row[:-1]
        left, right = ids[:-1][keep], ids[1:][keep]
        keep_pair = ~(stop[left] & stop[right])
        b_row = row[1:][keep][keep_pair]
        b_key = _mix(key[left[keep_pair]], key[right[keep_pair]]) >> _U64(32)
        pair, count = np.unique((b_row.astype(_U64) << _U64(32)) | b_key, return_counts=True)
        p_row = (pair >> _U64(32)).astype(np.int64)
        p_key = pair & _MASK32
        sign = np.where((p_key >> _U64(31)) & _U64(1), -1.0, 1.0)
        flat = p_row * self.dim + (p_key % _U64(self.dim)).astype(np.int64)
        return flat, sign * BIGRAM_WEIGHT * (1.0 + np.log(count))
