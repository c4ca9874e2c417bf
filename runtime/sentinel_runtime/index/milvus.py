"""The Milvus store: each index is a Milvus collection that every runtime pointed at the same
Milvus (``VECTOR_DB_URL``) reads and writes, so replicas answer from one set of documents.

One row per chunk. Search is the embedded store's, done by Milvus:

* dense: an exact (``FLAT``) inner-product search over the embedder's unit vectors;
* lexical: Milvus's own BM25 (a ``BM25`` function feeding a sparse field, ``k1`` 1.5,
  ``b`` 0.75 as ``bm25``). The analysed field holds the chunk's words as ``tokens.tokenize``
  gives them, joined by spaces, and Milvus splits on whitespace: both stores see the same
  words, and Milvus computes the same scores as ``bm25.BM25`` (Lucene's idf, the collection's
  average length, deletions included);
* filters run inside Milvus, before ranking, as boolean expressions: the source allowlist
  (``source_key in [...]``), the time window (``has_stamp == true and stamp >= t``) and
  metadata equality (``array_contains_all(meta_keys, [...])``). So a filter never costs
  results, as in the embedded store. Everything user-written reaches an expression only as
  a hex digest (blake2b), so no quoting or escaping rule of Milvus's expression language
  applies to user text.

The two ranked lists are fused here, by ``base.fuse``, because the pipeline needs each hit's
dense similarity and BM25 score, which Milvus's ``hybrid_search`` folds into one number.

Differences from the embedded store (README, "Vector stores"): ties at the candidate cut are
broken by Milvus, not by insertion order; a chunk's text, its words and the whitespace
between chunks must each fit in 65,535 UTF-8 bytes (a VARCHAR), and a document may carry at
most 1,024 metadata keys; nested values in a metadata filter compare JSON-exactly (``[1]``
never equals ``[true]``); changes are not atomic across runtimes (last writer wins; a new
document is inserted without a look for another row of its id, so two runtimes adding it at
once can store it twice); listing documents reads one row per document from Milvus.
``persist`` exports the index file, ``load`` imports one into Milvus; nothing is rewritten
after changes, since Milvus keeps the data.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

from sentinel_runtime.index import base, chunking, filters, persistence, tokens
from sentinel_runtime.index.base import IndexExistsError, IndexNotFound, VectorDBError
from sentinel_runtime.index.embedders import Embedder
from sentinel_runtime.index.timestamps import parse_timestamp
from sentinel_runtime.index.types import Chunk, Document, Hit, SearchFilter

logger = logging.getLogger(__name__)

FORMAT = "sentinel-index"
VERSION = 1
MAX_VARCHAR_BYTES = 65_535
MAX_METADATA_KEYS = 1024
MAX_LIMIT = 16_384  # Milvus's largest topk and query window
KEY_CHARS = 32  # hex digits of a key
BATCH_ROWS = 1000
BATCH_BYTES = 16 * 2**20
KEYS_PER_EXPRESSION = 1000
SCAN_BATCH = 4096
COLLECTION_NOT_FOUND = 100
BM25_K1 = 1.5
BM25_B = 0.75
_ESCAPES = {"_": "_u", ".": "_d", "-": "_h"}
_UNESCAPES = {v[1]: k for k, v in _ESCAPES.items()}
_DOC_FIELDS = ["doc_key", "doc_id", "position", "seq", "text", "gap", "tail", "metadata"]
_HIT_FIELDS = ["doc_id", "position", "seq", "text", "metadata"]

T = TypeVar("T")


def key(text: str) -> str:
    """The digest under which user text (ids, sources, metadata) reaches Milvus."""
    return hashlib.blake2b(text.encode(), digest_size=KEY_CHARS // 2).hexdigest()


def collection_name(prefix: str, name: str) -> str:
    """``PREFIX__NAME`` with '_', '.', '-' of the name written '_u', '_d', '_h': Milvus
    names are letters, digits and '_'. An escaped name never holds '__', so no two
    (prefix, name) pairs share a collection."""
    return f"{prefix}__" + "".join(_ESCAPES.get(c, c) for c in name)


def index_name(prefix: str, collection: str) -> str | None:
    """The index a collection holds under ``prefix``, or None when it is not one of them."""
    head = f"{prefix}__"
    if not collection.startswith(head):
        return None
    escaped, out, i = collection[len(head) :], [], 0
    while i < len(escaped):
        char = escaped[i]
        if char == "_":
            if i + 1 >= len(escaped) or escaped[i + 1] not in _UNESCAPES:
                return None
            out.append(_UNESCAPES[escaped[i + 1]])
            i += 2
        else:
            out.append(char)
            i += 1
    name = "".join(out)
    return name if name and name[0].isalnum() else None


def _canonical(value: Any) -> Any:
    # JSON-equal values get one form: 2.0 is 2 (as Python's == says), true stays true.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    return value


def metadata_key(name: str, value: Any) -> str | None:
    """The token of ``metadata[name] == value``; None for a value no document can hold."""
    try:
        text = json.dumps(_canonical(value), sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return key(f"{name}\x00{text}")


def _keys(keys: Iterable[str]) -> str:
    return "[" + ", ".join(f'"{k}"' for k in keys) + "]"


def _utf8(value: str) -> int:
    return len(value.encode())


def _fit(value: str) -> str:
    """``value`` cut to a VARCHAR's bytes (lower-casing can lengthen a chunk's words)."""
    encoded = value.encode()
    if len(encoded) <= MAX_VARCHAR_BYTES:
        return value
    return encoded[:MAX_VARCHAR_BYTES].decode(errors="ignore")


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _candidate_order(hit: Mapping[str, Any]) -> tuple[float, int, int]:
    entity = hit["entity"]
    return (-float(hit["distance"]), int(entity["seq"]), int(entity["position"]))


@dataclass(frozen=True)
class _Current:
    """What Milvus holds of a document, from its first chunk's row."""

    doc_id: str
    seq: int
    chunks: int


