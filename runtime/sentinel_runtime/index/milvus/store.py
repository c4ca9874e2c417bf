"""``MilvusStore``: one index in one Milvus collection (``base.Store``). Reads, listings,
writes and searches, as calls on Milvus; the rows are ``codec``'s, the expressions and the
ranking ``queries``'.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sentinel_runtime.index import analysis, base, chunking, persistence
from sentinel_runtime.index.base import VectorDBError
from sentinel_runtime.index.embedders import Embedder
from sentinel_runtime.index.milvus import codec, connection, queries, schema
from sentinel_runtime.index.types import Chunk, Document, Hit, SearchFilter


@dataclass(frozen=True)
class _Head:
    """What Milvus holds of a document, from its first chunk's row."""

    doc_id: str
    seq: int
    chunks: int


class Clock:
    """Listing order: nanoseconds since the epoch, strictly increasing in this process
    (across runtimes, documents list in the order their writers' clocks give)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def take(self, n: int) -> int:
        with self._lock:
            first = max(time.time_ns(), self._last + 1)
            self._last = first + n - 1
            return first


class MilvusStore:
    """One index in one Milvus collection (``base.Store``)."""

    def __init__(
        self,
        client: Any,
        collection: str,
        name: str,
        embedder: Embedder,
        *,
        max_chars: int = chunking.DEFAULT_MAX_CHARS,
        clock: Clock | None = None,
        describe_error: Callable[[Exception], Exception] | None = None,
    ) -> None:
        self.client = client
        self.collection = collection
        self.name = name
        self.embedder = embedder
        self.max_chars = max_chars
        self._clock = clock or Clock()
        self._write_lock = threading.Lock()
        self._describe_error = describe_error or (lambda exc: VectorDBError(str(exc)))

    # -- Milvus calls ----------------------------------------------------------------------

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return connection.call(
            self.client,
            method,
            self.collection,
            *args,
            describe=self._describe_error,
            index=self.name,
            **kwargs,
        )

    def _count(self, expression: str) -> int:
        rows = self._call("query", filter=expression, output_fields=["count(*)"])
        return int(rows[0]["count(*)"]) if rows else 0

    def _scan(self, expression: str, fields: list[str]) -> list[dict[str, Any]]:
        """Every row ``expression`` selects: one query, or an iterator beyond the 16,384
        rows a query returns."""
        rows: list[dict[str, Any]] = self._call(
            "query", filter=expression, output_fields=fields, limit=queries.MAX_LIMIT
        )
        if len(rows) < queries.MAX_LIMIT:
            return rows
        iterator = self._call(
            "query_iterator",
            batch_size=queries.SCAN_BATCH,
            filter=expression,
            output_fields=fields,
        )
        rows = []
        try:
            while batch := iterator.next():
                rows.extend(batch)
        finally:
            iterator.close()
        return rows

    def _rows_of(
        self, doc_keys: Sequence[str], fields: list[str], extra: str = ""
    ) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for part in queries.slices(list(dict.fromkeys(doc_keys)), queries.KEYS_PER_EXPRESSION):
            rows.extend(self._scan(f"doc_key in {queries.keys(part)}{extra}", fields))
        return rows

    @property
    def document_count(self) -> int:
        return self._count("position == 0")

    @property
    def chunk_count(self) -> int:
        return self._count("")

    @property
    def in_process(self) -> bool:
        """Never: every search is a call to Milvus."""
        return False

    # -- documents -------------------------------------------------------------------------

    def _current(self, doc_ids: Iterable[str]) -> dict[str, _Head]:
        """The first-chunk rows of the documents that exist, by doc_id."""
        wanted = {schema.key(d): d for d in doc_ids}
        rows = self._rows_of(
            list(wanted), ["doc_key", "doc_id", "seq", "chunks"], " and position == 0"
        )
        return {
            row["doc_id"]: _Head(row["doc_id"], int(row["seq"]), int(row["chunks"]))
            for row in rows
            if wanted.get(row["doc_key"]) == row["doc_id"]
        }

    def _documents(self, doc_ids: Iterable[str]) -> dict[str, Document]:
        wanted = {schema.key(d): d for d in doc_ids}
        grouped: dict[str, list[dict[str, Any]]] = {}
        for row in self._rows_of(list(wanted), schema.DOC_FIELDS):
            if wanted.get(row["doc_key"]) == row["doc_id"]:
                grouped.setdefault(row["doc_id"], []).append(row)
        return {doc_id: codec.decode_document(rows) for doc_id, rows in grouped.items()}

    def get_document(self, doc_id: str) -> Document | None:
        return self._documents([doc_id]).get(doc_id)

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        rows = self._call("get", ids=[schema.key(chunk_id)], output_fields=schema.HIT_FIELDS)
        for row in rows:
            chunk = codec.decode_chunk(row)
            if chunk.chunk_id == chunk_id:
                return chunk
        return None

    def list_documents(
        self, offset: int = 0, limit: int = 10, metadata_filter: Mapping[str, Any] | None = None
    ) -> tuple[list[Document], int]:
        if offset < 0 or limit < 0:
            raise ValueError("offset and limit must not be negative")
        expression = "position == 0"
        if metadata_filter:
            matches = queries.metadata_expression(metadata_filter)
            if matches is None:
                return [], 0
            expression += f" and {matches}"
        heads = self._scan(expression, ["doc_id", "seq"])
        heads.sort(key=lambda r: (int(r["seq"]), r["doc_id"]))
        page = [r["doc_id"] for r in heads[offset : offset + limit]]
        found = self._documents(page)
        return [found[d] for d in page if d in found], len(heads)

    # -- writing ---------------------------------------------------------------------------

    def _prepare(self, documents: list[Document]) -> list[tuple[Document, list, np.ndarray]]:
        """Chunk and embed everything before any change: a failure changes nothing."""
        spans = [chunking.split_spans(doc.text, self.max_chars) for doc in documents]
        for doc, sp in zip(documents, spans, strict=True):
            codec.check(doc, sp)
        texts = [doc.text[s:e] for doc, sp in zip(documents, spans, strict=True) for s, e in sp]
        vectors = self.embedder.embed(texts) if texts else np.zeros((0, self.embedder.dim))
        bounds = np.cumsum([0, *map(len, spans)])
        return [
            (doc, sp, vectors[bounds[i] : bounds[i + 1]])
            for i, (doc, sp) in enumerate(zip(documents, spans, strict=True))
        ]

    def _write(
        self,
        prepared: list[tuple[Document, list[chunking.Span], np.ndarray]],
        current: Mapping[str, _Head],
    ) -> None:
        """Write the chunks of ``prepared``: new documents are inserted, replaced ones
        upserted (keeping their listing position), then the chunks a shorter new version no
        longer has are deleted."""
        first = self._clock.take(len(prepared))
        new_rows: list[dict[str, Any]] = []
        replaced_rows: list[dict[str, Any]] = []
        stale: list[str] = []
        for number, (doc, spans, vectors) in enumerate(prepared):
            old = current.get(doc.doc_id)
            rows = codec.encode(doc, spans, vectors, old.seq if old else first + number)
            (new_rows if old is None else replaced_rows).extend(rows)
            if old is not None and old.chunks > len(spans):
                stale.extend(
                    schema.key(chunking.chunk_id(doc.doc_id, p))
                    for p in range(len(spans), old.chunks)
                )
        for method, rows in (("insert", new_rows), ("upsert", replaced_rows)):
            for batch in codec.batches(rows):
                self._call(method, batch)
        for part in queries.slices(stale, queries.KEYS_PER_EXPRESSION):
            self._call("delete", ids=list(part))

    def add(self, documents: Sequence[Document]) -> list[Document]:
        docs = base.normalise(documents, need_id=False)
        prepared = self._prepare(docs)
        with self._write_lock:
            self._write(prepared, self._current(d.doc_id for d in docs))
        return docs

    def update(
        self, documents: Sequence[Document]
    ) -> tuple[list[Document], list[Document], list[Document]]:
        docs = base.normalise(documents, need_id=True)
        current = self._documents(d.doc_id for d in docs)
        not_found = [d for d in docs if d.doc_id not in current]
        changed, unchanged = [], []
        for doc in docs:
            entry = current.get(doc.doc_id)
            if entry is None:
                continue
            same = entry.text == doc.text and base.same_metadata(entry.metadata, doc.metadata)
            (unchanged if same else changed).append(doc)
        prepared = self._prepare(changed)
        with self._write_lock:
            # A document deleted while we embedded stays deleted.
            heads = self._current(doc.doc_id for doc in changed)
            present = [p for p in prepared if p[0].doc_id in heads]
            gone = [p[0] for p in prepared if p[0].doc_id not in heads]
            self._write(present, heads)
        return [p[0] for p in present], unchanged, not_found + gone

    def delete(self, doc_ids: Sequence[str]) -> tuple[list[str], list[str]]:
        ids = list(dict.fromkeys(doc_ids))
        with self._write_lock:
            heads = self._current(ids)
            deleted = [i for i in ids if i in heads]
            for part in queries.slices(
                [schema.key(i) for i in deleted], queries.KEYS_PER_EXPRESSION
            ):
                self._call("delete", filter=f"doc_key in {queries.keys(part)}")
        return deleted, [i for i in ids if i not in heads]

    # -- search ----------------------------------------------------------------------------

    def search(self, query: str, top_k: int = 5, flt: SearchFilter | None = None) -> list[Hit]:
        base.check_top_k(top_k)
        words = analysis.tokenize(query)
        vector = self.embedder.embed([query])[0]
        if not words and not vector.any():
            return []
        expression = queries.expression(flt)
        if expression is None:
            return []
        depth = min(base.candidate_depth(top_k), queries.MAX_LIMIT)
        dense = self._call(
            "search",
            data=[np.asarray(vector, dtype=np.float32).tolist()],
            anns_field="dense",
            limit=depth,
            filter=expression,
            output_fields=schema.HIT_FIELDS,
            search_params={"metric_type": "IP"},
        )[0]
        lexical = []
        if words:
            lexical = self._call(
                "search",
                data=[" ".join(dict.fromkeys(words))],  # each word once, as bm25 scores
                anns_field="sparse",
                limit=depth,
                filter=expression,
                output_fields=[*schema.HIT_FIELDS, "dense"],
                search_params={"metric_type": "BM25"},
            )[0]
        return queries.rank(dense, lexical, vector, top_k)

    # -- persistence -----------------------------------------------------------------------

    def snapshot(self) -> persistence.Snapshot:
        grouped: dict[str, list[dict[str, Any]]] = {}
        for row in self._scan("", [*schema.DOC_FIELDS, "dense"]):
            grouped.setdefault(row["doc_id"], []).append(row)
        ordered = sorted(
            grouped.values(), key=lambda rs: (min(int(r["seq"]) for r in rs), rs[0]["doc_id"])
        )
        documents, vectors = [], []
        for rows in ordered:
            rows.sort(key=lambda r: int(r["position"]))
            doc = codec.decode_document(rows)
            spans, offset = [], 0
            for row in rows:
                start = offset + len(row["gap"])
                offset = start + len(row["text"])
                spans.append((start, offset))
                vectors.append(row["dense"])
            documents.append(
                persistence.StoredDocument(doc.doc_id, doc.text, dict(doc.metadata), spans)
            )
        matrix = (
            np.asarray(vectors, dtype=np.float32)
            if vectors
            else np.zeros((0, self.embedder.dim), dtype=np.float32)
        )
        return persistence.Snapshot(self.embedder.name, self.embedder.dim, documents, matrix)

    def save(self, path: Path) -> None:
        """Export the index file: the documents stay in Milvus."""
        persistence.write(path, self.snapshot())

    def restore(self, snapshot: persistence.Snapshot) -> None:
        """Write a snapshot's documents (with their spans and vectors) into this store."""
        bounds = np.cumsum([0, *(len(d.spans) for d in snapshot.documents)])
        prepared = []
        for i, d in enumerate(snapshot.documents):
            doc = Document(d.doc_id, d.text, base.json_metadata(d.doc_id, d.metadata))
            codec.check(doc, d.spans)
            prepared.append((doc, list(d.spans), snapshot.vectors[bounds[i] : bounds[i + 1]]))
        with self._write_lock:
            for part in queries.slices(prepared, codec.BATCH_ROWS):
                self._write(list(part), {})
