"""``index.files``: files and folders on disk as index documents, and their batches."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sentinel_runtime.index import files
from sentinel_runtime.index.types import Document
from support.documents import SECURITY_PDF, write_handbook, write_pdf

LIMIT = 2 * 1024 * 1024


def _read(*paths: Path, max_bytes: int = LIMIT) -> tuple[dict[str, Document], list[files.Note]]:
    documents: dict[str, Document] = {}
    notes: list[files.Note] = []
    for item in files.read_paths(paths, max_bytes):
        if isinstance(item, files.Note):
            notes.append(item)
        else:
            documents.update({d.doc_id: d for d in item.documents})
    return documents, notes


def test_a_folder_gives_one_document_per_known_file_with_its_metadata(tmp_path: Path) -> None:
    handbook = write_handbook(tmp_path)
    moment = datetime(2026, 3, 1, 12, 30, tzinfo=UTC).timestamp()
    os.utime(handbook / "leave.md", (moment, moment))
    documents, notes = _read(handbook)
    assert sorted(documents) == [
        "handbook/expenses.html",
        "handbook/leave.md",
        "handbook/parking.txt",
        "handbook/security/laptops.pdf",
    ]
    leave = documents["handbook/leave.md"]
    assert leave.metadata == {
        "source": "handbook/leave.md",
        "title": "leave",
        "timestamp": "2026-03-01T12:30:00+00:00",
    }
    assert leave.text.startswith("Employees get 25 days")
    assert [(n.path.name, n.kind) for n in notes] == [("logo.png", "skipped")]


def test_a_pdf_gives_its_text_layer(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "laptops.pdf", SECURITY_PDF)
    documents, notes = _read(path)
    assert notes == []
    text = documents["laptops.pdf"].text
    assert all(line in text for line in SECURITY_PDF)
    assert documents["laptops.pdf"].metadata["title"] == "laptops"


def test_html_gives_visible_text_in_paragraphs() -> None:
    markup = (
        "<html><head><title>T</title><style>p{}</style><script>x()</script></head><body>"
        "<h1>Title &amp; more</h1><p>First   para\ngraph.</p><div>Second<br>line</div>"
        "<script>alert('no')</script><noscript>hidden</noscript></body></html>"
    )
    assert files.html_text(markup) == "Title & more\n\nFirst para graph.\n\nSecond\n\nline"


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        pytest.param("empty.txt", b"", "no text", id="empty"),
        pytest.param("blank.md", b"  \n\n\t", "no text", id="whitespace-only"),
        pytest.param("latin1.txt", "caf\u00e9".encode("latin-1"), "not UTF-8", id="not-utf8"),
        pytest.param("broken.pdf", b"%PDF-1.4 not really", "not a readable PDF", id="bad-pdf"),
        pytest.param("scripts.html", b"<script>x()</script>", "no text", id="html-no-text"),
    ],
)
def test_unreadable_files_are_notes_not_exceptions(
    tmp_path: Path, name: str, content: bytes, reason: str
) -> None:
    (tmp_path / name).write_bytes(content)
    (tmp_path / "good.txt").write_text("Readable.", encoding="utf-8")
    documents, notes = _read(tmp_path)
    assert list(documents) == [f"{tmp_path.name}/good.txt"]
    assert [n.kind for n in notes] == ["unreadable"]
    assert reason in notes[0].reason


def test_a_missing_path_and_an_unknown_kind_are_reported(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("a,b", encoding="utf-8")
    documents, notes = _read(tmp_path / "nope", tmp_path / "data.csv")
    assert documents == {}
    assert [(n.kind, n.reason) for n in notes] == [
        ("unreadable", "no such file or directory"),
        ("skipped", "unknown kind '.csv'"),
    ]


def test_ids_are_stable_one_word_and_a_file_named_twice_is_read_once(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "team notes.md").write_text("Notes.", encoding="utf-8")
    (folder / "a.txt").write_text("A\x00 text.", encoding="utf-8")
    documents, notes = _read(folder, folder / "a.txt")
    assert notes == []
    assert set(documents) == {"notes/team_notes.md", "notes/a.txt"}
    assert documents["notes/team_notes.md"].metadata["source"] == "notes/team notes.md"
    assert documents["notes/a.txt"].text == "A text."  # the runtime refuses NULs
    again, _ = _read(folder)
    assert again == documents


def test_a_text_over_the_document_limit_is_split_into_parts_within_it(tmp_path: Path) -> None:
    text = "".join(f"Caf\u00e9 policy sentence number {n}. " * 20 + "\n\n" for n in range(40))
    (tmp_path / "long.md").write_text(text, encoding="utf-8")
    limit = 4000
    documents, _ = _read(tmp_path / "long.md", max_bytes=limit)
    ids = list(documents)
    assert ids[0] == "long.md" and ids[1] == "long.md:part2" and len(ids) > 3
    parts = list(documents.values())
    assert all(len(d.text.encode("utf-8")) <= limit for d in parts)
    assert "".join(d.text for d in parts) == text  # nothing lost, nothing repeated
    assert all(d.text.endswith("\n\n") for d in parts[:-1])  # cut at paragraphs
    assert [d.metadata["part"] for d in parts] == list(range(1, len(parts) + 1))
    assert {d.metadata["parts"] for d in parts} == {len(parts)}


def test_split_text_cuts_a_text_without_breaks_between_characters() -> None:
    text = "\u20ac" * 1000  # 3 bytes each
    parts = files.split_text(text, 100)
    assert "".join(parts) == text
    assert all(len(p.encode("utf-8")) <= 100 for p in parts)


@pytest.mark.parametrize(
    ("max_documents", "max_bytes", "sizes"),
    [
        pytest.param(3, 10_000_000, [3, 3, 1], id="by-count"),
        pytest.param(1000, 2500, [2, 2, 2, 1], id="by-bytes"),
    ],
)
def test_batches_stay_within_the_request_limits(
    max_documents: int, max_bytes: int, sizes: list[int]
) -> None:
    documents = [Document(f"d{n}", "x" * 500, {"source": f"d{n}"}) for n in range(7)]
    batches = list(files.batches(documents, max_documents, max_bytes))
    assert [len(b) for b in batches] == sizes
    assert [d for b in batches for d in b] == documents
    for batch in batches:
        body = {
            "index_name": "docs",
            "documents": [
                {"doc_id": d.doc_id, "text": d.text, "metadata": dict(d.metadata)} for d in batch
            ],
        }
        assert len(json.dumps(body).encode()) <= max_bytes