class _Clock:
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
        clock: _Clock | None = None,
        describe_error: Callable[[Exception], Exception] | None = None,
    ) -> None:
        self.client = client
        self.collection = collection
        self.name = name
        self.embedder = embedder
        self.max_chars = max_chars
        self._clock = clock or _Clock()
        self._write_lock = threading.Lock()
        self._describe_error = describe_error or (lambda exc: VectorDBError(str(exc)))

    # -- Milvus calls ----------------------------------------------------------------------

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        from pymilvus.exceptions import MilvusException

        try:
            return getattr(self.client, method)(self.collection, *args, **kwargs)
        except MilvusException as exc:
            if exc.code == COLLECTION_NOT_FOUND or "collection not found" in exc.message:
                raise IndexNotFound(self.name) from exc
            raise self._describe_error(exc) from exc

    def _count(self, expression: str) -> int:
        rows = self._call("query", filter=expression, output_fields=["count(*)"])
        return int(rows[0]["count(*)"]) if rows else 0

    def _scan(self, expression: str, fields: list[str]) -> list[dict[str, Any]]:
        """Every row ``expression`` selects: one query, or an iterator beyond the 16,384
        rows a query returns."""
        rows: list[dict[str, Any]] = self._call(
            "query", filter=expression, output_fields=fields, limit=MAX_LIMIT
        )
        if len(rows) < MAX_LIMIT:
            return rows
        iterator = self._call(
            "query_iterator", batch_size=SCAN_BATCH, filter=expression, output_fields=fields
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
        for part in _chunks(list(dict.fromkeys(doc_keys)), KEYS_PER_EXPRESSION):
            rows.extend(self._scan(f"doc_key in {_keys(part)}{extra}", fields))
        return rows

    @property
    def document_count(self) -> int:
        return self._count("position == 0")

    @property
    def chunk_count(self) -> int:
        return self._count("")

    # -- documents -------------------------------------------------------------------------

    def _current(self, doc_ids: Iterable[str]) -> dict[str, _Current]:
        """The first-chunk rows of the documents that exist, by doc_id."""
        wanted = {key(d): d for d in doc_ids}
        rows = self._rows_of(
            list(wanted), ["doc_key", "doc_id", "seq", "chunks"], " and position == 0"
        )
        return {
            row["doc_id"]: _Current(row["doc_id"], int(row["seq"]), int(row["chunks"]))
            for row in rows
            if wanted.get(row["doc_key"]) == row["doc_id"]
        }

    @staticmethod
    def _assemble(rows: list[dict[str, Any]]) -> Document:
        rows = sorted(rows, key=lambda r: int(r["position"]))
        text = "".join(r["gap"] + r["text"] for r in rows) + rows[-1]["tail"]
        return Document(rows[0]["doc_id"], text, MappingProxyType(dict(rows[0]["metadata"])))

    def _documents(self, doc_ids: Iterable[str]) -> dict[str, Document]:
        wanted = {key(d): d for d in doc_ids}
        grouped: dict[str, list[dict[str, Any]]] = {}
        for row in self._rows_of(list(wanted), _DOC_FIELDS):
            if wanted.get(row["doc_key"]) == row["doc_id"]:
                grouped.setdefault(row["doc_id"], []).append(row)
        return {doc_id: self._assemble(rows) for doc_id, rows in grouped.items()}

    def get_document(self, doc_id: str) -> Document | None:
        return self._documents([doc_id]).get(doc_id)

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        rows = self._call("get", ids=[key(chunk_id)], output_fields=_HIT_FIELDS)
        for row in rows:
            chunk = self._chunk(row)
            if chunk.chunk_id == chunk_id:
                return chunk
        return None

    @staticmethod
    def _chunk(entity: Mapping[str, Any]) -> Chunk:
        doc_id, position = entity["doc_id"], int(entity["position"])
        return Chunk(
            chunking.chunk_id(doc_id, position),
            doc_id,
            position,
            entity["text"],
            MappingProxyType(dict(entity["metadata"])),
        )

    def list_documents(
        self, offset: int = 0, limit: int = 10, metadata_filter: Mapping[str, Any] | None = None
    ) -> tuple[list[Document], int]:
        if offset < 0 or limit < 0:
            raise ValueError("offset and limit must not be negative")
        expression = "position == 0"
        if metadata_filter:
            matches = self._metadata_expression(metadata_filter)
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
            self._check(doc, sp)
        texts = [doc.text[s:e] for doc, sp in zip(documents, spans, strict=True) for s, e in sp]
        vectors = self.embedder.embed(texts) if texts else np.zeros((0, self.embedder.dim))
        bounds = np.cumsum([0, *map(len, spans)])
        return [
            (doc, sp, vectors[bounds[i] : bounds[i + 1]])
            for i, (doc, sp) in enumerate(zip(documents, spans, strict=True))
        ]

    @staticmethod
    def _check(doc: Document, spans: list[chunking.Span]) -> None:
        if len(doc.metadata) > MAX_METADATA_KEYS:
            raise ValueError(
                f"document {doc.doc_id!r}: at most {MAX_METADATA_KEYS} metadata keys "
                "on the Milvus store"
            )
        previous = 0
        pieces = []
        for start, end in spans:
            pieces += [("a chunk (one unbreakable word)", start, end), ("a space", previous, start)]
            previous = end
        pieces.append(("the trailing space", previous, len(doc.text)))
        for what, start, end in pieces:
            if _utf8(doc.text[start:end]) > MAX_VARCHAR_BYTES:
                raise ValueError(
                    f"document {doc.doc_id!r}: {what} at characters {start}-{end} is longer "
                    f"than the Milvus store holds in one field ({MAX_VARCHAR_BYTES} UTF-8 bytes)"
                )

    def _rows(
        self, doc: Document, spans: list[chunking.Span], vectors: np.ndarray, seq: int
    ) -> list[dict[str, Any]]:
        metadata = dict(doc.metadata)
        source = metadata.get("source")
        stamp = parse_timestamp(metadata.get("timestamp"))
        meta_keys = [
            token for name, value in metadata.items() if (token := metadata_key(name, value))
        ]
        common = {
            "doc_key": key(doc.doc_id),
            "doc_id": doc.doc_id,
            "seq": seq,
            "chunks": len(spans),
            "source_key": key(str(source)) if source is not None else "",
            "stamp": filters.epoch(stamp) if stamp is not None else 0.0,
            "has_stamp": stamp is not None,
            "meta_keys": meta_keys,
            "metadata": metadata,
        }
        rows, previous = [], 0
        for position, (start, end) in enumerate(spans):
            text = doc.text[start:end]
            last = position == len(spans) - 1
            rows.append(
                common
                | {
                    "pk": key(chunking.chunk_id(doc.doc_id, position)),
                    "position": position,
                    "text": text,
                    "words": _fit(" ".join(tokens.tokenize(text))),
                    "gap": doc.text[previous:start],
                    "tail": doc.text[end:] if last else "",
                    "dense": np.asarray(vectors[position], dtype=np.float32).tolist(),
                }
            )
            previous = end
        return rows

    def _write(
        self,
        prepared: list[tuple[Document, list[chunking.Span], np.ndarray]],
        current: Mapping[str, _Current],
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
            rows = self._rows(doc, spans, vectors, old.seq if old else first + number)
            (new_rows if old is None else replaced_rows).extend(rows)
            if old is not None and old.chunks > len(spans):
                stale.extend(
                    key(chunking.chunk_id(doc.doc_id, p)) for p in range(len(spans), old.chunks)
                )
        for method, rows in (("insert", new_rows), ("upsert", replaced_rows)):
            batch: list[dict[str, Any]] = []
            size = 0
            for row in rows:
                row_size = 4 * len(row["dense"]) + 3 * _utf8(row["text"]) + 256
                if batch and (len(batch) >= BATCH_ROWS or size + row_size > BATCH_BYTES):
                    self._call(method, batch)
                    batch, size = [], 0
                batch.append(row)
                size += row_size
            if batch:
                self._call(method, batch)
        for part in _chunks(stale, KEYS_PER_EXPRESSION):
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
            for part in _chunks([key(i) for i in deleted], KEYS_PER_EXPRESSION):
                self._call("delete", filter=f"doc_key in {_keys(part)}")
        return deleted, [i for i in ids if i not in heads]

    # -- search ----------------------------------------------------------------------------

    @staticmethod
    def _metadata_expression(wanted: Mapping[str, Any]) -> str | None:
        tokens_ = [metadata_key(name, value) for name, value in wanted.items()]
        if any(t is None for t in tokens_):
            return None
        return f"array_contains_all(meta_keys, {_keys(t for t in tokens_ if t)})"

    def _expression(self, flt: SearchFilter | None) -> str | None:
        """The Milvus filter of ``flt`` ("" allows all); None when nothing can match."""
        if filters.is_unconstrained(flt):
            return ""
        assert flt is not None
        parts = []
        if flt.sources is not None:
            if not flt.sources:
                return None
            parts.append(f"source_key in {_keys(key(s) for s in flt.sources)}")
        if flt.not_before is not None:
            parts.append(f"has_stamp == true and stamp >= {filters.epoch(flt.not_before)!r}")
        if flt.not_after is not None:
            parts.append(f"has_stamp == true and stamp <= {filters.epoch(flt.not_after)!r}")
        if flt.metadata:
            matches = self._metadata_expression(flt.metadata)
            if matches is None:
                return None
            parts.append(matches)
        return " and ".join(f"({p})" for p in parts)

    def search(self, query: str, top_k: int = 5, flt: SearchFilter | None = None) -> list[Hit]:
        base.check_top_k(top_k)
        words = tokens.tokenize(query)
        vector = self.embedder.embed([query])[0]
        if not words and not vector.any():
            return []
        expression = self._expression(flt)
        if expression is None:
            return []
        depth = min(base.candidate_depth(top_k), MAX_LIMIT)
        dense = self._call(
            "search",
            data=[np.asarray(vector, dtype=np.float32).tolist()],
            anns_field="dense",
            limit=depth,
            filter=expression,
            output_fields=_HIT_FIELDS,
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
                output_fields=[*_HIT_FIELDS, "dense"],
                search_params={"metric_type": "BM25"},
            )[0]
        # Equal scores in insertion order, as the embedded store ranks them.
        dense = sorted(dense, key=_candidate_order)
        lexical = sorted(lexical, key=_candidate_order)
        chunks: dict[str, Chunk] = {}
        similarity: dict[str, float] = {}
        bm25: dict[str, float] = {}
        for hit in dense:
            chunks[hit["id"]] = self._chunk(hit["entity"])
            similarity[hit["id"]] = float(hit["distance"])
        for hit in lexical:
            bm25[hit["id"]] = float(hit["distance"])
            if hit["id"] not in chunks:
                chunks[hit["id"]] = self._chunk(hit["entity"])
                row = np.asarray(hit["entity"]["dense"], dtype=np.float32)
                similarity[hit["id"]] = float(row @ vector)
        fused = base.fuse([h["id"] for h in dense], [h["id"] for h in lexical])
        order = sorted(fused, key=lambda pk: (-fused[pk], -similarity[pk], chunks[pk].chunk_id))[
            :top_k
        ]
        return [
            Hit(
                chunk=chunks[pk],
                score=fused[pk],
                similarity=min(max(similarity[pk], 0.0), 1.0),
                lexical=bm25.get(pk, 0.0),
                rank=rank,
            )
            for rank, pk in enumerate(order)
        ]

    # -- persistence -----------------------------------------------------------------------

    def snapshot(self) -> persistence.Snapshot:
        grouped: dict[str, list[dict[str, Any]]] = {}
        for row in self._scan("", [*_DOC_FIELDS, "dense"]):
            grouped.setdefault(row["doc_id"], []).append(row)
        ordered = sorted(
            grouped.values(), key=lambda rs: (min(int(r["seq"]) for r in rs), rs[0]["doc_id"])
        )
        documents, vectors = [], []
        for rows in ordered:
            rows.sort(key=lambda r: int(r["position"]))
            doc = self._assemble(rows)
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
            self._check(doc, d.spans)
            prepared.append((doc, list(d.spans), snapshot.vectors[bounds[i] : bounds[i + 1]]))
        with self._write_lock:
            for part in _chunks(prepared, BATCH_ROWS):
                self._write(list(part), {})


class MilvusBackend:
    """The indexes of one collection prefix in one Milvus (``base.StoreBackend``)."""

    kind = "milvus"

    def __init__(
        self,
        embedder: Embedder,
        url: str,
        *,
        token: str = "",
        prefix: str = "sentinel",
        persist_dir: Path | None = None,
        max_chars: int = chunking.DEFAULT_MAX_CHARS,
        timeout: float = 10.0,
    ) -> None:
        try:
            from pymilvus import MilvusClient
            from pymilvus.exceptions import MilvusException
        except ImportError as exc:
            raise VectorDBError(
                "VECTOR_DB_TYPE=milvus needs the optional extra: "
                "pip install 'sentinel-rag[milvus]' (and 'sentinel-rag[milvus-lite]' for a "
                "local .db file)"
            ) from exc
        self.embedder = embedder
        self.url = url
        self.prefix = prefix
        self.max_chars = max_chars
        self._lock = threading.Lock()
        self._clock = _Clock()
        self._stores: dict[str, MilvusStore] = {}
        try:
            self.client = MilvusClient(uri=url, token=token, timeout=timeout, dedicated=True)
        except MilvusException as exc:
            raise self._error(exc) from exc
        # Like the embedded store's files: an index this embedder cannot search stops the
        # start, before anything is written next to it.
        for name in self.names():
            self.lookup(name)
        if persist_dir is not None and persist_dir.is_dir():
            files = sorted(p.name for p in persist_dir.glob(f"*{persistence.SUFFIX}"))
            if files:
                logger.warning(
                    "index files in %s are not loaded at start: the indexes live in Milvus "
                    "(POST /load/{name} imports a file): %s",
                    persist_dir,
                    ", ".join(files),
                )

    def _error(self, exc: Exception) -> VectorDBError:
        message = getattr(exc, "message", "") or str(exc)
        return VectorDBError(f"Milvus at {self.url}: {message}")

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        from pymilvus.exceptions import MilvusException

        try:
            return getattr(self.client, method)(*args, **kwargs)
        except MilvusException as exc:
            raise self._error(exc) from exc

    def _description(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "embedder": {"name": self.embedder.name, "dim": self.embedder.dim},
        }

    def _schema(self, name: str) -> tuple[Any, Any]:
        from pymilvus import DataType, Function, FunctionType, MilvusClient

        description = json.dumps({**self._description(), "index": name})
        schema = MilvusClient.create_schema(
            auto_id=False, enable_dynamic_field=False, description=description
        )
        varchar = DataType.VARCHAR
        schema.add_field("pk", varchar, is_primary=True, max_length=KEY_CHARS)
        schema.add_field("doc_key", varchar, max_length=KEY_CHARS)
        schema.add_field("doc_id", varchar, max_length=4 * base.MAX_DOC_ID_CHARS)
        schema.add_field("position", DataType.INT64)
        schema.add_field("chunks", DataType.INT64)
        schema.add_field("seq", DataType.INT64)
        schema.add_field("text", varchar, max_length=MAX_VARCHAR_BYTES)
        schema.add_field(
            "words",
            varchar,
            max_length=MAX_VARCHAR_BYTES,
            enable_analyzer=True,
            analyzer_params={"tokenizer": "whitespace"},
        )
        schema.add_field("gap", varchar, max_length=MAX_VARCHAR_BYTES)
        schema.add_field("tail", varchar, max_length=MAX_VARCHAR_BYTES)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=self.embedder.dim)
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("source_key", varchar, max_length=KEY_CHARS)
        schema.add_field("stamp", DataType.DOUBLE)
        schema.add_field("has_stamp", DataType.BOOL)
        schema.add_field(
            "meta_keys",
            DataType.ARRAY,
            element_type=varchar,
            max_capacity=MAX_METADATA_KEYS,
            max_length=KEY_CHARS,
        )
        schema.add_field("metadata", DataType.JSON)
        schema.add_function(
            Function(
                name="bm25",
                function_type=FunctionType.BM25,
                input_field_names=["words"],
                output_field_names=["sparse"],
            )
        )
        indexes = self.client.prepare_index_params()
        indexes.add_index("dense", index_type="FLAT", metric_type="IP")
        indexes.add_index(
            "sparse",
            index_type="SPARSE_INVERTED_INDEX",
            metric_type="BM25",
            params={"bm25_k1": BM25_K1, "bm25_b": BM25_B},
        )
        return schema, indexes

    def _store(self, name: str) -> MilvusStore:
        return MilvusStore(
            self.client,
            collection_name(self.prefix, name),
            name,
            self.embedder,
            max_chars=self.max_chars,
            clock=self._clock,
            describe_error=self._error,
        )

    def _open(self, name: str) -> MilvusStore:
        """Check that the collection is a Sentinel index of this embedder, and loaded."""
        collection = collection_name(self.prefix, name)
        described = self._call("describe_collection", collection)
        try:
            meta = json.loads(described.get("description") or "")
            embedder = meta["embedder"]
            found = (str(embedder["name"]), int(embedder["dim"]))
            if meta.get("format") != FORMAT:
                raise ValueError(meta.get("format"))
        except (ValueError, KeyError, TypeError) as exc:
            raise persistence.IndexFileError(
                f"Milvus collection {collection} is not a Sentinel index"
            ) from exc
        if found != (self.embedder.name, self.embedder.dim):
            raise persistence.IndexFileError(
                f"index {name!r} (Milvus collection {collection}) was built with embedder "
                f"{found[0]!r} (dimension {found[1]}); this runtime embeds with "
                f"{self.embedder.name!r} (dimension {self.embedder.dim}). Vectors of different "
                "embedders cannot be compared: re-index the documents, or run with the "
                "embedder the index was built with (EMBEDDING_TYPE, EMBEDDING_MODEL_ID)."
            )
        state = self._call("get_load_state", collection).get("state")
        if getattr(state, "name", str(state)) != "Loaded":
            self._call("load_collection", collection)
        return self._store(name)

    def names(self) -> list[str]:
        found = (index_name(self.prefix, c) for c in self._call("list_collections"))
        return sorted(n for n in found if n is not None)

    def lookup(self, name: str) -> MilvusStore | None:
        if not self._call("has_collection", collection_name(self.prefix, name)):
            with self._lock:
                self._stores.pop(name, None)
            return None
        with self._lock:
            store = self._stores.get(name)
        if store is None:
            store = self._open(name)
            with self._lock:
                store = self._stores.setdefault(name, store)
        return store

    def _create(self, name: str) -> None:
        schema, indexes = self._schema(name)
        self._call(
            "create_collection",
            collection_name(self.prefix, name),
            schema=schema,
            index_params=indexes,
            consistency_level="Strong",  # a write is seen by the next read, on every runtime
        )

    def create(self, name: str) -> tuple[MilvusStore, bool]:
        store = self.lookup(name)
        if store is not None:
            return store, False
        try:
            self._create(name)
        except VectorDBError:
            store = self.lookup(name)  # another runtime created it first
            if store is None:
                raise
            return store, False
        store = self.lookup(name)
        if store is None:
            raise IndexNotFound(name)  # dropped by another runtime at once
        return store, True

    def discard_if_empty(self, name: str, store: base.Store) -> None:
        try:
            if store.document_count == 0:
                self.drop(name)
        except (IndexNotFound, VectorDBError):
            logger.warning("could not remove the empty index %s after a failed add", name)

    def changed(self, store: base.Store) -> None:
        pass  # Milvus keeps every change

    def drop(self, name: str) -> bool:
        collection = collection_name(self.prefix, name)
        with self._lock:
            self._stores.pop(name, None)
        if not self._call("has_collection", collection):
            return False
        self._call("drop_collection", collection)
        return True

    def restore(self, name: str, file: Path, overwrite: bool) -> MilvusStore:
        """Write an index file's documents into Milvus as ``name``. The collection is
        replaced in place: other runtimes see the index empty until the write ends."""
        if not overwrite and self.lookup(name) is not None:
            raise IndexExistsError(f"index {name!r} exists; load with overwrite to replace it")
        snapshot = persistence.read(file)
        persistence.check_embedder(file, snapshot, self.embedder.name, self.embedder.dim)
        if self.lookup(name) is not None:
            if not overwrite:
                raise IndexExistsError(f"index {name!r} exists; load with overwrite to replace it")
            self.drop(name)
        self._create(name)
        store = self.lookup(name)
        if store is None:
            raise IndexNotFound(name)
        store.restore(snapshot)
        return store

    def close(self) -> None:
        self.client.close()
