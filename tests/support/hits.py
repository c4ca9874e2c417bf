"""Small builders of index hits for pipeline tests (plain data, no index needed)."""

from __future__ import annotations

from typing import Any

from sentinel_runtime.index.types import Chunk, Hit


def hit(chunk_id: str, text: str, *, rank: int = 0, similarity: float = 0.8, **meta: Any) -> Hit:
    doc_id = chunk_id.split("#", 1)[0]
    chunk = Chunk(chunk_id=chunk_id, doc_id=doc_id, position=0, text=text, metadata=meta)
    return Hit(chunk=chunk, score=1.0 / (60 + rank), similarity=similarity, lexical=0.0, rank=rank)
