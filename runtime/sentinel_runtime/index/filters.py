"""Which chunks a ``SearchFilter`` allows, as a boolean mask over ``store``'s chunk keys.

Source and timestamp are kept as numpy columns (a code per source, epoch seconds or NaN
for a chunk without a timestamp, which a time window excludes unless the filter says
``keep_undated``) so that a filtered search over 100k chunks costs a few vector operations,
not a Python loop; metadata equality is checked per document by ``metadata_matches``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np

from sentinel_runtime.index.types import SearchFilter

_NO_SOURCE = -1


def is_unconstrained(flt: SearchFilter | None) -> bool:
    return flt is None or (
        flt.sources is None
        and flt.not_before is None
        and flt.not_after is None
        and not flt.metadata
    )


def epoch(moment: datetime) -> float:
    """Seconds since the epoch; a naive datetime is read as UTC, like stored timestamps."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _same(a: Any, b: Any) -> bool:
    # JSON true is not the number 1, though Python's == says it is.
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def metadata_matches(metadata: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Every wanted key is present with an equal value."""
    return all(key in metadata and _same(metadata[key], value) for key, value in wanted.items())


class Columns:
    """Per chunk key: alive, source code, timestamp. Grows as keys grow."""

    def __init__(self) -> None:
        self.alive = np.zeros(1024, dtype=bool)
        self._source = np.full(1024, _NO_SOURCE, dtype=np.int32)
        self._stamp = np.full(1024, np.nan, dtype=np.float64)
        self._codes: dict[str, int] = {}

    def _grow(self, size: int) -> None:
        if size <= len(self.alive):
            return
        new = max(size, 2 * len(self.alive))
        pad = new - len(self.alive)
        self.alive = np.concatenate([self.alive, np.zeros(pad, dtype=bool)])
        self._source = np.concatenate([self._source, np.full(pad, _NO_SOURCE, dtype=np.int32)])
        self._stamp = np.concatenate([self._stamp, np.full(pad, np.nan)])

    def set(self, keys: np.ndarray, source: str | None, stamp: datetime | None) -> None:
        if not len(keys):
            return
        self._grow(int(keys.max()) + 1)
        self.alive[keys] = True
        code = _NO_SOURCE if source is None else self._codes.setdefault(source, len(self._codes))
        self._source[keys] = code
        self._stamp[keys] = math.nan if stamp is None else epoch(stamp)

    def clear(self, keys: np.ndarray) -> None:
        self.alive[keys] = False

    def mask(self, flt: SearchFilter) -> np.ndarray:
        """Alive chunks that pass the source allowlist and the time window."""
        mask = self.alive.copy()
        if flt.sources is not None:
            codes = [self._codes[s] for s in flt.sources if s in self._codes]
            mask &= np.isin(self._source, np.array(codes, dtype=np.int32))
        if flt.not_before is None and flt.not_after is None:
            return mask
        inside = np.ones_like(mask)
        # NaN compares false: inside the window means dated and within its bounds...
        with np.errstate(invalid="ignore"):
            if flt.not_before is not None:
                inside &= self._stamp >= epoch(flt.not_before)
            if flt.not_after is not None:
                inside &= self._stamp <= epoch(flt.not_after)
        if flt.keep_undated:  # ...or, when asked, without a timestamp at all
            inside |= np.isnan(self._stamp)
        return mask & inside
