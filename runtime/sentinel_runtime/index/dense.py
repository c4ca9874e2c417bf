"""Exact inner-product search over unit vectors: the dense half of ``store``.

FAISS holds the vectors and their keys (an ``IndexIDMap2`` over ``IndexFlatIP``, keyed by
the store's integer chunk keys; it also gives persistence its rows). A search is one BLAS
matrix-vector product over FAISS's own storage, read in place: for a single query that is
2-3 times faster than ``IndexFlatIP.search`` on our 2-core machines (FAISS does not use
BLAS below 20 queries, and its OpenMP threads stall under contention), and just as exact.
A filter with few allowed keys scores only their rows. Not thread-safe: ``store`` holds
its lock around every call.
"""

from __future__ import annotations

import faiss
import numpy as np

# Below this many allowed keys, gathering their rows beats scoring every vector.
DIRECT_MAX = 4096
# A removal that leaves at most half the rows, and frees at least this many, rebuilds the
# FAISS index: its storage (a std::vector) keeps its capacity when rows are removed.
SHRINK_MIN_ROWS = 1024


class DenseIndex:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._flat = faiss.IndexFlatIP(dim)
        self._index = faiss.IndexIDMap2(self._flat)
        self._row_of: np.ndarray | None = np.zeros(0, dtype=np.int64)  # None: rebuild
        self._keys: np.ndarray | None = None  # None: read again from FAISS

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        if len(keys) == 0:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (len(keys), self.dim):
            raise ValueError(
                f"vectors of shape {vectors.shape}, expected ({len(keys)}, {self.dim})"
            )
        start = len(self)
        self._index.add_with_ids(vectors, np.ascontiguousarray(keys, dtype=np.int64))
        self._keys = None
        if self._row_of is not None:
            self._row_of = self._grown(self._row_of, int(keys.max()) + 1)
            self._row_of[keys] = np.arange(start, start + len(keys))

    def remove(self, keys: np.ndarray) -> None:
        if len(keys):
            before = len(self)
            self._index.remove_ids(np.ascontiguousarray(keys, dtype=np.int64))
            self._row_of = None  # FAISS compacts the rows of the flat index
            self._keys = None
            if before - len(self) >= SHRINK_MIN_ROWS and len(self) <= before // 2:
                self._rebuild()

    def _rebuild(self) -> None:
        """The rows left, in a fresh FAISS index sized to them (the old one's memory goes)."""
        keys, vectors = self.keys().copy(), self.vectors().copy()
        self._flat = faiss.IndexFlatIP(self.dim)
        self._index = faiss.IndexIDMap2(self._flat)
        self._keys = None
        if len(keys):
            self._index.add_with_ids(vectors, keys)

    @staticmethod
    def _grown(row_of: np.ndarray, size: int) -> np.ndarray:
        if size <= len(row_of):
            return row_of
        grown = np.full(max(size, 2 * len(row_of)), -1, dtype=np.int64)
        grown[: len(row_of)] = row_of
        return grown

    def _rows(self) -> np.ndarray:
        if self._row_of is None:
            keys = self.keys()
            row_of = np.full(int(keys.max()) + 1 if len(keys) else 0, -1, dtype=np.int64)
            row_of[keys] = np.arange(len(keys))
            self._row_of = row_of
        return self._row_of

    def keys(self) -> np.ndarray:
        """The keys in row order."""
        if self._keys is None:
            self._keys = faiss.vector_to_array(self._index.id_map).astype(np.int64)
        return self._keys

    def vectors(self) -> np.ndarray:
        """A view of the stored rows (valid until the next add or remove)."""
        n = len(self)
        if not n:
            return np.zeros((0, self.dim), dtype=np.float32)
        return faiss.rev_swig_ptr(self._flat.get_xb(), n * self.dim).reshape(n, self.dim)

    def vectors_of(self, keys: np.ndarray) -> np.ndarray:
        """A copy of the rows of ``keys`` (all must be present)."""
        if not len(keys):
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.vectors()[self._rows()[keys]]

    def similarity(self, query: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Inner products of ``query`` with the rows of ``keys`` (all must be present)."""
        if not len(keys):
            return np.zeros(0, dtype=np.float32)
        return self.vectors()[self._rows()[keys]] @ query

    def search(
        self, query: np.ndarray, n: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``n`` nearest (keys, scores), best first, among ``allowed`` keys when given;
        equal scores in key order."""
        if allowed is None:
            keys, scores = self.keys(), self.vectors() @ query
        elif len(allowed) <= DIRECT_MAX:
            keys, scores = allowed, self.similarity(query, allowed)
        else:
            keys, scores = allowed, (self.vectors() @ query)[self._rows()[allowed]]
        n = min(n, len(keys))
        if n <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        top = np.argpartition(-scores, n - 1)[:n] if n < len(keys) else np.arange(n)
        order = top[np.lexsort((keys[top], -scores[top]))]
        return keys[order], scores[order]
