"""Retrieval quality signals of the RAG MVP contract (docs/contracts.md): confidence and
freshness of what was retrieved.

Pure: hits and a clock in, a JSON-ready mapping out. ``similarity`` is the dense cosine
similarity of each hit, so the signals mean the same whatever fused the ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from statistics import fmean
from typing import Any

from sentinel_runtime.index.types import Hit

DEFAULT_FRESHNESS_DAYS = 90


def confidence(hits: Sequence[Hit]) -> dict[str, Any]:
    scores = sorted((h.similarity for h in hits), reverse=True)
    return {
        "max": round(scores[0], 4) if scores else 0.0,
        "mean": round(fmean(scores), 4) if scores else 0.0,
        "gap": round(scores[0] - scores[1], 4) if len(scores) > 1 else None,
        "hit_count": len(scores),
    }


def freshness(hits: Sequence[Hit], now: datetime, days: int) -> dict[str, Any]:
    stamps = [h.chunk.timestamp for h in hits]
    known = [s for s in stamps if s is not None]
    threshold = now - timedelta(days=days)
    violations = sum(1 for s in known if s < threshold)
    return {
        "oldest_timestamp": min(known).isoformat() if known else None,
        "newest_timestamp": max(known).isoformat() if known else None,
        "freshness_violation_count": violations,
        "freshness_violation": violations > 0,
        "freshness_days": days,
        "undated_count": len(stamps) - len(known),
    }


def retrieval_quality(
    hits: Sequence[Hit], now: datetime, days: int = DEFAULT_FRESHNESS_DAYS
) -> dict[str, Any]:
    return {
        "confidence": confidence(hits),
        "freshness": freshness(hits, now, days),
        "top_doc_ids": [h.chunk.doc_id for h in hits],
        "top_timestamps": [
            ts.isoformat() if (ts := h.chunk.timestamp) is not None else None for h in hits
        ],
    }
