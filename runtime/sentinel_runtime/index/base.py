"""The index store interface, and what every store shares.

A *store* is one named index: documents in, chunks and hybrid search out. Two backends
implement it: ``store.IndexStore`` (FAISS + BM25 in this process, persisted to files by
``manager``) and ``milvus.MilvusStore`` (the chunks live in a Milvus collection that several
runtimes can share). ``manager.IndexManager`` owns the named stores through a
``StoreBackend``; the pipeline needs only ``search`` (``pipeline.placement.Searchable``).

Both stores validate documents the same way (``normalise``), rank the same way (reciprocal
rank fusion of an exact dense search and an Okapi BM25 search, ``fuse``) and refuse the
same bad input, so the contract tests (tests/index/test_store_contract.py) run unchanged on
both.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from sentinel_runtime.index.types import Chunk, Document, Hit, SearchFilter

if TYPE_CHECKING:
    from sentinel_runtime.index import persistence
    from sentinel_runtime.index.embedders import Embedder

RRF_K = 60
MIN_CANDIDATES = 40  # per half; RRF needs depth beyond top_k to let agreement count
MAX_DOC_ID_CHARS = 512


class IndexNotFound(LookupError):  # noqa: N818 (the name callers know from the brief)
    def __init__(self, name: str) -> None:
        super().__init__(f"index {name!r} does not exist")
        self.name = name


class IndexExistsError(ValueError):
    """Loading would replace a live index and ``overwrite`` was not given."""


class VectorDBError(RuntimeError):
    """The vector database cannot be reached or refused a request (the message says why)."""


class Store(Protocol):
    """One named index. Every method is safe to call from several threads."""

    name: str

    @property
    def embedder(self) -> Embedder: ...

    @property
    def document_count(self) -> int: ...

    @property
    def chunk_count(self) -> int: ...

    @property
    def in_process(self) -> bool:
        """Whether a search is work in this process alone, with no network call (the
        pipeline may then run a short one on its event loop)."""
        ...

    def add(self, documents: Sequence[Document]) -> list[Document]:
        """Index ``documents``; an empty doc_id becomes ``content_doc_id`` of the text, an
        existing one is replaced (keeping its listing position). Bad input changes nothing."""
        ...

    def update(
        self, documents: Sequence[Document]
    ) -> tuple[list[Document], list[Document], list[Document]]:
        """Replace documents whose text or metadata changed: (updated, unchanged, not_found)."""
        ...

    def delete(self, doc_ids: Sequence[str]) -> tuple[list[str], list[str]]:
        """Remove documents: (deleted, not_found)."""
        ...

    def get_document(self, doc_id: str) -> Document | None: ...

    def get_chunk(self, chunk_id: str) -> Chunk | None: ...

    def list_documents(
        self, offset: int = 0, limit: int = 10, metadata_filter: Mapping[str, Any] | None = None
    ) -> tuple[list[Document], int]:
        """A page of documents in insertion order, and how many match in all."""
        ...

    def search(self, query: str, top_k: int = 5, flt: SearchFilter | None = None) -> list[Hit]:
        """The ``top_k`` best chunks among those ``flt`` allows (a filter never costs
        results), by reciprocal rank fusion of dense and BM25 ranks."""
        ...

    def snapshot(self) -> persistence.Snapshot:
        """Every document with its chunk spans and vectors (the index file's content)."""
        ...

    def save(self, path: Path) -> None:
        """Write the index file (``persistence``) to ``path`` atomically."""
        ...


class StoreBackend(Protocol):
    """Where the named stores of a runtime live; ``manager.IndexManager`` drives it and
    checks names, so a backend sees only valid ones."""

    kind: str  # "embedded" | "milvus", for logs and status

    def names(self) -> list[str]: ...

    def lookup(self, name: str) -> Store | None:
        """The store of ``name``, or None when there is no such index."""
        ...

    def create(self, name: str) -> tuple[Store, bool]:
        """The store of ``name``, created when missing; True when this call created it."""
        ...

    def discard_if_empty(self, name: str, store: Store) -> None:
        """Undo ``create`` after the first documents were refused: no empty index stays."""
        ...

    def changed(self, store: Store) -> None:
        """Called after each change that succeeded (the embedded backend saves the file)."""
        ...

    def drop(self, name: str) -> bool:
        """Delete the index and everything persisted of it; False when it did not exist."""
        ...

    def restore(self, name: str, file: Path, overwrite: bool) -> Store:
        """Make ``name`` the content of the index file ``file``."""
        ...

    def close(self) -> None: ...


def content_doc_id(text: str) -> str:
    """The id of a document indexed without one: the SHA-256 of its text (64 hex digits),
    as KAITO derives it, so that indexing the same text again replaces it instead of adding
    a copy."""
    return hashlib.sha256(text.encode()).hexdigest()


def check_doc_id(number: int, doc_id: str, *, need_id: bool) -> str:
    if not doc_id:
        raise ValueError(f"document {number} has no doc_id; updates need one")
    if len(doc_id) > MAX_DOC_ID_CHARS:
        raise ValueError(f"doc_id longer than {MAX_DOC_ID_CHARS} characters")
    return doc_id


def json_metadata(doc_id: str, metadata: Mapping[str, Any] | None) -> Mapping[str, Any]:
    value = dict(metadata or {})
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode()
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"document {doc_id!r}: metadata is not valid Unicode (a lone surrogate)"
        ) from exc
    except (TypeError, ValueError) as exc:
        raise ValueError(f"document {doc_id!r}: metadata must be JSON ({exc})") from exc
    return MappingProxyType(value)


