"""``MilvusBackend``: the indexes of one collection prefix in one Milvus
(``base.StoreBackend``). Creates, opens, lists, drops and restores collections; each open
index is a ``store.MilvusStore``. The collection layout is ``schema``'s.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from sentinel_runtime.index import base, chunking, persistence
from sentinel_runtime.index.base import IndexExistsError, IndexNotFound, VectorDBError
from sentinel_runtime.index.embedders import Embedder
from sentinel_runtime.index.milvus import connection, schema
from sentinel_runtime.index.milvus.store import Clock, MilvusStore

# Under the package's name, as when the store was one module.
logger = logging.getLogger("sentinel_runtime.index.milvus")


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
        self.embedder = embedder
        self.url = url
        self.prefix = prefix
        self.max_chars = max_chars
        self._lock = threading.Lock()
        self._clock = Clock()
        self._stores: dict[str, MilvusStore] = {}
        self.client = connection.connect(url, token, timeout)
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
        return connection.error(self.url, exc)

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return connection.call(self.client, method, *args, describe=self._error, **kwargs)

    def _store(self, name: str) -> MilvusStore:
        return MilvusStore(
            self.client,
            schema.collection_name(self.prefix, name),
            name,
            self.embedder,
            max_chars=self.max_chars,
            clock=self._clock,
            describe_error=self._error,
        )

    def _open(self, name: str) -> MilvusStore:
        """Check that the collection is a Sentinel index of this embedder, and loaded."""
        collection = schema.collection_name(self.prefix, name)
        described = self._call("describe_collection", collection)
        schema.check_collection(described, collection, name, self.embedder)
        state = self._call("get_load_state", collection).get("state")
        if getattr(state, "name", str(state)) != "Loaded":
            self._call("load_collection", collection)
        return self._store(name)

    def names(self) -> list[str]:
        found = (schema.index_name(self.prefix, c) for c in self._call("list_collections"))
        return sorted(n for n in found if n is not None)

    def lookup(self, name: str) -> MilvusStore | None:
        if not self._call("has_collection", schema.collection_name(self.prefix, name)):
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
        fields, indexes = schema.collection_schema(self.client, self.embedder, name)
        self._call(
            "create_collection",
            schema.collection_name(self.prefix, name),
            schema=fields,
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
        collection = schema.collection_name(self.prefix, name)
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
