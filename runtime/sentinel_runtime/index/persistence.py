"""The index file: one ``<name>.sentinel-index`` per index, replaced atomically.

An uncompressed npz holding ``vectors`` (float32, one row per chunk) and ``meta`` (UTF-8
JSON: format, version, embedder name and dimension, documents with their chunk spans), and,
when the index was screened at ingest (``screening``), ``quiet`` (one byte per chunk, in
the rows' order) with the screen's stamp in ``meta``. A file without them reads as
unscreened, so files written before screening existed load as they always did.
Chunk texts are not stored twice: a chunk is a slice of its document (``chunking``).
A write goes to a temporary file in the same directory, is fsync'd, then ``os.replace``d
over the old file, so a crash leaves the old index or the new one, never half of either.
A symbolic link is never read as an index file (opened with ``O_NOFOLLOW``).
``quarantine`` moves a file that cannot be loaded aside, into ``<dir>/quarantine/``, never
deleting it. ``store`` builds and reads the ``Snapshot``; ``manager`` decides where files live.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

FORMAT = "sentinel-index"
VERSION = 1
SUFFIX = ".sentinel-index"
_TEMP_SUFFIX = ".tmp"
QUARANTINE_DIR = "quarantine"

# Why a file was not loaded (a closed set: the quarantine metric's label values).
Problem = Literal["damaged", "symlink", "incompatible"]
PROBLEMS: tuple[Problem, ...] = ("damaged", "symlink", "incompatible")


class IndexFileError(ValueError):
    """The file is not a usable index for this runtime (the message says why; ``problem``
    says which kind: damaged content, a symbolic link, or another format or embedder)."""

    def __init__(self, message: str, problem: Problem = "damaged") -> None:
        super().__init__(message)
        self.problem = problem


@dataclass(frozen=True)
class Quarantined:
    """An index file moved aside at start: where it was, where it is now (None when even
    the move failed: the file is left in place, unloaded), why, and when (Unix seconds)."""

    file: Path
    moved_to: Path | None
    problem: Problem
    reason: str
    at: float

    def describe(self) -> dict[str, Any]:
        return {
            "file": str(self.file),
            "movedTo": str(self.moved_to) if self.moved_to is not None else None,
            "problem": self.problem,
            "reason": self.reason,
            "at": self.at,
        }


@dataclass(frozen=True)
class StoredDocument:
    doc_id: str
    text: str
    metadata: dict[str, Any]
    spans: list[tuple[int, int]]


@dataclass(frozen=True)
class Snapshot:
    embedder: str
    dim: int
    documents: list[StoredDocument]
    vectors: np.ndarray  # rows: the chunks of documents[0], then of documents[1], ...
    quiet: np.ndarray | None = None  # bool per row, set by the screen named ``screen``
    screen: str | None = None


def index_file(directory: Path, name: str) -> Path:
    return directory / f"{name}{SUFFIX}"


def write(path: Path, snapshot: Snapshot) -> None:
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "embedder": {"name": snapshot.embedder, "dim": snapshot.dim},
        "documents": [
            {"doc_id": d.doc_id, "text": d.text, "metadata": d.metadata, "spans": d.spans}
            for d in snapshot.documents
        ],
    }
    arrays = {"vectors": snapshot.vectors.astype(np.float32)}
    if snapshot.screen is not None and snapshot.quiet is not None:
        meta["screen"] = snapshot.screen
        arrays["quiet"] = snapshot.quiet.astype(np.uint8)
    encoded = np.frombuffer(json.dumps(meta, ensure_ascii=False).encode(), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=_TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, meta=encoded, **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    # The rename itself is durable only once the directory entry is on disk.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_stale_temporaries(directory: Path) -> list[Path]:
    """Delete temporary files left by a write that a crash interrupted."""
    stale = [p for p in directory.glob(f".*{SUFFIX}.*{_TEMP_SUFFIX}") if p.is_file()]
    for path in stale:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    return stale


def _open(path: Path) -> int:
    """A descriptor of ``path`` itself: a symbolic link is refused, never followed."""
    try:
        return os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP or path.is_symlink():
            raise IndexFileError(
                f"{path} is a symbolic link; index files are read only as regular files",
                "symlink",
            ) from exc
        raise


def read(path: Path) -> Snapshot:
    """Parse ``path``; any damage or foreign content is an ``IndexFileError``."""
    try:
        with os.fdopen(_open(path), "rb") as handle, np.load(handle, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            vectors = np.ascontiguousarray(data["vectors"], dtype=np.float32)
            quiet = np.asarray(data["quiet"]) if "quiet" in data.files else None
    except (FileNotFoundError, IndexFileError):
        raise
    except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise IndexFileError(f"{path} is not a readable Sentinel index file: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise IndexFileError(f"{path} is not a Sentinel index file")
    if meta.get("version") != VERSION:
        raise IndexFileError(
            f"{path} has index format version {meta.get('version')!r}; "
            f"this runtime reads version {VERSION}",
            "incompatible",
        )
    try:
        embedder = meta["embedder"]
        documents = [
            StoredDocument(
                str(d["doc_id"]),
                str(d["text"]),
                dict(d["metadata"]),
                [(int(s), int(e)) for s, e in d["spans"]],
            )
            for d in meta["documents"]
        ]
        screen = meta.get("screen")
        if (screen is None) != (quiet is None) or not isinstance(screen, str | None):
            raise ValueError("a screen stamp needs its quiet bits, and the bits their stamp")
        snapshot = Snapshot(
            str(embedder["name"]),
            int(embedder["dim"]),
            documents,
            vectors,
            None if quiet is None else quiet.astype(bool),
            screen,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise IndexFileError(f"{path} has damaged metadata: {exc}") from exc
    _check_shapes(path, snapshot)
    return snapshot


def _check_shapes(path: Path, snapshot: Snapshot) -> None:
    rows = sum(len(d.spans) for d in snapshot.documents)
    if snapshot.vectors.shape != (rows, snapshot.dim):
        raise IndexFileError(
            f"{path} holds vectors of shape {snapshot.vectors.shape}; its documents need "
            f"({rows}, {snapshot.dim})"
        )
    if snapshot.quiet is not None and snapshot.quiet.shape != (rows,):
        raise IndexFileError(
            f"{path} holds screening bits of shape {snapshot.quiet.shape}; its documents "
            f"need ({rows},)"
        )
    for doc in snapshot.documents:
        if not doc.spans or any(not 0 <= s < e <= len(doc.text) for s, e in doc.spans):
            raise IndexFileError(f"{path} has damaged chunk spans for {doc.doc_id!r}")


def check_embedder(path: Path, snapshot: Snapshot, name: str, dim: int) -> None:
    if (snapshot.embedder, snapshot.dim) != (name, dim):
        raise IndexFileError(
            f"{path} was built with embedder {snapshot.embedder!r} (dimension {snapshot.dim}); "
            f"this runtime embeds with {name!r} (dimension {dim}). Vectors of different "
            "embedders cannot be compared: re-index the documents, or run with the embedder "
            "the file was built with (EMBEDDING_TYPE, EMBEDDING_MODEL_ID).",
            "incompatible",
        )


def quarantine(path: Path, problem: Problem, reason: str) -> Quarantined:
    """Move ``path`` (the link itself when it is one, never its target) to
    ``<its dir>/quarantine/<name>.<UTC time>``, beside a ``.reason.json`` saying why.
    Nothing is deleted; a move that fails leaves the file where it was (``moved_to`` None)."""
    at = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(at))
    folder = path.parent / QUARANTINE_DIR
    try:
        folder.mkdir(exist_ok=True)
        target = folder / f"{path.name}.{stamp}"
        for n in range(1, 1000):
            if not target.exists() and not target.is_symlink():
                break
            target = folder / f"{path.name}.{stamp}.{n}"
        os.rename(path, target)  # renames a link, never what it points to
    except OSError:
        return Quarantined(path, None, problem, reason, at)
    record = {"file": str(path), "problem": problem, "reason": reason, "at": at}
    with contextlib.suppress(OSError):
        Path(f"{target}.reason.json").write_text(json.dumps(record, indent=2) + "\n")
    return Quarantined(path, target, problem, reason, at)
