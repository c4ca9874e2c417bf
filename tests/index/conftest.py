"""The index's two backends behind one fixture: ``backend`` runs a test on the embedded store
and on Milvus (a real Milvus 2.5 server from the milvus-lite wheel, one per session)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sentinel_runtime.index.backends import BackendFactory
from sentinel_runtime.index.embedders import Embedder, HashingEmbedder
from sentinel_runtime.index.manager import IndexManager
from support import milvus as milvus_support

_prefixes = itertools.count()


@pytest.fixture(scope="session")
def milvus_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[milvus_support.MilvusServer]:
    if milvus_support.binary() is None:
        pytest.skip(milvus_support.REASON)
    server = milvus_support.MilvusServer(tmp_path_factory.mktemp("milvus")).start()
    yield server
    server.stop()


@dataclass
class Backend:
    """Builds IndexManagers over one backend's persistent state: what a runtime builds at
    start. ``open()`` again is a restart (embedded: the files; Milvus: a new connection)."""

    kind: str
    persist_dir: Path
    url: str = ""
    prefix: str = ""
    opened: list[IndexManager] = field(default_factory=list)

    def factory(self, prefix: str | None = None) -> BackendFactory | None:
        if self.kind == "embedded":
            return None
        from sentinel_runtime.index.milvus import MilvusBackend

        def build(embedder: Embedder, persist_dir: Path | None, max_chars: int) -> MilvusBackend:
            return MilvusBackend(
                embedder,
                self.url,
                prefix=prefix or self.prefix,
                persist_dir=persist_dir,
                max_chars=max_chars,
            )

        return build

    def open(
        self, embedder: Embedder | None = None, *, max_chars: int = 1000, prefix: str | None = None
    ) -> IndexManager:
        manager = IndexManager(
            embedder or HashingEmbedder(),
            self.persist_dir,
            max_chars=max_chars,
            backend=self.factory(prefix),
        )
        self.opened.append(manager)
        return manager

    def close(self) -> None:
        for manager in self.opened:
            if self.kind == "milvus":
                for name in manager.names():
                    manager.backend.drop(name)
            manager.close()


@pytest.fixture(params=["embedded", "milvus"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "embedded":
        made = Backend("embedded", tmp_path / "persist")
    else:
        server = request.getfixturevalue("milvus_server")
        made = Backend("milvus", tmp_path / "persist", server.url, f"t{next(_prefixes)}")
    yield made
    made.close()