def check_unicode(number: int, doc_id: str, text: str) -> None:
    """Text the index file (UTF-8) can hold: a lone surrogate is refused before any work."""
    for what, value in (("doc_id", doc_id), ("text", text)):
        try:
            value.encode()
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"document {number}: {what} is not valid Unicode (a lone surrogate at "
                f"position {exc.start})"
            ) from exc


def same_metadata(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return json.dumps(dict(a), sort_keys=True) == json.dumps(dict(b), sort_keys=True)


def normalise(documents: Sequence[Document], *, need_id: bool) -> list[Document]:
    """Documents as a store keeps them, or a ValueError naming the first bad one:
    text required, valid Unicode (no lone surrogate, as doc_ids and metadata), ids unique in
    the request and at most 512 characters (``need_id``: updates must name theirs; else a
    missing id is ``content_doc_id`` of the text), metadata JSON. The same text sent twice
    without an id is one document (the later one's metadata), as it would be over two
    requests."""
    derived: dict[str, int] = {}  # content id -> its place in ``result``
    named: set[str] = set()
    result: list[Document] = []
    for number, doc in enumerate(documents):
        if not isinstance(doc.text, str) or not doc.text.strip():
            label = f" ({doc.doc_id!r})" if doc.doc_id else ""
            raise ValueError(f"document {number}{label} has no text (empty or whitespace only)")
        check_unicode(number, doc.doc_id, doc.text)
        auto = not doc.doc_id and not need_id
        doc_id = (
            content_doc_id(doc.text) if auto else check_doc_id(number, doc.doc_id, need_id=need_id)
        )
        if doc_id in named or (not auto and doc_id in derived):
            raise ValueError(f"doc_id {doc_id!r} appears twice in one request")
        made = Document(doc_id, doc.text, json_metadata(doc_id, doc.metadata))
        if auto and doc_id in derived:
            result[derived[doc_id]] = made
            continue
        if auto:
            derived[doc_id] = len(result)
        else:
            named.add(doc_id)
        result.append(made)
    return result


def check_top_k(top_k: int) -> None:
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")


def candidate_depth(top_k: int) -> int:
    """How many candidates each half of a hybrid search contributes to the fusion."""
    return max(4 * top_k, MIN_CANDIDATES)


def fuse(dense: Sequence[Any], lexical: Sequence[Any]) -> dict[Any, float]:
    """Reciprocal rank fusion: each key scores 1 / (RRF_K + rank) per list it is in
    (ranks from 1), in the order the lists give."""
    fused: dict[Any, float] = {}
    for ranking in (dense, lexical):
        for rank, key in enumerate(ranking):
            fused[key] = fused.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
    return fused
