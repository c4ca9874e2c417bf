"""Documents as Milvus rows, and back: one row per chunk, carrying the chunk's text, its
words for BM25 (``analysis.tokenize``), the whitespace around it (so the document's text
can be rebuilt), its vector, and the digests that filters match (``schema``).

``store`` writes and reads rows with these; nothing here calls Milvus.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from sentinel_runtime.index import analysis, chunking, filters
from sentinel_runtime.index.milvus import schema
from sentinel_runtime.index.timestamps import parse_timestamp
from sentinel_runtime.index.types import Chunk, Document

BATCH_ROWS = 1000
BATCH_BYTES = 16 * 2**20


def utf8(value: str) -> int:
    return len(value.encode())


def fit(value: str) -> str:
    """``value`` cut to a VARCHAR's bytes (lower-casing can lengthen a chunk's words)."""
    encoded = value.encode()
    if len(encoded) <= schema.MAX_VARCHAR_BYTES:
        return value
    return encoded[: schema.MAX_VARCHAR_BYTES].decode(errors="ignore")


def check(doc: Document, spans: list[chunking.Span]) -> None:
    """Raise ``ValueError`` when a document does not fit the collection's fields."""
    if len(doc.metadata) > schema.MAX_METADATA_KEYS:
        raise ValueError(
            f"document {doc.doc_id!r}: at most {schema.MAX_METADATA_KEYS} metadata keys "
            "on the Milvus store"
        )
    previous = 0
    pieces = []
    for start, end in spans:
        pieces += [("a chunk (one unbreakable word)", start, end), ("a space", previous, start)]
        previous = end
    pieces.append(("the trailing space", previous, len(doc.text)))
    for what, start, end in pieces:
        if utf8(doc.text[start:end]) > schema.MAX_VARCHAR_BYTES:
            raise ValueError(
                f"document {doc.doc_id!r}: {what} at characters {start}-{end} is longer "
                f"than the Milvus store holds in one field ({schema.MAX_VARCHAR_BYTES} UTF-8 "
                "bytes)"
            )


def encode(
    doc: Document, spans: list[chunking.Span], vectors: np.ndarray, seq: int
) -> list[dict[str, Any]]:
    """The rows of ``doc``'s chunks, listed at ``seq``."""
    metadata = dict(doc.metadata)
    source = metadata.get("source")
    stamp = parse_timestamp(metadata.get("timestamp"))
    meta_keys = [
        token for name, value in metadata.items() if (token := schema.metadata_key(name, value))
    ]
    common = {
        "doc_key": schema.key(doc.doc_id),
        "doc_id": doc.doc_id,
        "seq": seq,
        "chunks": len(spans),
        "source_key": schema.key(str(source)) if source is not None else "",
        "stamp": filters.epoch(stamp) if stamp is not None else 0.0,
        "has_stamp": stamp is not None,
        "meta_keys": meta_keys,
        "metadata": metadata,
    }
    out, previous = [], 0
    for position, (start, end) in enumerate(spans):
        text = doc.text[start:end]
        last = position == len(spans) - 1
        out.append(
            common
            | {
                "pk": schema.key(chunking.chunk_id(doc.doc_id, position)),
                "position": position,
                "text": text,
                "words": fit(" ".join(analysis.tokenize(text))),
                "gap": doc.text[previous:start],
                "tail": doc.text[end:] if last else "",
                "dense": np.asarray(vectors[position], dtype=np.float32).tolist(),
            }
        )
        previous = end
    return out


def batches(rows: Sequence[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """Rows in batches of at most ``BATCH_ROWS`` rows and about ``BATCH_BYTES`` bytes."""
    batch: list[dict[str, Any]] = []
    size = 0
    for row in rows:
        row_size = 4 * len(row["dense"]) + 3 * utf8(row["text"]) + 256
        if batch and (len(batch) >= BATCH_ROWS or size + row_size > BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(row)
        size += row_size
    if batch:
        yield batch


def decode_document(rows: list[dict[str, Any]]) -> Document:
    """The document of its chunks' rows (``schema.DOC_FIELDS``), in any order."""
    rows = sorted(rows, key=lambda r: int(r["position"]))
    text = "".join(r["gap"] + r["text"] for r in rows) + rows[-1]["tail"]
    return Document(rows[0]["doc_id"], text, MappingProxyType(dict(rows[0]["metadata"])))


def decode_chunk(entity: Mapping[str, Any]) -> Chunk:
    """The chunk of a row (``schema.HIT_FIELDS``)."""
    doc_id, position = entity["doc_id"], int(entity["position"])
    return Chunk(
        chunking.chunk_id(doc_id, position),
        doc_id,
        position,
        entity["text"],
        MappingProxyType(dict(entity["metadata"])),
    )
