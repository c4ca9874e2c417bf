"""Files on disk as index documents, for ``sentinel index`` (``cli_documents``).

``read_paths`` walks files and folders (recursively, in sorted order) and turns each readable
file into one or more ``types.Document``: ``.txt`` and ``.md`` as UTF-8 text, ``.html`` and
``.htm`` through the standard library's ``html.parser`` (the text outside scripts and styles,
one paragraph per block element), ``.pdf`` through ``pypdf`` (the text layer; no OCR). Other
extensions are skipped, and a file that cannot be read or holds no text is reported; both
come back as ``Note``s, never as exceptions.

Each document's ``doc_id`` is the file's path relative to the parent of the argument that
named it (``sentinel index handbook`` gives ``handbook/hr/leave.md``), with whitespace as
``_`` (a citation marker is one word), so indexing the same files again replaces them. Its
metadata: ``source`` (that relative path: the gate's source restrictions match it),
``title`` (the file's stem) and ``timestamp`` (the file's modification time, ISO 8601 in
UTC: the gate's freshness reads it). A text over ``max_bytes`` of UTF-8 is split at
paragraph, then line, then character boundaries into parts ``<doc_id>``,
``<doc_id>:part2``, ... (``part``/``parts`` in their metadata), each within the limit.

``batches`` groups documents into requests within the runtime's limits (documents per
request, bytes per request body). Nothing here speaks HTTP or touches an index.
"""

from __future__ import annotations

import html.parser
import json
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sentinel_runtime.index.types import Document

TEXT_SUFFIXES = (".txt", ".md")
HTML_SUFFIXES = (".html", ".htm")
PDF_SUFFIXES = (".pdf",)
SUFFIXES = (*TEXT_SUFFIXES, *HTML_SUFFIXES, *PDF_SUFFIXES)

# What one document's JSON costs around its text in a request body (ids, metadata, quotes).
_ENVELOPE_BYTES = 1024


class UnreadableError(Exception):
    """A file of a known kind whose text cannot be read (its message says why)."""


@dataclass(frozen=True)
class Note:
    """A file that gave no document: ``skipped`` (an unknown kind) or ``unreadable``."""

    path: Path
    kind: str  # "skipped" | "unreadable"
    reason: str

    def describe(self) -> str:
        return f"{self.kind}: {self.path}: {self.reason}"


@dataclass(frozen=True)
class FileDocuments:
    """The documents one file gave (several when it was split into parts)."""

    path: Path
    documents: tuple[Document, ...]


# -- text extraction --------------------------------------------------------------------------


class _HtmlText(html.parser.HTMLParser):
    """The visible text of an HTML page, a paragraph per block element."""

    HIDDEN = frozenset({"script", "style", "noscript", "template", "head"})
    BLOCKS = frozenset(
        [
            "address",
            "article",
            "aside",
            "blockquote",
            "br",
            "dd",
            "div",
            "dl",
            "dt",
            "figcaption",
            "figure",
            "footer",
            "form",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "header",
            "hr",
            "li",
            "main",
            "nav",
            "ol",
            "p",
            "pre",
            "section",
            "table",
            "td",
            "th",
            "tr",
            "ul",
        ]
    )

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hidden = 0
        self.paragraphs: list[list[str]] = [[]]
        self.title: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HIDDEN:
            self.hidden += 1
        if tag in self.BLOCKS:
            self.paragraphs.append([])

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN and self.hidden:
            self.hidden -= 1
        if tag in self.BLOCKS:
            self.paragraphs.append([])

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.paragraphs[-1].append(data)

    def text(self) -> str:
        joined = (" ".join("".join(p).split()) for p in self.paragraphs)
        return "\n\n".join(p for p in joined if p)


def html_text(markup: str) -> str:
    parser = _HtmlText()
    parser.feed(markup)
    parser.close()
    return parser.text()


def pdf_text(path: Path) -> str:
    """The text layer of every page, pages separated by a blank line."""
    import pypdf
    from pypdf.errors import PyPdfError

    # pypdf logs what it repairs in a damaged file; what matters is reported by the caller.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = pypdf.PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableError("encrypted PDF (a password is needed)")
        pages = [page.extract_text() or "" for page in reader.pages]
    except UnreadableError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UnreadableError(f"not a readable PDF ({type(exc).__name__}: {exc})") from exc
    return "\n\n".join(page.strip() for page in pages if page.strip())


