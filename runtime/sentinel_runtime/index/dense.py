"""Exact inner-product search over unit vectors: the dense half of ``store``.

FAISS holds the vectors and their keys (an ``IndexIDMap2`` over ``IndexFlatIP``, keyed by
the store's integer chunk keys; it also gives persistence its rows). A search is one BLAS
matrix-vector product over FAISS's own storage, read in place: for a single query that is
2-3 times faster than ``IndexFlatIP.search`` on our 2-core machines (FAISS does not use
BLAS below 20 queries, and its OpenMP threads stall under contention), and just as exact.
A filter with few allowed keys scores only their rows.

A query with few non-zero components (the hashing embedder's: about 40 of 384 for a question
of a few words) is scored from a column-major copy of the vectors instead, reading only the
columns where the query is non-zero: about a tenth of the memory traffic of the full scan,
which is what bounds it (150 MB per query at 100k chunks). The products left out are exact
zeros, so the scores are those of the full scan up to float rounding. The copy costs as much
memory as the vectors themselves, so it is built on the first such query, not before: a
store whose embedder writes dense query vectors never holds one. Not thread-safe: ``store``
holds its lock around every call.
"""

from __future__ import annotations

import faiss
import numpy as np

# Below this many allowed keys, gathering their rows beats scoring every vector.
DIRECT_MAX = 4096
# A removal that leaves at most half the rows, and frees at least this many, rebuilds the
# FAISS index: its storage (a std::vector) keeps its capacity when rows are removed.
SHRINK_MIN_ROWS = 1024
# A query with at most this share of non-zero components is scored column by column: above
# it, reading the chosen columns costs about what the row-major scan does.
SPARSE_MAX_SHARE = 0.5
# Columns are gathered and multiplied this many bytes at a time: the block stays in cache
# between the gather and the product, so the chosen columns cross the memory bus once.
BLOCK_BYTES = 1 << 21
# The column-major copy grows by at least this factor, so adds cost amortised O(rows added).
GROWTH = 1.5


