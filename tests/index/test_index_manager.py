"""IndexManager: names, create on first add, persistence after every change (a restart
loses nothing), persist/load, and client paths confined to the persist directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sentinel_runtime.index.embedders import HashingEmbedder
from sentinel_runtime.index.manager import (
    IndexExistsError,
    IndexManager,
    IndexNotFound,
    PathNotAllowedError,
)
from sentinel_runtime.index.types import Document

DOCS = [Document("a", "Alpha text about invoices."), Document("b", "Beta text about refunds.")]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("", id="empty"),
        pytest.param("-leading-dash", id="leading-dash"),
        pytest.param("has space", id="space"),
        pytest.param("../escape", id="path"),
        pytest.param("a/b", id="slash"),
        pytest.param("x" * 64, id="too-long"),
        pytest.param("ünïcode", id="non-ascii"),
    ],
)
def test_invalid_names_are_refused_everywhere(name: str) -> None:
    manager = IndexManager(HashingEmbedder())
    for call in (
        lambda: manager.add_documents(name, DOCS),
        lambda: manager.get(name),
        lambda: manager.delete(name),
        lambda: manager.load(name),
    ):
        with pytest.raises(ValueError, match="invalid index name"):
            call()


@pytest.mark.parametrize("name", ["a", "kb", "Team.docs_v2-1", "9" * 63])
def test_valid_names(name: str) -> None:
    manager = IndexManager(HashingEmbedder())
    manager.add_documents(name, DOCS)
    assert manager.names() == [name] and manager.get(name).document_count == 2


def test_an_index_is_created_by_its_first_documents_and_not_by_bad_ones() -> None:
    manager = IndexManager(HashingEmbedder())
    with pytest.raises(IndexNotFound, match="index 'kb' does not exist"):
        manager.get("kb")
    with pytest.raises(ValueError, match="has no text"):
        manager.add_documents("kb", [Document("a", " ")])
    assert manager.names() == []
    manager.add_documents("kb", DOCS)
    manager.add_documents("kb", [Document("c", "Gamma.")])
    assert manager.get("kb").document_count == 3


def test_unknown_indexes_are_not_found() -> None:
    manager = IndexManager(HashingEmbedder())
    for call in (
        lambda: manager.update_documents("nope", DOCS),
        lambda: manager.delete_documents("nope", ["a"]),
        lambda: manager.delete("nope"),
        lambda: manager.persist("nope", Path("/tmp")),
    ):
        with pytest.raises(IndexNotFound):
            call()


def test_every_change_is_persisted_and_a_restart_finds_it(tmp_path: Path) -> None:
    first = IndexManager(HashingEmbedder(), tmp_path)
    first.add_documents("kb", DOCS)
    first.add_documents("other", [Document("x", "Other index text.")])
    first.update_documents("kb", [Document("a", "Alpha text, revised.")])
    first.delete_documents("kb", ["b"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "kb.sentinel-index",
        "other.sentinel-index",
    ]

    restarted = IndexManager(HashingEmbedder(), tmp_path)
    assert restarted.names() == ["kb", "other"]
    docs, total = restarted.get("kb").list_documents()
    assert total == 1 and docs[0] == Document("a", "Alpha text, revised.")
    assert restarted.get("kb").search("revised alpha", 1)[0].chunk.chunk_id == "a#p0"

    restarted.delete("other")
    assert not (tmp_path / "other.sentinel-index").exists()
    assert IndexManager(HashingEmbedder(), tmp_path).names() == ["kb"]


def test_start_removes_unfinished_writes_and_ignores_foreign_names(tmp_path: Path) -> None:
    IndexManager(HashingEmbedder(), tmp_path).add_documents("kb", DOCS)
    (tmp_path / ".kb.sentinel-index.abc123.tmp").write_bytes(b"half a write")
    (tmp_path / "bad name.sentinel-index").write_bytes(b"whatever")
    manager = IndexManager(HashingEmbedder(), tmp_path)
    assert manager.names() == ["kb"]
    assert not (tmp_path / ".kb.sentinel-index.abc123.tmp").exists()


def test_start_quarantines_an_index_of_another_embedder(tmp_path: Path) -> None:
    IndexManager(HashingEmbedder(), tmp_path).add_documents("kb", DOCS)
    manager = IndexManager(HashingEmbedder(dim=128), tmp_path)
    assert manager.names() == []
    [record] = manager.quarantined()
    assert record.problem == "incompatible" and "built with embedder" in record.reason
    assert record.moved_to is not None and record.moved_to.parent == tmp_path / "quarantine"
    # Moved aside, not lost: the embedder it was built with serves it again.
    os.rename(record.moved_to, tmp_path / "kb.sentinel-index")
    assert IndexManager(HashingEmbedder(), tmp_path).get("kb").document_count == 2


def test_persist_and_load_elsewhere_with_overwrite(tmp_path: Path) -> None:
    manager = IndexManager(HashingEmbedder(), tmp_path / "live")
    manager.add_documents("kb", DOCS)
    backup = tmp_path / "live" / "backup"
    assert manager.persist("kb", backup) == backup / "kb.sentinel-index"
    manager.delete_documents("kb", ["a", "b"])
    assert manager.get("kb").document_count == 0

    with pytest.raises(IndexExistsError, match="overwrite"):
        manager.load("kb", backup)
    manager.load("kb", backup, overwrite=True)
    assert manager.get("kb").document_count == 2
    # The loaded content is what a restart serves.
    assert IndexManager(HashingEmbedder(), tmp_path / "live").get("kb").document_count == 2

    manager.delete("kb")
    manager.load("kb", backup)
    assert manager.names() == ["kb"]
    with pytest.raises(FileNotFoundError):
        manager.load("absent", backup)


def test_persist_without_any_directory_is_refused() -> None:
    manager = IndexManager(HashingEmbedder())
    manager.add_documents("kb", DOCS)
    with pytest.raises(PathNotAllowedError, match="no persist directory"):
        manager.persist("kb")


@pytest.mark.parametrize(
    ("path", "inside"),
    [
        pytest.param(None, "", id="default"),
        pytest.param("backups/today", "backups/today", id="relative"),
        pytest.param("./a/../b", "b", id="dots-inside"),
        pytest.param("{base}/snap", "snap", id="absolute-inside"),
    ],
)
def test_confine_accepts_paths_inside(tmp_path: Path, path: str | None, inside: str) -> None:
    manager = IndexManager(HashingEmbedder(), tmp_path)
    given = path.format(base=tmp_path) if path else None
    assert manager.confine(given) == (tmp_path / inside).resolve()


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("../elsewhere", id="parent"),
        pytest.param("/etc", id="absolute-outside"),
        pytest.param("a/../../x", id="dots-outside"),
        pytest.param("link/inner", id="symlink-outside"),
        pytest.param("~", id="home"),
    ],
)
def test_confine_refuses_paths_outside(tmp_path: Path, path: str) -> None:
    base = tmp_path / "persist"
    base.mkdir()
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", base / "link")
    manager = IndexManager(HashingEmbedder(), base)
    with pytest.raises(PathNotAllowedError, match="outside the persist directory"):
        manager.confine(path)


def test_confine_without_persist_dir_is_refused() -> None:
    with pytest.raises(PathNotAllowedError, match="VECTOR_DB_PERSIST_DIR"):
        IndexManager(HashingEmbedder()).confine("x")
