"""Named indexes (``store``) of one process, and where their files live (``persistence``).

With a persist directory, every index found there is loaded at start and each one is
rewritten after every change, so a restart loses nothing. Client-supplied paths (the HTTP
``/persist`` and ``/load``) go through ``confine``: only paths inside the persist directory
are ever read or written for a client.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sentinel_runtime.index import chunking, persistence
from sentinel_runtime.index.embedders import Embedder
from sentinel_runtime.index.store import IndexStore
from sentinel_runtime.index.types import Document

logger = logging.getLogger(__name__)

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")


class IndexNotFound(LookupError):  # noqa: N818 (the name callers know from the brief)
    def __init__(self, name: str) -> None:
        super().__init__(f"index {name!r} does not exist")
        self.name = name


class IndexExistsError(ValueError):
    """Loading would replace a live index and ``overwrite`` was not given."""


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
    ) -> None:
        self.embedder = embedder
        self.persist_dir = persist_dir
        self.max_chars = max_chars
        self._lock = threading.Lock()
        self._stores: dict[str, IndexStore] = {}
        if persist_dir is not None:
            self._load_all(persist_dir)

    def _load_all(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        for stale in persistence.remove_stale_temporaries(directory):
            logger.warning("removed the unfinished index write %s", stale.name)
        for path in sorted(directory.glob(f"*{persistence.SUFFIX}")):
            name = path.name.removesuffix(persistence.SUFFIX)
            if not NAME_PATTERN.fullmatch(name):
                logger.warning("ignored %s: not a valid index name", path.name)
                continue
            # A file this runtime cannot read stops the start: serving without it, then
            # saving a new index of the same name, would destroy the documents in it.
            self._stores[name] = IndexStore.load(
                path, name, self.embedder, max_chars=self.max_chars
            )

    # -- lookup ----------------------------------------------------------------------------

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._stores)

    def __contains__(self, name: str) -> bool:
        return name in self._stores

    def get(self, name: str) -> IndexStore:
        check_name(name)
        store = self._stores.get(name)
        if store is None:
            raise IndexNotFound(name)
        return store

    # -- changes (each persisted when there is a persist directory) -------------------------

    def _autosave(self, store: IndexStore) -> None:
        if self.persist_dir is not None:
            store.save(persistence.index_file(self.persist_dir, store.name))

    def add_documents(self, name: str, documents: Sequence[Document]) -> list[Document]:
        """Index documents, creating the index on its first documents."""
        check_name(name)
        with self._lock:
            store = self._stores.get(name)
            created = store is None
            if store is None:
                store = self._stores[name] = IndexStore(
                    name, self.embedder, max_chars=self.max_chars
                )
        try:
            added = store.add(documents)
        except BaseException:
            if created:
                with self._lock:
                    # Bad first documents leave no empty index behind.
                    if self._stores.get(name) is store and not store.document_count:
                        del self._stores[name]
            raise
        self._autosave(store)
        return added

    def update_documents(
        self, name: str, documents: Sequence[Document]
    ) -> tuple[list[Document], list[Document], list[Document]]:
        store = self.get(name)
        result = store.update(documents)
        if result[0]:
            self._autosave(store)
        return result

    def delete_documents(self, name: str, doc_ids: Sequence[str]) -> tuple[list[str], list[str]]:
        store = self.get(name)
        result = store.delete(doc_ids)
        if result[0]:
            self._autosave(store)
        return result

    def delete(self, name: str) -> None:
        """Drop the index and its persisted file."""
        check_name(name)
        with self._lock:
            store = self._stores.pop(name, None)
        if store is None:
            raise IndexNotFound(name)
        file = persistence.index_file(self.persist_dir, name) if self.persist_dir else None
        store.retire(remove=file)

    # -- files -----------------------------------------------------------------------------

    def confine(self, path: str | None) -> Path:
        """The directory a client names, resolved; it must lie inside the persist directory
        (relative paths are taken from there). No path means the persist directory."""
        if self.persist_dir is None:
            raise PathNotAllowedError("persistence is not configured: set VECTOR_DB_PERSIST_DIR")
        base = self.persist_dir.resolve()
        if not path:
            return base
        resolved = (base / Path(path).expanduser()).resolve()
        if resolved != base and base not in resolved.parents:
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
        """Write ``<path>/<name>.sentinel-index`` (default: the persist directory)."""
        store = self.get(name)
        file = persistence.index_file(self._directory(path), name)
        store.save(file)
        return file

    def load(self, name: str, path: Path | None = None, overwrite: bool = False) -> IndexStore:
        """Read ``<path>/<name>.sentinel-index`` (default: the persist directory) as ``name``."""
        check_name(name)
        file = persistence.index_file(self._directory(path), name)
        if name in self._stores and not overwrite:
            raise IndexExistsError(f"index {name!r} exists; load with overwrite to replace it")
        store = IndexStore.load(file, name, self.embedder, max_chars=self.max_chars)
        with self._lock:
            if name in self._stores and not overwrite:
                raise IndexExistsError(f"index {name!r} exists; load with overwrite to replace it")
            previous = self._stores.get(name)
            self._stores[name] = store
        if previous is not None:
            previous.retire()
        if self.persist_dir is not None:
            home = persistence.index_file(self.persist_dir, name)
            if not home.exists() or home.resolve() != file.resolve():
                self._autosave(store)  # so that a restart serves what was loaded
        return store

    def describe(self) -> dict[str, Any]:
        """Counts per index, for logs and status."""
        with self._lock:
            stores = list(self._stores.values())
        return {s.name: {"documents": s.document_count, "chunks": s.chunk_count} for s in stores}