class DenseIndex:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._flat = faiss.IndexFlatIP(dim)
        self._index = faiss.IndexIDMap2(self._flat)
        self._row_of: np.ndarray | None = np.zeros(0, dtype=np.int64)  # None: rebuild
        self._keys: np.ndarray | None = None  # None: read again from FAISS
        # The rows as columns, (dim, capacity) with len(self) used; None until a sparse query.
        self._columns: np.ndarray | None = None

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
        if self._columns is not None:
            self._append_columns(start, vectors)
        if self._row_of is not None:
            self._row_of = self._grown(self._row_of, int(keys.max()) + 1)
            self._row_of[keys] = np.arange(start, start + len(keys))

    def remove(self, keys: np.ndarray) -> None:
        if len(keys):
            before = len(self)
            kept = self._kept_rows(keys) if self._columns is not None else None
            self._index.remove_ids(np.ascontiguousarray(keys, dtype=np.int64))
            self._row_of = None  # FAISS compacts the rows of the flat index
            self._keys = None
            if before - len(self) >= SHRINK_MIN_ROWS and len(self) <= before // 2:
                self._rebuild()
            elif kept is not None:
                self._compact_columns(kept)

    def _rebuild(self) -> None:
        """The rows left, in a fresh FAISS index sized to them (the old one's memory goes)."""
        keys, vectors = self.keys().copy(), self.vectors().copy()
        self._flat = faiss.IndexFlatIP(self.dim)
        self._index = faiss.IndexIDMap2(self._flat)
        self._keys = None
        self._columns = None  # built again, to the new size, by the next sparse query
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
        equal scores in key order (also at the cut: the lowest keys of those tied there)."""
        if allowed is not None and len(allowed) <= DIRECT_MAX:
            keys, scores = allowed, self.similarity(query, allowed)
        elif self._sparse(query):
            keys, scores = self._shortlist(query, n, allowed)
        else:
            keys, scores = self.keys(), self.vectors() @ query
            if allowed is not None:
                keys, scores = allowed, scores[self._rows()[allowed]]
        return _best(keys, scores, n)

    def _sparse(self, query: np.ndarray) -> bool:
        """Whether to shortlist with the column scan (a zero query, all of whose scores
        tie, takes the plain product: a shortlist would be every row)."""
        used = np.count_nonzero(query)
        return bool(len(self)) and 0 < used <= SPARSE_MAX_SHARE * self.dim

    def _shortlist(
        self, query: np.ndarray, n: int, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Keys holding the ``n`` best of ``allowed`` (all keys when None), with the scores
        ``similarity`` gives them.

        The column scan sums the products in another order than the row-major product, so
        its scores may differ from those in the last bits: enough to reorder chunks whose
        scores are equal (a question matching several chunks on the same words), which the
        filtered search, reading rows, orders by key. So the scan only shortlists: every
        row within ``_margin`` of the n-th best scan score, which holds the n best rows by
        the row-major scores, then scored the row-major way."""
        keys = self.keys() if allowed is None else allowed
        approx = self._scan(query)
        if allowed is not None:
            approx = approx[self._rows()[allowed]]
        if n < len(keys):
            cut = np.partition(approx, len(approx) - n)[len(approx) - n]
            keys = keys[approx >= cut - self._margin(query)]
        return keys, self.similarity(query, keys)

    def _margin(self, query: np.ndarray) -> float:
        """Twice the largest difference between two float32 sums of d products of a row with
        ``query`` (each within d * 2^-24 * |q| |row| of the exact value; rows have unit
        length, the ``Embedder`` contract)."""
        return 4.0 * self.dim * 2.0**-24 * float(np.linalg.norm(query))

    # -- the column-major copy, for sparse queries -------------------------------------------

    def _scan(self, query: np.ndarray) -> np.ndarray:
        """Inner products of a sparse ``query`` with every row, in row order, from the
        columns of its non-zero components (equal to the row-major product up to rounding)."""
        n = len(self)
        used = np.flatnonzero(query)
        columns = self._column_copy()
        weights = np.ascontiguousarray(query[used], dtype=np.float32)
        scores = np.zeros(n, dtype=np.float32)
        if not len(used):
            return scores
        block = max(1024, BLOCK_BYTES // (4 * len(used)))
        for start in range(0, n, block):
            end = min(n, start + block)
            # A (used, block) gather: contiguous runs of each chosen column, then one product.
            # einsum, not BLAS: OpenBLAS splits a product this size over threads that then
            # spin, waiting for more work, on cores the rest of the request needs.
            np.einsum("i,ij->j", weights, columns[used, start:end], out=scores[start:end])
        return scores

    def _column_copy(self) -> np.ndarray:
        if self._columns is None:
            n = len(self)
            columns = np.empty((self.dim, n), dtype=np.float32)
            rows = self.vectors()
            step = max(1, BLOCK_BYTES // (4 * self.dim))
            for start in range(0, n, step):  # in blocks: no second full-size temporary
                columns[:, start : start + step] = rows[start : start + step].T
            self._columns = columns
        return self._columns

    def _append_columns(self, start: int, vectors: np.ndarray) -> None:
        assert self._columns is not None
        end = start + len(vectors)
        capacity = self._columns.shape[1]
        if end > capacity:
            grown = np.empty((self.dim, max(end, int(capacity * GROWTH))), dtype=np.float32)
            grown[:, :start] = self._columns[:, :start]
            self._columns = grown
        self._columns[:, start:end] = vectors.T

    def _kept_rows(self, keys: np.ndarray) -> np.ndarray:
        """Which rows survive removing ``keys`` (those present), in row order."""
        kept = np.ones(len(self), dtype=bool)
        row_of = self._rows()
        keys = keys[(keys >= 0) & (keys < len(row_of))]
        rows = row_of[keys]
        kept[rows[rows >= 0]] = False
        return kept

    def _compact_columns(self, kept: np.ndarray) -> None:
        """Drop the removed rows' columns in place, as FAISS compacts its rows (order kept)."""
        assert self._columns is not None
        n = len(self)
        if not n:
            self._columns = None
            return
        columns = self._columns
        step = max(1, BLOCK_BYTES // (4 * len(kept)))
        for start in range(0, self.dim, step):  # a few dimensions at a time: small temporaries
            part = columns[start : start + step]
            part[:, :n] = part[:, : len(kept)][:, kept]


def _best(keys: np.ndarray, scores: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` best (keys, scores) by score, then key: ties at the cut keep the lowest
    keys, so a shortlist and the whole set give the same answer."""
    n = min(n, len(keys))
    if n <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    if n < len(keys):
        cut = np.partition(scores, len(scores) - n)[len(scores) - n]
        above = np.flatnonzero(scores > cut)
        tied = np.flatnonzero(scores == cut)
        tied = tied[np.argsort(keys[tied], kind="stable")[: n - len(above)]]
        top = np.concatenate([above, tied])
    else:
        top = np.arange(n)
    order = top[np.lexsort((keys[top], -scores[top]))]
    return keys[order], scores[order]
