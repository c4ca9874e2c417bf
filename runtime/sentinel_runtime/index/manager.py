"""Named indexes (``base.Store``) of one runtime, behind one of the ``backends``.

The manager checks names, creates an index on its first documents (and not on bad ones),
and reads and writes index files for ``/persist`` and ``/load``. Client-supplied paths go
through ``confine``: only paths inside the persist directory are ever read or written for a
client. Where the stores live is the backend's business: in this process, saved to the
persist directory after every change (``backends.EmbeddedBackend``, the default), or in a
Milvus shared by several runtimes (``milvus.MilvusBackend``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from sentinel_runtime.index import base, chunking, persistence
from sentinel_runtime.index.backends import BackendFactory, EmbeddedBackend
from sentinel_runtime.index.base import IndexExistsError, IndexNotFound
from sentinel_runtime.index.embedders import Embedder
from sentinel_runtime.index.screening import Screen
from sentinel_runtime.index.types import Document

__all__ = [
    "NAME_PATTERN",
    "IndexExistsError",
    "IndexManager",
    "IndexNotFound",
    "PathNotAllowedError",
    "check_name",
]


# KAITO's default persist directory (its DEFAULT_VECTOR_DB_PERSIST_DIR), relative to its working
# directory: KAITO persists index NAME to ``storage/NAME`` unless told otherwise.
KAITO_PERSIST_DIR = "storage"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")


def valid_name(name: str) -> bool:
    return NAME_PATTERN.fullmatch(name) is not None


class PathNotAllowedError(ValueError):
    """A client path outside the persist directory, or no persist directory at all."""


def check_name(name: str) -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise ValueError(
            f"invalid index name {name!r}: 1 to 63 characters, letters, digits, '.', '_' "
            "or '-', starting with a letter or digit"
        )
    return name


class IndexManager:
    def __init__(
        self,
        embedder: Embedder,
        persist_dir: Path | None = None,
        *,
        max_chars: int = chunking.DEFAULT_MAX_CHARS,
        backend: BackendFactory | None = None,
        screen: Screen | None = None,
    ) -> None:
        """``backend`` builds where the stores live (``backends.from_settings``); None is
        the embedded store. Building it loads or checks every existing index: the embedded
        store quarantines a file it cannot load (``quarantined``) and serves the others; a
        Milvus collection this embedder cannot read stops the start. ``screen`` judges
        chunks as the embedded store indexes them (``screening``); Milvus does not keep
        the verdicts, so its chunks are judged when retrieved."""
        self.embedder = embedder
        self.persist_dir = persist_dir
        self.max_chars = max_chars
        self.backend: base.StoreBackend = (
            backend(embedder, persist_dir, max_chars)
            if backend is not None
            else EmbeddedBackend(
                embedder, persist_dir, max_chars, valid_name=valid_name, screen=screen
            )
        )

    # -- lookup ----------------------------------------------------------------------------

    def names(self) -> list[str]:
        return self.backend.names()

    def quarantined(self) -> list[persistence.Quarantined]:
        """Index files moved aside at start because they could not be loaded."""
        return list(getattr(self.backend, "quarantined", ()))

    def __contains__(self, name: str) -> bool:
        return bool(NAME_PATTERN.fullmatch(name)) and self.backend.lookup(name) is not None

    def get(self, name: str) -> base.Store:
        check_name(name)
        store = self.backend.lookup(name)
        if store is None:
            raise IndexNotFound(name)
        return store

    # -- changes (the backend persists each one) --------------------------------------------

    def add_documents(self, name: str, documents: Sequence[Document]) -> list[Document]:
        """Index documents, creating the index on its first documents. A request that fails
        (bad documents, the embedder, the save) leaves no index it created behind."""
        check_name(name)
        store, created = self.backend.create(name)
        try:
            added = store.add(documents)
        except BaseException:
            if created:
                # Bad first documents leave no empty index behind.
                self.backend.discard_if_empty(name, store)
            raise
        try:
            self.backend.changed(store)
        except BaseException:
            if created:
                # Not saved: an index that a restart would not find is not served either.
                self.backend.drop(name)
            raise
        return added

    def update_documents(
        self, name: str, documents: Sequence[Document]
    ) -> tuple[list[Document], list[Document], list[Document]]:
        store = self.get(name)
        result = store.update(documents)
        if result[0]:
            self.backend.changed(store)
        return result

    def delete_documents(self, name: str, doc_ids: Sequence[str]) -> tuple[list[str], list[str]]:
        store = self.get(name)
        result = store.delete(doc_ids)
        if result[0]:
            self.backend.changed(store)
        return result

    def delete(self, name: str) -> None:
        """Drop the index and what is persisted of it."""
        check_name(name)
        if not self.backend.drop(name):
            raise IndexNotFound(name)

    # -- files -----------------------------------------------------------------------------

    def confine(self, path: str | None, name: str | None = None) -> Path:
        """The directory a client names, resolved; it must lie inside the persist directory
        (relative paths are taken from there). No path means the persist directory, and so
        does KAITO's default location of index ``name``, ``storage/<name>``: a KAITO client
        that persists without a path and loads from there finds the same file."""
        if self.persist_dir is None:
            raise PathNotAllowedError("persistence is not configured: set VECTOR_DB_PERSIST_DIR")
        base_dir = self.persist_dir.resolve()
        if not path or (name is not None and kaito_default_location(path, name)):
            return base_dir
        resolved = (base_dir / Path(path).expanduser()).resolve()
        if resolved != base_dir and base_dir not in resolved.parents:
            raise PathNotAllowedError(
                f"path {path!r} is outside the persist directory; only paths inside "
                "VECTOR_DB_PERSIST_DIR may be used"
            )
        return resolved

    def _directory(self, path: Path | None) -> Path:
        directory = path if path is not None else self.persist_dir
        if directory is None:
            raise PathNotAllowedError("no path given and no persist directory configured")
        return directory

    def persist(self, name: str, path: Path | None = None) -> Path:
        """Write ``<path>/<name>.sentinel-index`` (default: the persist directory). On the
        Milvus backend this is an export: the documents already live in Milvus."""
        store = self.get(name)
        file = persistence.index_file(self._directory(path), name)
        store.save(file)
        return file

    def load(self, name: str, path: Path | None = None, overwrite: bool = False) -> base.Store:
        """Read ``<path>/<name>.sentinel-index`` (default: the persist directory) as ``name``.
        On the Milvus backend the file's documents are written into Milvus, for every
        runtime that shares it."""
        check_name(name)
        file = persistence.index_file(self._directory(path), name)
        return self.backend.restore(name, file, overwrite)

    def describe(self) -> dict[str, Any]:
        """Counts per index, for logs and status."""
        described = {}
        for name in self.names():
            store = self.backend.lookup(name)
            if store is not None:
                described[name] = {
                    "documents": store.document_count,
                    "chunks": store.chunk_count,
                }
        return described

    def close(self) -> None:
        """Release the backend's connections (the embedder is closed by its owner)."""
        self.backend.close()


def kaito_default_location(path: str, name: str) -> bool:
    """Whether ``path`` is where KAITO persists index ``name`` by default: ``storage/<name>``
    (``./storage/<name>/`` too)."""
    parts = [part for part in PurePosixPath(path).parts if part != "."]
    return parts == [KAITO_PERSIST_DIR, name]
