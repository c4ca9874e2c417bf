"""The embedded store: one named index in this process, persisted to a file.

Documents, their chunks, and hybrid search over them (the ``base.Store`` interface).

Dense (``dense``: FAISS inner product over unit vectors) and lexical (``bm25``) candidates
are fused by reciprocal rank fusion; ``filters`` turns a ``SearchFilter`` into the set of
chunks both halves may return. ``persistence`` writes and reads the file of one index;
``manager`` owns the named stores. Every method is safe to call from several threads:
embedding (and screening, ``screening``, when the store has a screen) runs outside the
lock, applying the result inside it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sentinel_runtime.index import analysis, base, chunking, filters, memory, persistence
from sentinel_runtime.index.bm25 import BM25
from sentinel_runtime.index.dense import DenseIndex
from sentinel_runtime.index.embedders import Embedder, RemoteEmbedder
from sentinel_runtime.index.screening import Screen
from sentinel_runtime.index.types import Chunk, Document, Hit, SearchFilter

RRF_K = base.RRF_K
MIN_CANDIDATES = base.MIN_CANDIDATES
MAX_DOC_ID_CHARS = base.MAX_DOC_ID_CHARS


@dataclass(frozen=True)
class _Entry:
    document: Document
    spans: list[chunking.Span]
    keys: np.ndarray  # chunk keys in position order


@dataclass(frozen=True)
class _Prepared:
    """A document chunked, embedded and tokenised outside the lock, ready to insert."""

    document: Document
    spans: list[chunking.Span]
    vectors: np.ndarray
    words: list[list[str]]  # per chunk, for BM25
    quiet: Sequence[bool]  # per chunk: the screen's verdict (``Chunk.quiet``)

    @classmethod
    def of(
        cls,
        doc: Document,
        spans: list[chunking.Span],
        vectors: np.ndarray,
        quiet: Sequence[bool],
    ) -> _Prepared:
        words = [analysis.tokenize(doc.text[s:e]) for s, e in spans]
        return cls(doc, spans, vectors, words, quiet)


class IndexStore:
    def __init__(
        self,
        name: str,
        embedder: Embedder,
        *,
        max_chars: int = chunking.DEFAULT_MAX_CHARS,
        screen: Screen | None = None,
    ) -> None:
        """``screen`` judges each chunk as it is indexed (``screening``); None: no chunk is
        ``quiet``, each is judged when retrieved."""
        self.name = name
        self.embedder = embedder
        self.max_chars = max_chars
        self.screen = screen
        self._lock = threading.RLock()
        self._save_lock = threading.Lock()
        self._retired = False
        self._docs: dict[str, _Entry] = {}
        self._chunks: dict[int, Chunk] = {}
        self._key_of: dict[str, int] = {}
        self._next_key = 0
        self._dense = DenseIndex(embedder.dim)
        self._bm25 = BM25()
        self._columns = filters.Columns()

    @property
    def document_count(self) -> int:
        return len(self._docs)

    @property
    def chunk_count(self) -> int:
        return len(self._chunks)

    @property
    def in_process(self) -> bool:
        """Whether a search is work in this process alone: true unless embedding the query
        is a call to an embeddings service."""
        return not isinstance(self.embedder, RemoteEmbedder)

    # -- writing ---------------------------------------------------------------------------

    def _prepare(self, documents: list[Document]) -> list[_Prepared]:
        """Chunk and embed everything before any change: a failure changes nothing."""
        spans = []
        for doc in documents:
            spans.append(chunking.split_spans(doc.text, self.max_chars))
        texts = [doc.text[s:e] for doc, sp in zip(documents, spans, strict=True) for s, e in sp]
        vectors = self.embedder.embed(texts) if texts else np.zeros((0, self.embedder.dim))
        quiet = self.screen.quiet(texts) if self.screen is not None else [False] * len(texts)
        bounds = np.cumsum([0, *map(len, spans)])
        return [
            _Prepared.of(
                doc,
                sp,
                vectors[bounds[i] : bounds[i + 1]],
                quiet[bounds[i] : bounds[i + 1]],
            )
            for i, (doc, sp) in enumerate(zip(documents, spans, strict=True))
        ]

    def _drop(self, entries: Iterable[_Entry]) -> int:
        """Remove the entries' chunks everywhere; how many chunks went."""
        keys = [entry.keys for entry in entries]
        if not keys:
            return 0
        all_keys = np.concatenate(keys)
        self._dense.remove(all_keys)  # one FAISS compaction for the whole batch
        self._columns.clear(all_keys)
        listed = all_keys.tolist()
        self._bm25.remove_many(listed)  # and one BM25 compaction
        for key in listed:
            del self._key_of[self._chunks.pop(key).chunk_id]
        return len(listed)

    def _insert(self, prepared: list[_Prepared]) -> None:
        """Replace or add, under the lock. A replaced document keeps its listing position."""
        self._drop(
            self._docs[p.document.doc_id] for p in prepared if p.document.doc_id in self._docs
        )
        all_keys, all_vectors = [], []
        for item in prepared:
            doc = item.document
            keys = np.arange(self._next_key, self._next_key + len(item.spans), dtype=np.int64)
            self._next_key += len(item.spans)
            for position, (key, (start, end)) in enumerate(
                zip(keys.tolist(), item.spans, strict=True)
            ):
                chunk = Chunk(
                    chunking.chunk_id(doc.doc_id, position),
                    doc.doc_id,
                    position,
                    doc.text[start:end],
                    doc.metadata,
                    item.quiet[position],
                )
                self._chunks[key] = chunk
                self._key_of[chunk.chunk_id] = key
                self._bm25.add(key, item.words[position])
            first = self._chunks[int(keys[0])]
            self._columns.set(keys, first.source, first.timestamp)
            self._docs[doc.doc_id] = _Entry(doc, item.spans, keys)
            all_keys.append(keys)
            all_vectors.append(item.vectors)
        if all_keys:
            self._dense.add(np.concatenate(all_keys), np.concatenate(all_vectors))

    def add(self, documents: Sequence[Document]) -> list[Document]:
        """Index ``documents``; an empty doc_id is the SHA-256 of the text
        (``base.content_doc_id``), an existing one is replaced."""
        docs = base.normalise(documents, need_id=False)
        prepared = self._prepare(docs)
        with self._lock:
            self._insert(prepared)
        return docs

    def update(
        self, documents: Sequence[Document]
    ) -> tuple[list[Document], list[Document], list[Document]]:
        """Replace documents whose text or metadata changed: (updated, unchanged, not_found)."""
        docs = base.normalise(documents, need_id=True)
        with self._lock:
            current = {d.doc_id: self._docs.get(d.doc_id) for d in docs}
        not_found = [d for d in docs if current[d.doc_id] is None]
        changed, unchanged = [], []
        for doc in docs:
            entry = current[doc.doc_id]
            if entry is None:
                continue
            same = entry.document.text == doc.text and base.same_metadata(
                entry.document.metadata, doc.metadata
            )
            (unchanged if same else changed).append(doc)
        prepared = self._prepare(changed)
        with self._lock:
            # A document deleted while we embedded stays deleted.
            present = [p for p in prepared if p.document.doc_id in self._docs]
            gone = [p.document for p in prepared if p.document.doc_id not in self._docs]
            self._insert(present)
        return [p.document for p in present], unchanged, not_found + gone

    def delete(self, doc_ids: Sequence[str]) -> tuple[list[str], list[str]]:
        """Remove documents: (deleted, not_found)."""
        with self._lock:
            ids = list(dict.fromkeys(doc_ids))
            deleted = [i for i in ids if i in self._docs]
            dropped = self._drop(self._docs.pop(i) for i in deleted)
        if dropped >= memory.RELEASE_MIN_CHUNKS:
            memory.release()  # outside the lock: searches need not wait for it
        return deleted, [i for i in ids if i not in deleted]

    # -- reading ---------------------------------------------------------------------------

    def get_document(self, doc_id: str) -> Document | None:
        entry = self._docs.get(doc_id)
        return entry.document if entry else None

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        with self._lock:
            key = self._key_of.get(chunk_id)
            return None if key is None else self._chunks[key]

    def list_documents(
        self, offset: int = 0, limit: int = 10, metadata_filter: Mapping[str, Any] | None = None
    ) -> tuple[list[Document], int]:
        """A page of documents in insertion order, and how many match in all."""
        if offset < 0 or limit < 0:
            raise ValueError("offset and limit must not be negative")
        with self._lock:
            if not metadata_filter:
                page = itertools.islice(self._docs.values(), offset, offset + limit)
                return [e.document for e in page], len(self._docs)
            matching = [
                e.document
                for e in self._docs.values()
                if filters.metadata_matches(e.document.metadata, metadata_filter)
            ]
        return matching[offset : offset + limit], len(matching)

    def _allowed(self, flt: SearchFilter) -> np.ndarray:
        mask = self._columns.mask(flt)
        if flt.metadata:
            wanted = np.zeros_like(mask)
            for entry in self._docs.values():
                if filters.metadata_matches(entry.document.metadata, flt.metadata):
                    wanted[entry.keys] = True
            mask &= wanted
        return mask

    def search(self, query: str, top_k: int = 5, flt: SearchFilter | None = None) -> list[Hit]:
        """The ``top_k`` best chunks by reciprocal rank fusion of dense and BM25 ranks,
        among the chunks ``flt`` allows (exact: a filter never costs results)."""
        base.check_top_k(top_k)
        words = analysis.tokenize(query)
        vector = self.embedder.embed([query])[0]
        if not words and not vector.any():
            return []
        depth = base.candidate_depth(top_k)
        with self._lock:
            if not self._chunks:
                return []
            mask = allowed = None
            if not filters.is_unconstrained(flt):
                assert flt is not None
                mask = self._allowed(flt)
                allowed = np.flatnonzero(mask)
                if not len(allowed):
                    return []
            dense_keys, _ = self._dense.search(vector, depth, allowed)
            lexical = self._bm25.search(words, depth, mask)
            fused = base.fuse(dense_keys.tolist(), [key for key, _ in lexical])
            keys = np.fromiter(fused, dtype=np.int64, count=len(fused))
            similarity = np.clip(self._dense.similarity(vector, keys), 0.0, 1.0).tolist()
            bm25 = dict(lexical)
            key_list = keys.tolist()
            chunks = [self._chunks[k] for k in key_list]
        # Plain Python lists, not numpy scalars, in the sort key: the same order, a third
        # of the time (float32 values convert to floats exactly).
        scores = [fused[k] for k in key_list]
        order = sorted(
            range(len(key_list)),
            key=lambda i: (-scores[i], -similarity[i], chunks[i].chunk_id),
        )[:top_k]
        return [
            Hit(
                chunk=chunks[i],
                score=scores[i],
                similarity=similarity[i],
                lexical=bm25.get(key_list[i], 0.0),
                rank=rank,
            )
            for rank, i in enumerate(order)
        ]

    # -- persistence -----------------------------------------------------------------------

    def snapshot(self) -> persistence.Snapshot:
        with self._lock:
            entries = list(self._docs.values())
            documents = [
                persistence.StoredDocument(
                    e.document.doc_id, e.document.text, dict(e.document.metadata), list(e.spans)
                )
                for e in entries
            ]
            keys = np.concatenate([e.keys for e in entries]) if entries else np.zeros(0, np.int64)
            vectors = self._dense.vectors_of(keys)
            quiet = stamp = None  # an unscreened store saves no bits
            if self.screen is not None:
                stamp = self.screen.stamp
                quiet = np.fromiter((self._chunks[k].quiet for k in keys.tolist()), bool, len(keys))
        return persistence.Snapshot(
            self.embedder.name, self.embedder.dim, documents, vectors, quiet, stamp
        )

    def save(self, path: Path) -> None:
        """Write the index to ``path`` atomically; concurrent saves land in call order.
        A retired store writes nothing."""
        with self._save_lock:
            if not self._retired:
                persistence.write(path, self.snapshot())

    def retire(self, remove: Path | None = None) -> None:
        """Stop saving (the store was deleted or replaced), then delete ``remove``: a save
        still in flight finishes first, so it cannot bring the file back."""
        with self._save_lock:
            self._retired = True
            if remove is not None:
                remove.unlink(missing_ok=True)

    @classmethod
    def load(
        cls,
        path: Path,
        name: str,
        embedder: Embedder,
        *,
        max_chars: int = chunking.DEFAULT_MAX_CHARS,
        screen: Screen | None = None,
    ) -> IndexStore:
        """Read ``path``; a file of another format version or embedder is refused. Its
        screening bits are kept only when ``screen`` is the screen that set them (same
        stamp); otherwise every chunk is unscreened, judged when retrieved."""
        snapshot = persistence.read(path)
        persistence.check_embedder(path, snapshot, embedder.name, embedder.dim)
        store = cls(name, embedder, max_chars=max_chars, screen=screen)
        bounds = np.cumsum([0, *(len(d.spans) for d in snapshot.documents)])
        same_screen = screen is not None and snapshot.screen == screen.stamp
        quiet = snapshot.quiet if same_screen else None
        if quiet is None:
            quiet = np.zeros(len(snapshot.vectors), dtype=bool)
        store._insert(
            [
                _Prepared.of(
                    Document(d.doc_id, d.text, base.json_metadata(d.doc_id, d.metadata)),
                    d.spans,
                    snapshot.vectors[bounds[i] : bounds[i + 1]],
                    quiet[bounds[i] : bounds[i + 1]].tolist(),
                )
                for i, d in enumerate(snapshot.documents)
            ]
        )
        return store
