"""Seed 004's retrieval quality signals."""

from __future__ import annotations

from datetime import UTC, datetime

from sentinel_runtime.pipeline.evidence.quality import retrieval_quality
from support.hits import hit

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def test_confidence_and_freshness() -> None:
    hits = [
        hit("a#p0", "x", rank=0, similarity=0.9, timestamp="2026-10-20T00:00:00Z"),
        hit("b#p0", "y", rank=1, similarity=0.6, timestamp="2024-01-01"),
        hit("c#p0", "z", rank=2, similarity=0.3),
    ]
    signals = retrieval_quality(hits, NOW, days=90)
    assert signals["confidence"] == {"max": 0.9, "mean": 0.6, "gap": 0.3, "hit_count": 3}
    fresh = signals["freshness"]
    assert fresh["freshness_violation_count"] == 1 and fresh["freshness_violation"] is True
    assert fresh["oldest_timestamp"].startswith("2024-01-01")
    assert fresh["newest_timestamp"].startswith("2026-10-20")
    assert fresh["undated_count"] == 1 and fresh["freshness_days"] == 90
    assert signals["top_doc_ids"] == ["a", "b", "c"]
    assert signals["top_timestamps"][2] is None


def test_single_hit_has_no_gap_and_empty_has_zeroes() -> None:
    assert retrieval_quality([hit("a#p0", "x")], NOW)["confidence"]["gap"] is None
    empty = retrieval_quality([], NOW)
    assert empty["confidence"] == {"max": 0.0, "mean": 0.0, "gap": None, "hit_count": 0}
    assert empty["freshness"]["freshness_violation"] is False
