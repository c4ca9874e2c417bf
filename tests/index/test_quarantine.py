"""Start-up that survives its own data: each index file in the persist directory is loaded on
its own; one that cannot be (damaged, a symbolic link, another embedder's) is moved aside into
``quarantine/`` with its reason, never deleted and never loaded again, and the others serve."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import pytest
from prometheus_client import REGISTRY

from sentinel_runtime.index import persistence
from sentinel_runtime.index.embedders import HashingEmbedder
from sentinel_runtime.index.manager import IndexManager
from sentinel_runtime.index.types import Document

DOCS = [Document("a", "Alpha text about invoices."), Document("b", "Beta text about refunds.")]


def quarantined_total(problem: str) -> float:
    labels = {"problem": problem}
    return REGISTRY.get_sample_value("rag_index_files_quarantined_total", labels) or 0.0


def persisted(directory: Path, *names: str) -> None:
    manager = IndexManager(HashingEmbedder(), directory)
    for name in names:
        manager.add_documents(name, DOCS)


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


def garbage(path: Path) -> None:
    path.write_bytes(b"not an index at all")


def empty(path: Path) -> None:
    path.write_bytes(b"")


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(truncate, id="truncated"),
        pytest.param(garbage, id="garbage"),
        pytest.param(empty, id="empty"),
    ],
)
def test_a_damaged_file_is_quarantined_and_the_others_serve(
    tmp_path: Path, damage, caplog: pytest.LogCaptureFixture
) -> None:
    persisted(tmp_path, "good", "broken")
    original = (tmp_path / "broken.sentinel-index").read_bytes()
    damage(tmp_path / "broken.sentinel-index")
    damaged = (tmp_path / "broken.sentinel-index").read_bytes()
    before = quarantined_total("damaged")

    with caplog.at_level(logging.ERROR):
        manager = IndexManager(HashingEmbedder(), tmp_path)

    assert manager.names() == ["good"]
    assert manager.get("good").search("invoices", 1)[0].chunk.doc_id == "a"
    [record] = manager.quarantined()
    assert record.file == tmp_path / "broken.sentinel-index"
    assert record.problem == "damaged" and "broken.sentinel-index" in record.reason
    # Moved aside, not deleted: the same bytes, under a name that says when.
    assert record.moved_to is not None
    assert record.moved_to.parent == tmp_path / "quarantine"
    assert record.moved_to.name.startswith("broken.sentinel-index.")
    assert record.moved_to.read_bytes() == damaged != original
    assert not (tmp_path / "broken.sentinel-index").exists()
    reason = json.loads(Path(f"{record.moved_to}.reason.json").read_text())
    assert reason["file"] == str(record.file) and reason["reason"] == record.reason
    assert quarantined_total("damaged") == before + 1
    assert "rag_index_file_quarantined" in caplog.text

    # Never loaded again, and a new index of that name does not touch the quarantined file.
    restarted = IndexManager(HashingEmbedder(), tmp_path)
    assert restarted.names() == ["good"] and restarted.quarantined() == []
    restarted.add_documents("broken", [Document("n", "A new start.")])
    assert record.moved_to.read_bytes() == damaged


def test_a_symlinked_index_file_is_refused_and_the_link_moved_not_its_target(
    tmp_path: Path,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    persisted(elsewhere, "kb")
    target = elsewhere / "kb.sentinel-index"
    content = target.read_bytes()
    live = tmp_path / "live"
    persisted(live, "good")
    os.symlink(target, live / "kb.sentinel-index")
    before = quarantined_total("symlink")

    manager = IndexManager(HashingEmbedder(), live)

    assert manager.names() == ["good"]  # a valid index behind the link, and still refused
    [record] = manager.quarantined()
    assert record.problem == "symlink" and "symbolic link" in record.reason
    assert record.moved_to is not None and record.moved_to.is_symlink()
    assert os.readlink(record.moved_to) == str(target)
    assert target.read_bytes() == content  # the target is neither moved nor changed
    assert not (live / "kb.sentinel-index").is_symlink()
    assert quarantined_total("symlink") == before + 1


def test_reading_never_follows_a_symlink(tmp_path: Path) -> None:
    persisted(tmp_path, "kb")
    link = tmp_path / "link.sentinel-index"
    os.symlink(tmp_path / "kb.sentinel-index", link)
    with pytest.raises(persistence.IndexFileError, match="symbolic link") as raised:
        persistence.read(link)
    assert raised.value.problem == "symlink"
    os.symlink(tmp_path / "absent", tmp_path / "dangling.sentinel-index")
    with pytest.raises(persistence.IndexFileError, match="symbolic link"):
        persistence.read(tmp_path / "dangling.sentinel-index")


def test_a_file_of_another_format_version_is_quarantined_as_incompatible(
    tmp_path: Path,
) -> None:
    meta = {"format": "sentinel-index", "version": 9, "embedder": {}, "documents": []}
    encoded = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with (tmp_path / "kb.sentinel-index").open("wb") as handle:
        np.savez(handle, meta=encoded, vectors=np.zeros((0, 384), np.float32))
    manager = IndexManager(HashingEmbedder(), tmp_path)
    [record] = manager.quarantined()
    assert record.problem == "incompatible" and "format version 9" in record.reason


def test_quarantined_names_never_collide(tmp_path: Path) -> None:
    for _ in range(2):
        persisted(tmp_path, "kb")
        garbage(tmp_path / "kb.sentinel-index")
        IndexManager(HashingEmbedder(), tmp_path)
    kept = sorted(p.name for p in (tmp_path / "quarantine").iterdir() if "reason" not in p.name)
    assert len(kept) == 2  # the same second twice: the second gets a suffix
