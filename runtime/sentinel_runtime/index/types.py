"""Plain data shared by the index and its users: documents, chunks, filters, hits."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sentinel_runtime.index.timestamps import parse_timestamp


@dataclass(frozen=True)
class Document:
    """A user document. ``metadata`` may carry ``source`` and ``timestamp`` (ISO 8601)."""

    doc_id: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Chunk:
    """A retrievable piece of a document; ``chunk_id`` is ``f"{doc_id}#p{position}"``."""

    chunk_id: str
    doc_id: str
    position: int
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    # An ingest screen found nothing to act on in the text (``screening``); False: unknown.
    quiet: bool = field(default=False, compare=False)

    @property
    def source(self) -> str | None:
        value = self.metadata.get("source")
        return str(value) if value is not None else None

    @functools.cached_property
    def timestamp(self) -> datetime | None:
        """The document's timestamp (timezone-aware, UTC when none given), or None.

        Parsed once per chunk: quality signals, staleness and the API all read it."""
        return parse_timestamp(self.metadata.get("timestamp"))


@dataclass(frozen=True)
class SearchFilter:
    """Constraints a search must honour (the gate's Restrict plans use all of them)."""

    sources: tuple[str, ...] | None = None  # allowlist on metadata["source"]; None = any
    not_before: datetime | None = None  # documents with an older timestamp are excluded
    not_after: datetime | None = None  # documents with a newer timestamp are excluded
    metadata: Mapping[str, Any] = field(default_factory=dict)  # equality on metadata keys
    # With a time window (either bound), whether documents without a (readable) timestamp
    # pass it: False excludes them (a window over dated documents); True keeps them, since
    # nothing says they are outdated (the gate's restricted window, see pipeline.runner).
    keep_undated: bool = False


@dataclass(frozen=True)
class Hit:
    """One search result. ``similarity`` is the dense cosine similarity clamped to [0, 1]."""

    chunk: Chunk
    score: float  # the fused (reciprocal rank fusion) score that ordered the results
    similarity: float
    lexical: float  # BM25 score, 0 when the chunk was not a lexical hit
    rank: int  # 0-based position in the results
