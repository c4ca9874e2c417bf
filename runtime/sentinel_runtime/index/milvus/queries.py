"""What ``store`` asks Milvus, and how it reads the answers: filter expressions, the limits
of one query, and the fusion of Milvus's dense and BM25 candidates into ranked hits.

Filters run inside Milvus, before ranking, as boolean expressions: the source allowlist
(``source_key in [...]``), the time window (``has_stamp == true and stamp >= t``, or
``has_stamp == false or (...)`` when undated rows pass it) and metadata equality
(``array_contains_all(meta_keys, [...])``). Everything user-written
reaches an expression only as a digest (``schema.key``), so no quoting or escaping rule of
Milvus's expression language applies to user text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from sentinel_runtime.index import base, filters
from sentinel_runtime.index.milvus import codec, schema
from sentinel_runtime.index.types import Chunk, Hit, SearchFilter

MAX_LIMIT = 16_384  # Milvus's largest topk and query window
KEYS_PER_EXPRESSION = 1000
SCAN_BATCH = 4096

T = TypeVar("T")


def slices(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """``items`` in consecutive slices of at most ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def keys(found: Iterable[str]) -> str:
    """A list literal of digests (hex digits only: nothing to escape)."""
    return "[" + ", ".join(f'"{k}"' for k in found) + "]"


def metadata_expression(wanted: Mapping[str, Any]) -> str | None:
    """The rows whose metadata holds every ``name: value`` of ``wanted``; None when no
    document can hold one of the values."""
    tokens = [schema.metadata_key(name, value) for name, value in wanted.items()]
    if any(t is None for t in tokens):
        return None
    return f"array_contains_all(meta_keys, {keys(t for t in tokens if t)})"


def expression(flt: SearchFilter | None) -> str | None:
    """The Milvus filter of ``flt`` ("" allows all); None when nothing can match."""
    if filters.is_unconstrained(flt):
        return ""
    assert flt is not None
    parts = []
    if flt.sources is not None:
        if not flt.sources:
            return None
        parts.append(f"source_key in {keys(schema.key(s) for s in flt.sources)}")
    window = _window_expression(flt)
    if window:
        parts.append(window)
    if flt.metadata:
        matches = metadata_expression(flt.metadata)
        if matches is None:
            return None
        parts.append(matches)
    return " and ".join(f"({p})" for p in parts)


def _window_expression(flt: SearchFilter) -> str:
    """The time window: dated rows within its bounds, and undated rows too with
    ``keep_undated`` ("" when ``flt`` sets no bound). The embedded store's ``Columns.mask``
    reads the same rows."""
    bounds = []
    if flt.not_before is not None:
        bounds.append(f"stamp >= {filters.epoch(flt.not_before)!r}")
    if flt.not_after is not None:
        bounds.append(f"stamp <= {filters.epoch(flt.not_after)!r}")
    if not bounds:
        return ""
    dated = " and ".join(["has_stamp == true", *bounds])
    return f"has_stamp == false or ({dated})" if flt.keep_undated else dated


def _candidate_order(hit: Mapping[str, Any]) -> tuple[float, int, int]:
    entity = hit["entity"]
    return (-float(hit["distance"]), int(entity["seq"]), int(entity["position"]))


def rank(
    dense: list[dict[str, Any]], lexical: list[dict[str, Any]], vector: np.ndarray, top_k: int
) -> list[Hit]:
    """The ``top_k`` hits of Milvus's dense and BM25 candidates, fused by ``base.fuse``
    (the pipeline needs each hit's dense similarity and BM25 score, which Milvus's
    ``hybrid_search`` folds into one number). A lexical candidate the dense search missed
    gets its similarity from its stored vector."""
    # Equal scores in insertion order, as the embedded store ranks them.
    dense = sorted(dense, key=_candidate_order)
    lexical = sorted(lexical, key=_candidate_order)
    chunks: dict[str, Chunk] = {}
    similarity: dict[str, float] = {}
    bm25: dict[str, float] = {}
    for hit in dense:
        chunks[hit["id"]] = codec.decode_chunk(hit["entity"])
        similarity[hit["id"]] = float(hit["distance"])
    for hit in lexical:
        bm25[hit["id"]] = float(hit["distance"])
        if hit["id"] not in chunks:
            chunks[hit["id"]] = codec.decode_chunk(hit["entity"])
            row = np.asarray(hit["entity"]["dense"], dtype=np.float32)
            similarity[hit["id"]] = float(row @ vector)
    fused = base.fuse([h["id"] for h in dense], [h["id"] for h in lexical])
    order = sorted(fused, key=lambda pk: (-fused[pk], -similarity[pk], chunks[pk].chunk_id))[:top_k]
    return [
        Hit(
            chunk=chunks[pk],
            score=fused[pk],
            similarity=min(max(similarity[pk], 0.0), 1.0),
            lexical=bm25.get(pk, 0.0),
            rank=place,
        )
        for place, pk in enumerate(order)
    ]
