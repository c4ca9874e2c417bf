"""The index file: a round trip gives the same index, a killed writer never leaves a
broken one, and files of another format or embedder are refused with a clear error."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sentinel_runtime.index import persistence
from sentinel_runtime.index.embedders import HashingEmbedder
from sentinel_runtime.index.store import IndexStore
from sentinel_runtime.index.types import Document, SearchFilter


def corpus(n: int = 60) -> list[Document]:
    return [
        Document(
            f"d{i}",
            f"Paragraph {i} about invoices and payment terms.\n\n" + "Details follow. " * (i % 90),
            {"source": f"s{i % 3}", "timestamp": f"2024-01-{1 + i % 28:02d}"},
        )
        for i in range(n)
    ]


def test_a_saved_index_loads_back_with_the_same_answers(tmp_path: Path) -> None:
    store = IndexStore("kb", HashingEmbedder(), max_chars=200)
    store.add(corpus())
    store.delete(["d5"])
    store.update([Document("d7", "Changed text about refunds.", {"source": "s1"})])
    path = persistence.index_file(tmp_path, "kb")
    store.save(path)
    loaded = IndexStore.load(path, "kb", HashingEmbedder(), max_chars=200)

    assert loaded.list_documents(0, 100) == store.list_documents(0, 100)
    assert loaded.chunk_count == store.chunk_count > 60
    flt = SearchFilter(sources=("s1",))
    for query, f in [("payment terms details", None), ("refunds", flt)]:
        before = [(h.chunk, h.score, h.similarity, h.lexical) for h in store.search(query, 10, f)]
        after = [(h.chunk, h.score, h.similarity, h.lexical) for h in loaded.search(query, 10, f)]
        assert after == before
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_an_empty_index_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "e.sentinel-index"
    IndexStore("e", HashingEmbedder()).save(path)
    assert IndexStore.load(path, "e", HashingEmbedder()).document_count == 0


WRITER = """
import sys
from pathlib import Path
from sentinel_runtime.index.embedders import HashingEmbedder
from sentinel_runtime.index.store import IndexStore
from sentinel_runtime.index.types import Document

path = Path(sys.argv[1])
store = IndexStore("kb", HashingEmbedder())
store.add([Document(f"d{i}", f"document {i} " + "words " * 80) for i in range(3000)])
store.save(path)
print("ready", flush=True)
while True:  # alternate between 3000 and 3001 documents, saving each state
    store.add([Document("extra", "one more document")])
    store.save(path)
    store.delete(["extra"])
    store.save(path)
"""


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "delay", [pytest.param(d, id=f"kill-after-{d}s") for d in (0.05, 0.23, 0.41)]
)
def test_a_writer_killed_mid_save_leaves_a_whole_index(tmp_path: Path, delay: float) -> None:
    path = tmp_path / "kb.sentinel-index"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        time.sleep(delay)
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
    loaded = IndexStore.load(path, "kb", HashingEmbedder())
    assert loaded.document_count in (3000, 3001)
    assert loaded.chunk_count == loaded.document_count
    persistence.remove_stale_temporaries(tmp_path)
    assert list(tmp_path.iterdir()) == [path]


def write_meta(path: Path, meta: dict, vectors: np.ndarray) -> None:
    encoded = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with path.open("wb") as handle:
        np.savez(handle, meta=encoded, vectors=vectors)


def saved(tmp_path: Path) -> Path:
    path = tmp_path / "kb.sentinel-index"
    store = IndexStore("kb", HashingEmbedder())
    store.add(corpus(3))
    store.save(path)
    return path


def test_another_embedder_is_refused(tmp_path: Path) -> None:
    path = saved(tmp_path)
    with pytest.raises(
        persistence.IndexFileError,
        match=r"built with embedder 'sentinel-hashing-v1-384' \(dimension 384\); "
        r"this runtime embeds with 'sentinel-hashing-v1-256'",
    ):
        IndexStore.load(path, "kb", HashingEmbedder(dim=256))


def test_another_format_version_is_refused(tmp_path: Path) -> None:
    meta = {"format": "sentinel-index", "version": 99, "embedder": {}, "documents": []}
    path = tmp_path / "v99.sentinel-index"
    write_meta(path, meta, np.zeros((0, 384), np.float32))
    with pytest.raises(
        persistence.IndexFileError, match="format version 99; this runtime reads version 1"
    ):
        IndexStore.load(path, "v99", HashingEmbedder())


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(
            lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), id="truncated"
        ),
        pytest.param(lambda p: p.write_bytes(b"not a zip at all"), id="garbage"),
        pytest.param(lambda p: p.write_bytes(b""), id="empty"),
        pytest.param(
            lambda p: write_meta(p, {"format": "other"}, np.zeros((0, 2), np.float32)),
            id="foreign-format",
        ),
        pytest.param(
            lambda p: write_meta(
                p,
                {
                    "format": "sentinel-index",
                    "version": 1,
                    "embedder": {"name": "sentinel-hashing-v1-384", "dim": 384},
                    "documents": [
                        {"doc_id": "a", "text": "abc", "metadata": {}, "spans": [[0, 3]]}
                    ],
                },
                np.zeros((2, 384), np.float32),
            ),
            id="rows-mismatch",
        ),
        pytest.param(
            lambda p: write_meta(
                p,
                {
                    "format": "sentinel-index",
                    "version": 1,
                    "embedder": {"name": "sentinel-hashing-v1-384", "dim": 384},
                    "documents": [
                        {"doc_id": "a", "text": "abc", "metadata": {}, "spans": [[0, 9]]}
                    ],
                },
                np.zeros((1, 384), np.float32),
            ),
            id="span-outside-text",
        ),
    ],
)
def test_damaged_files_are_refused(tmp_path: Path, damage) -> None:
    path = saved(tmp_path)
    damage(path)
    with pytest.raises(persistence.IndexFileError, match=str(path)):
        IndexStore.load(path, "kb", HashingEmbedder())


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        IndexStore.load(tmp_path / "none.sentinel-index", "none", HashingEmbedder())
