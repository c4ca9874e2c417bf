"""Okapi BM25 over an incremental inverted index: the lexical half of ``store``'s search.

Postings are compact ``array`` buffers per term (8 + 4 bytes per posting, not a dict entry
of ~100 bytes), read as numpy views at query time, so a query costs time in proportion to
the postings of its terms, never a scan of every chunk. A term's scores are cached until
the next change (common words recur in queries), which drops the cache. Removal leaves a
tombstone; the postings are compacted once the dead outnumber the living, and released
whole once none live. Not thread-safe: ``store`` holds its lock around every call. Words
come from ``analysis.tokenize``.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Sequence

import numpy as np

K1 = 1.5
B = 0.75
_UNUSED, _ALIVE, _REMOVED = 0, 1, 2
_COMPACT_MIN_DEAD = 1024
_CACHE_POSTINGS = 4_000_000  # cached (key, score) pairs: at most 64 MB
# A term in at least this share of the keys ("the", "of") is also cached spread over every
# key: adding a dense array is several times faster than a scatter-add of that many
# postings, and gives the same sums (the keys it lacks add an exact 0.0).
_SPREAD_MIN_SHARE = 0.125


class BM25:
    """Documents are integer keys chosen by the caller; a key is never reused."""

    def __init__(self, k1: float = K1, b: float = B) -> None:
        self.k1 = k1
        self.b = b
        self._postings: dict[str, tuple[array[int], array[int]]] = {}
        self._state = np.zeros(1024, dtype=np.int8)
        self._length = np.zeros(1024, dtype=np.float64)
        self._high = 0  # one past the largest key seen
        self._live = 0
        self._dead = 0
        self._total_length = 0.0
        self._version = 0  # bumped by every change; cached term scores of older ones are stale
        self._cache: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
        self._spread: dict[str, np.ndarray] = {}  # common terms' scores by key, this version
        self._cached_size = 0

    def __len__(self) -> int:
        return self._live

    def __contains__(self, key: int) -> bool:
        return 0 <= key < self._high and self._state[key] == _ALIVE

    def _grow(self, key: int) -> None:
        size = len(self._state)
        while key >= size:
            size *= 2
        if size != len(self._state):
            self._state = np.concatenate([self._state, np.zeros(size - len(self._state), np.int8)])
            self._length = np.concatenate([self._length, np.zeros(size - len(self._length))])

    def _changed(self) -> None:
        """Every cached term score is stale now: drop them (stale entries only hold memory)."""
        self._version += 1
        if self._cache or self._spread:
            self._cache = {}
            self._spread = {}
            self._cached_size = 0

    def add(self, key: int, words: Sequence[str]) -> None:
        if key < 0 or (key < self._high and self._state[key] != _UNUSED):
            raise ValueError(f"BM25 key {key} was already used")
        self._grow(key)
        self._changed()
        self._state[key] = _ALIVE
        self._length[key] = len(words)
        self._high = max(self._high, key + 1)
        self._live += 1
        self._total_length += len(words)
        postings = self._postings
        for term, tf in Counter(words).items():
            found = postings.get(term)
            if found is None:
                found = postings[term] = (array("q"), array("i"))
            found[0].append(key)
            found[1].append(tf)

    def remove(self, key: int) -> None:
        self.remove_many([key])

    def remove_many(self, keys: Sequence[int]) -> None:
        """Remove every key (all must be present), then compact once if worth it."""
        for key in keys:
            if key not in self:
                raise KeyError(key)
            self._state[key] = _REMOVED
            self._live -= 1
            self._dead += 1
            self._total_length -= self._length[key]
        self._changed()
        if not self._live:
            self._postings = {}  # nothing lives: release every posting at once
            self._dead = 0
            self._total_length = 0.0
        elif self._dead > max(self._live, _COMPACT_MIN_DEAD):
            self._compact()

    @property
    def posting_count(self) -> int:
        """Postings held, the dead awaiting compaction included (what memory holds)."""
        return sum(len(keys) for keys, _ in self._postings.values())

    def _compact(self) -> None:
        alive = self._state == _ALIVE
        kept: dict[str, tuple[array[int], array[int]]] = {}
        for term, (keys, tfs) in self._postings.items():
            k = np.frombuffer(keys, dtype=np.int64)
            mask = alive[k]
            if mask.any():
                t = np.frombuffer(tfs, dtype=np.int32)
                kept[term] = (array("q", k[mask].tobytes()), array("i", t[mask].tobytes()))
        self._postings = kept
        self._dead = 0

    def _term(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(keys, BM25 contributions) of one term's live postings, cached until the next
        change: repeated words cost one scatter-add instead of six passes over postings."""
        cached = self._cache.get(term)
        if cached is not None and cached[0] == self._version:
            return cached[1], cached[2]
        found = self._postings.get(term)
        if found is None:
            return None
        keys = np.frombuffer(found[0], dtype=np.int64)
        tfs = np.frombuffer(found[1], dtype=np.int32)
        if self._dead:  # tombstones await compaction: skip their postings
            live = self._state[keys] == _ALIVE
            keys, tfs = keys[live], tfs[live]
        df = len(keys)
        if not df:
            return None
        # Lucene's idf: never negative, so a very common word still counts a little.
        idf = math.log(1.0 + (self._live - df + 0.5) / (df + 0.5))
        average = self._total_length / self._live
        tf = tfs.astype(np.float64)
        norm = self.k1 * (1.0 - self.b + self.b * self._length[keys] / average)
        contribution = idf * tf * (self.k1 + 1.0) / (tf + norm)
        keys = keys.copy()  # detach from the postings buffer, which later adds may resize
        if cached is not None:
            self._cached_size -= len(cached[1])
        if self._cached_size + df > _CACHE_POSTINGS:
            self._cache.clear()
            self._spread.clear()
            self._cached_size = 0
        self._cache[term] = (self._version, keys, contribution)
        self._cached_size += df
        return keys, contribution

    def _spread_scores(self, term: str, keys: np.ndarray, contribution: np.ndarray) -> np.ndarray:
        """A common term's contributions as one array over every key (0.0 where absent),
        cached with its postings' scores (``_term`` ran just before, in this version)."""
        spread = self._spread.get(term)
        if spread is None or len(spread) != self._high:
            if self._cached_size + self._high > _CACHE_POSTINGS:
                return np.bincount(keys, contribution, minlength=self._high)
            spread = np.zeros(self._high, dtype=np.float64)
            spread[keys] = contribution
            self._spread[term] = spread
            self._cached_size += self._high
        return spread

    def search(
        self, words: Sequence[str], n: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The ``n`` best (key, score) pairs, best first; only keys with ``allowed[key]``
        when a boolean mask is given. Documents sharing no word with the query never score."""
        if n <= 0 or not self._live:
            return []
        scores = np.zeros(self._high, dtype=np.float64)
        for term in dict.fromkeys(words):
            found = self._term(term)
            if found is None:
                continue
            keys, contribution = found
            if allowed is None and len(keys) >= _SPREAD_MIN_SHARE * self._high:
                scores += self._spread_scores(term, keys, contribution)
                continue
            if allowed is not None:
                mask = allowed[keys]
                keys, contribution = keys[mask], contribution[mask]
            scores[keys] += contribution
        # Scores are never negative. When at least n chunks scored, the n-th largest score is
        # the cut: the result is the chunks above it and the lowest keys of those tied at it.
        # Ties are broken by key, not by which of them a partition happens to pick (that
        # changes with numpy's version): deterministic, and equal to the Milvus store's
        # (index/milvus/queries.py orders ties the same way).
        scored = int(np.count_nonzero(scores))
        if scored <= n:
            hits = np.flatnonzero(scores)
        else:
            if scored * 2 > len(scores):
                # Common words score most chunks: partition them all in place of listing
                # the scored ones first (a partition slows down on many equal zeros).
                cut = np.partition(scores, len(scores) - n)[len(scores) - n]
            else:
                hits = np.flatnonzero(scores)
                cut = scores[hits[np.argpartition(-scores[hits], n - 1)[n - 1]]]
            above = np.flatnonzero(scores > cut)
            tied = np.flatnonzero(scores == cut)  # ascending keys
            hits = np.concatenate([above, tied[: n - len(above)]])
        order = np.lexsort((hits, -scores[hits]))  # by score, then key: deterministic ties
        return [(int(k), float(scores[k])) for k in hits[order]]
