"""The two ``base.StoreBackend``s and the choice between them (``VECTOR_DB_TYPE``).

* ``EmbeddedBackend`` (``embedded``, the default): ``store.IndexStore``s in this process.
  With a persist directory every index found there is loaded at start and each one is
  rewritten after every change (``persistence``), so a restart loses nothing. Each file is
  loaded on its own: one that cannot be (damaged, a symbolic link, another embedder's) is
  quarantined, moved aside into ``<dir>/quarantine/`` and reported (``quarantined``), and
  the runtime serves the others. One process owns the files: two replicas would hold two
  diverging indexes.
* ``milvus.MilvusBackend`` (``milvus``): one Milvus collection per index. The documents live
  in Milvus, so every runtime pointed at the same Milvus (``VECTOR_DB_URL``) serves the same
  indexes.

``IndexManager(embedder, persist_dir, backend=from_settings(settings))`` builds the one the
settings name.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sentinel_runtime.index import base, chunking, memory, persistence
from sentinel_runtime.index.base import IndexExistsError
from sentinel_runtime.index.embedders import Embedder
from sentinel_runtime.index.screening import Screen
from sentinel_runtime.index.store import IndexStore
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event

if TYPE_CHECKING:
    from sentinel_runtime.settings import Settings

logger = logging.getLogger(__name__)

# What IndexManager calls to build its backend: (embedder, persist_dir, max_chars).
BackendFactory = Callable[[Embedder, Path | None, int], base.StoreBackend]


class EmbeddedBackend:
    kind = "embedded"

    def __init__(
        self,
        embedder: Embedder,
        persist_dir: Path | None = None,
        max_chars: int = chunking.DEFAULT_MAX_CHARS,
        *,
        valid_name: Callable[[str], bool] = lambda _: True,
        screen: Screen | None = None,
    ) -> None:
        self.embedder = embedder
        self.persist_dir = persist_dir
        self.max_chars = max_chars
        self.screen = screen
        self._lock = threading.Lock()
        self._stores: dict[str, IndexStore] = {}
        # Files moved aside at start, because they could not be loaded.
        self.quarantined: list[persistence.Quarantined] = []
        if persist_dir is not None:
            self._load_all(persist_dir, valid_name)

    def _load_all(self, directory: Path, valid_name: Callable[[str], bool]) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        for stale in persistence.remove_stale_temporaries(directory):
            logger.warning("removed the unfinished index write %s", stale.name)
        for path in sorted(directory.glob(f"*{persistence.SUFFIX}")):
            name = path.name.removesuffix(persistence.SUFFIX)
            if not valid_name(name):
                logger.warning("ignored %s: not a valid index name", path.name)
                continue
            try:
                self._stores[name] = IndexStore.load(
                    path, name, self.embedder, max_chars=self.max_chars, screen=self.screen
                )
            except Exception as exc:  # one bad file must not stop the start
                self._quarantine(path, exc)

    def _quarantine(self, path: Path, exc: Exception) -> None:
        """Move a file that could not be loaded aside: serving without it and then saving a
        new index of the same name must not overwrite the documents it may still hold."""
        problem = exc.problem if isinstance(exc, persistence.IndexFileError) else "damaged"
        reason = str(exc) or type(exc).__name__
        record = persistence.quarantine(path, problem, reason)
        self.quarantined.append(record)
        metrics.INDEX_FILES_QUARANTINED.labels(problem).inc()
        log_event(
            logger,
            events.INDEX_FILE_QUARANTINED,
            logging.ERROR,
            file=str(path),
            moved_to=str(record.moved_to) if record.moved_to is not None else None,
            problem=problem,
            reason=reason,
        )

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._stores)

    def lookup(self, name: str) -> IndexStore | None:
        return self._stores.get(name)

    def create(self, name: str) -> tuple[IndexStore, bool]:
        with self._lock:
            store = self._stores.get(name)
            if store is not None:
                return store, False
            store = self._stores[name] = IndexStore(
                name, self.embedder, max_chars=self.max_chars, screen=self.screen
            )
            return store, True

    def discard_if_empty(self, name: str, store: base.Store) -> None:
        with self._lock:
            if self._stores.get(name) is store and not store.document_count:
                del self._stores[name]

    def _file(self, name: str) -> Path | None:
        return persistence.index_file(self.persist_dir, name) if self.persist_dir else None

    def changed(self, store: base.Store) -> None:
        file = self._file(store.name)
        if file is not None:
            store.save(file)

    def drop(self, name: str) -> bool:
        with self._lock:
            store = self._stores.pop(name, None)
        if store is None:
            return False
        store.retire(remove=self._file(name))
        large = store.chunk_count >= memory.RELEASE_MIN_CHUNKS
        del store  # the last reference but those of requests still in flight
        if large:
            memory.release()
        return True

    def restore(self, name: str, file: Path, overwrite: bool) -> IndexStore:
        home = self._file(name)
        with self._lock:
            live = self._stores.get(name)
        if live is not None and home is not None and file.resolve() == home.resolve():
            # Its own file, which every change is saved to: the index already is what that
            # file holds (a KAITO client loads from where it persisted, after a restart too).
            return live
        if name in self._stores and not overwrite:
            raise IndexExistsError(f"index {name!r} exists; load with overwrite to replace it")
        store = IndexStore.load(
            file, name, self.embedder, max_chars=self.max_chars, screen=self.screen
        )
        with self._lock:
            if name in self._stores and not overwrite:
                raise IndexExistsError(f"index {name!r} exists; load with overwrite to replace it")
            previous = self._stores.get(name)
            self._stores[name] = store
        if previous is not None:
            previous.retire()
        if home is not None and (not home.exists() or home.resolve() != file.resolve()):
            store.save(home)  # so that a restart serves what was loaded
        return store

    def close(self) -> None:
        pass


def from_settings(settings: Settings) -> BackendFactory | None:
    """The backend ``VECTOR_DB_TYPE`` names; None means the embedded default."""
    if settings.VECTOR_DB_TYPE == "embedded":
        return None
    from sentinel_runtime.index import milvus

    url = settings.VECTOR_DB_URL.strip()
    secret = settings.VECTOR_DB_ACCESS_SECRET
    prefix = settings.VECTOR_DB_COLLECTION_PREFIX

    def factory(embedder: Embedder, persist_dir: Path | None, max_chars: int) -> base.StoreBackend:
        return milvus.MilvusBackend(
            embedder,
            url,
            token=secret,
            prefix=prefix,
            persist_dir=persist_dir,
            max_chars=max_chars,
        )

    return factory