def _utf8(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableError(f"not UTF-8 text (byte {exc.start})") from exc


def file_text(path: Path) -> str:
    """The text of one file of a known kind; UnreadableError or OSError when it has none."""
    suffix = path.suffix.lower()
    if suffix in PDF_SUFFIXES:
        text = pdf_text(path)
    elif suffix in HTML_SUFFIXES:
        text = html_text(_utf8(path))
    else:
        text = _utf8(path)
    # The runtime refuses a NUL anywhere in a request: it is no text anyway.
    text = text.replace("\x00", "")
    if not text.strip():
        hint = " (a scanned PDF has no text layer; there is no OCR)" if suffix == ".pdf" else ""
        raise UnreadableError(f"no text{hint}")
    return text


# -- documents --------------------------------------------------------------------------------


def doc_id_for(relative: str) -> str:
    return re.sub(r"\s", "_", relative)


def split_text(text: str, max_bytes: int) -> list[str]:
    """``text`` in consecutive pieces of at most ``max_bytes`` UTF-8 bytes each, cut after a
    blank line where possible, else after a line, else between characters."""
    if len(text.encode("utf-8")) <= max_bytes:
        return [text]
    parts: list[str] = []
    rest = text
    while len(rest.encode("utf-8")) > max_bytes:
        # The longest prefix within the limit, in characters (at most 4 bytes each).
        head = rest[:max_bytes]
        while len(head.encode("utf-8")) > max_bytes:
            head = head[: len(head) - (len(head.encode("utf-8")) - max_bytes + 3) // 4]
        cut = next(
            (at + len(sep) for sep in ("\n\n", "\n", " ") if (at := head.rfind(sep)) > 0),
            len(head),
        )
        piece, rest = rest[:cut], rest[cut:]
        if piece.strip():
            parts.append(piece)
    if rest.strip():
        parts.append(rest)
    return parts


def file_documents(path: Path, relative: str, max_bytes: int) -> tuple[Document, ...]:
    """One file as documents (see the module docstring for ids, metadata and parts)."""
    text = file_text(path)
    stat = path.stat()
    metadata = {
        "source": relative,
        "title": path.stem,
        "timestamp": datetime.fromtimestamp(stat.st_mtime, UTC).isoformat(),
    }
    doc_id = doc_id_for(relative)
    parts = split_text(text, max_bytes)
    if len(parts) == 1:
        return (Document(doc_id, text, metadata),)
    return tuple(
        Document(
            doc_id if number == 1 else f"{doc_id}:part{number}",
            part,
            {**metadata, "part": number, "parts": len(parts)},
        )
        for number, part in enumerate(parts, start=1)
    )


@dataclass(frozen=True)
class Found:
    """A file of a known kind, and its path relative to the parent of the argument."""

    path: Path
    relative: str


def _walk(argument: Path) -> Iterator[tuple[Path, str]]:
    """(file, its path relative to the argument's parent) under one argument, sorted."""
    resolved = argument.resolve()
    base = resolved.parent
    if resolved.is_dir():
        candidates = sorted(p for p in resolved.rglob("*") if p.is_file())
    else:
        candidates = [resolved]
    for path in candidates:
        yield path, path.relative_to(base).as_posix()


def find_files(arguments: Iterable[Path]) -> Iterator[Found | Note]:
    """Every file under ``arguments`` (files and folders), once: known kinds as ``Found``,
    the others, missing arguments and document-id clashes as ``Note``s."""
    seen: dict[str, Path] = {}
    read: set[Path] = set()
    for argument in arguments:
        if not argument.exists():
            yield Note(argument, "unreadable", "no such file or directory")
            continue
        for path, relative in _walk(argument):
            if path.suffix.lower() not in SUFFIXES:
                yield Note(path, "skipped", f"unknown kind {path.suffix or '(no extension)'!r}")
                continue
            doc_id = doc_id_for(relative)
            if path in read:
                continue  # named again (a file inside a folder named too): its first id holds
            if doc_id in seen:
                yield Note(path, "unreadable", f"same document id {doc_id!r} as {seen[doc_id]}")
                continue
            seen[doc_id] = path
            read.add(path)
            yield Found(path, relative)


def read_file(found: Found, max_bytes: int) -> FileDocuments | Note:
    """One file's documents, or a note saying why it has none."""
    try:
        return FileDocuments(found.path, file_documents(found.path, found.relative, max_bytes))
    except UnreadableError as exc:
        return Note(found.path, "unreadable", str(exc))
    except OSError as exc:
        return Note(found.path, "unreadable", exc.strerror or str(exc))


def read_paths(arguments: Iterable[Path], max_bytes: int) -> Iterator[FileDocuments | Note]:
    """Every file under ``arguments``, as its documents or as a note saying why not."""
    for item in find_files(arguments):
        yield read_file(item, max_bytes) if isinstance(item, Found) else item


def request_bytes(document: Document) -> int:
    """What ``document`` adds to a JSON request body (its text escaped as JSON, ids, metadata)."""
    body = {"doc_id": document.doc_id, "text": document.text, "metadata": dict(document.metadata)}
    return len(json.dumps(body, ensure_ascii=False).encode("utf-8")) + 2


def batches(
    documents: Iterable[Document], max_documents: int, max_request_bytes: int
) -> Iterator[list[Document]]:
    """``documents`` in order, grouped so that no group has more than ``max_documents`` and
    none is larger than ``max_request_bytes`` as a JSON body (a single document always forms
    a group, however large: the caller's split keeps its text within the document limit)."""
    batch: list[Document] = []
    size = _ENVELOPE_BYTES
    for document in documents:
        cost = request_bytes(document)
        if batch and (len(batch) >= max_documents or size + cost > max_request_bytes):
            yield batch
            batch, size = [], _ENVELOPE_BYTES
        batch.append(document)
        size += cost
    if batch:
        yield batch
