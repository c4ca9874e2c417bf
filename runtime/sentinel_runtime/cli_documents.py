"""``sentinel index PATH…`` and ``sentinel ask "question"``: one's own documents from the shell.

Both talk to a running runtime over HTTP (``--url`` or ``SENTINEL_URL``, ``--api-key`` or
``RUNTIME_API_KEY``), or
with ``--local`` to the persist directory directly: ``index --local`` writes through the
``index.manager.IndexManager`` (as the runtime would, so a later ``sentinel serve`` with that
directory serves it; do not run it while a runtime owns the same directory), ``ask --local``
builds the app in this process and asks it without a server.

Files become documents in ``index.files`` (kinds, metadata, parts); this module sends them in
batches within the runtime's limits (``MAX_DOCUMENTS_PER_REQUEST``, ``MAX_REQUEST_BYTES``,
``MAX_DOCUMENT_BYTES``, read from the environment as the runtime reads them), the new
documents through KAITO's ``POST /index`` and the ones the index already holds through
``POST /indexes/{name}/documents``, which leaves unchanged ones alone. ``cli`` registers both
commands.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx

from sentinel_runtime.index import files
from sentinel_runtime.index.types import Document
from sentinel_runtime.settings import Settings

EXIT_OK = 0
EXIT_ERROR = 1
DEFAULT_URL = "http://127.0.0.1:8000"
DEFAULT_INDEX = "docs"
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


class CommandError(Exception):
    """A failure to report in one line (no traceback) and exit 1."""


# -- where documents go -------------------------------------------------------------------------


@dataclass
class Tally:
    added: int = 0
    updated: int = 0
    unchanged: int = 0


class Sink(Protocol):
    def send(self, batch: Sequence[Document]) -> Tally: ...

    def close(self) -> None: ...


def _client(args: argparse.Namespace, timeout: float) -> httpx.Client:
    url = args.url.rstrip("/")
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise CommandError(f"{args.url} is not an http(s) URL")
    key = args.api_key or os.environ.get("RUNTIME_API_KEY", "")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    # A runtime on this machine is never reached through the environment's HTTP(S)_PROXY.
    local = urllib.parse.urlsplit(url).hostname in LOOPBACK
    return httpx.Client(base_url=url, headers=headers, timeout=timeout, trust_env=not local)


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300]
    if isinstance(body, dict) and "detail" in body:
        return str(body["detail"])
    return json.dumps(body)[:300]


def _call(client: httpx.Client, method: str, path: str, body: Any = None) -> Any:
    try:
        if body is None:
            response = client.request(method, path)
        else:
            content = json.dumps(body, ensure_ascii=False).encode("utf-8")
            headers = {"Content-Type": "application/json"}
            response = client.request(method, path, content=content, headers=headers)
    except httpx.HTTPError as exc:
        raise CommandError(
            f"no answer from {client.base_url} ({exc}); start one with `sentinel serve`, "
            "or use --local"
        ) from exc
    if response.status_code >= 400:
        raise CommandError(f"{method} {path} answered {response.status_code}: {_detail(response)}")
    return response.json()


def _documents_body(batch: Sequence[Document]) -> list[dict[str, Any]]:
    return [{"doc_id": d.doc_id, "text": d.text, "metadata": dict(d.metadata)} for d in batch]


class HttpSink:
    """KAITO's index API of a running runtime."""

    def __init__(self, client: httpx.Client, index: str) -> None:
        self.client = client
        self.index = index
        self.exists = index in _call(client, "GET", "/indexes")

    def send(self, batch: Sequence[Document]) -> Tally:
        tally = Tally()
        new: list[Document] = list(batch)
        if self.exists:
            path = f"/indexes/{urllib.parse.quote(self.index, safe='')}/documents"
            answer = _call(self.client, "POST", path, {"documents": _documents_body(batch)})
            tally.updated = len(answer["updated_documents"])
            tally.unchanged = len(answer["unchanged_documents"])
            missing = {d["doc_id"] for d in answer["not_found_documents"]}
            new = [d for d in batch if d.doc_id in missing]
        if new:
            body = {"index_name": self.index, "documents": _documents_body(new)}
            tally.added = len(_call(self.client, "POST", "/index", body))
            self.exists = True
        return tally

    def close(self) -> None:
        self.client.close()


class LocalSink:
    """The index manager over the persist directory, as ``sentinel serve`` would open it."""

    def __init__(self, settings: Settings, index: str) -> None:
        from sentinel_runtime.index import backends, embedders
        from sentinel_runtime.index.manager import IndexManager, check_name
        from sentinel_runtime.pipeline.evidence.screen import EvidenceScreen

        check_name(index)
        self.index = index
        self.manager = IndexManager(
            embedders.build_embedder(settings),
            settings.persist_dir(),
            backend=backends.from_settings(settings),
            screen=EvidenceScreen(),  # as sentinel serve screens: the file's bits stay valid
        )

    def send(self, batch: Sequence[Document]) -> Tally:
        if self.index not in self.manager:
            return Tally(added=len(self.manager.add_documents(self.index, batch)))
        updated, unchanged, not_found = self.manager.update_documents(self.index, batch)
        added = self.manager.add_documents(self.index, not_found) if not_found else []
        return Tally(added=len(added), updated=len(updated), unchanged=len(unchanged))

    def close(self) -> None:
        self.manager.close()
        self.manager.embedder.close()


# -- settings ------------------------------------------------------------------------------------


def _local_settings(args: argparse.Namespace, **overrides: Any) -> Settings:
    persist = args.persist_dir or os.environ.get("VECTOR_DB_PERSIST_DIR", "")
    try:
        settings = Settings(VECTOR_DB_PERSIST_DIR=persist, **overrides)
    except ValueError as exc:
        raise CommandError(f"settings from the environment unusable: {exc}") from exc
    if settings.VECTOR_DB_TYPE == "embedded" and settings.persist_dir() is None:
        raise CommandError("--local needs --persist-dir DIR (or VECTOR_DB_PERSIST_DIR)")
    return settings


@dataclass(frozen=True)
class Limits:
    documents: int
    document_bytes: int
    request_bytes: int


def _limits() -> Limits:
    """The runtime's limits as the environment sets them (the runtime reads the same names)."""
    fields = Settings.model_fields

    def read(name: str) -> int:
        value = os.environ.get(name, "")
        return int(value) if value.strip().isdigit() else int(fields[name].default)

    return Limits(
        read("MAX_DOCUMENTS_PER_REQUEST"),
        read("MAX_DOCUMENT_BYTES"),
        read("MAX_REQUEST_BYTES"),
    )


# -- sentinel index --------------------------------------------------------------------------------


@dataclass
class Progress:
    """One line on stderr: rewritten in place on a terminal, else a line per batch."""

    total: int
    stream: Any = field(default_factory=lambda: sys.stderr)
    files: int = 0
    documents: int = 0

    def show(self, final: bool = False) -> None:
        line = f"indexed {self.files}/{self.total} files ({self.documents} documents)"
        if self.stream.isatty():
            self.stream.write(f"\r{line}" + ("\n" if final else ""))
        elif not final:
            self.stream.write(line + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        if self.stream.isatty() and self.files:
            self.stream.write("\n")
        self.stream.write(text + "\n")


def _index(args: argparse.Namespace) -> int:
    from sentinel_runtime.observability import logs

    logs.configure("WARNING")
    limits = _limits()
    found: list[files.Found] = []
    unreadable = 0
    for item in files.find_files(Path(p) for p in args.paths):
        if isinstance(item, files.Note):
            unreadable += item.kind == "unreadable"
            print(item.describe(), file=sys.stderr)
        else:
            found.append(item)
    if not found:
        print("error: no file of a known kind (.txt .md .html .htm .pdf)", file=sys.stderr)
        return EXIT_ERROR
    try:
        sink: Sink = (
            LocalSink(_local_settings(args), args.index)
            if args.local
            else HttpSink(_client(args, args.timeout), args.index)
        )
    except (CommandError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    progress = Progress(len(found))
    total = Tally()

    def documents() -> Iterator[Document]:
        nonlocal unreadable
        for item in found:
            result = files.read_file(item, limits.document_bytes)
            progress.files += 1
            if isinstance(result, files.Note):
                unreadable += 1
                progress.note(result.describe())
                continue
            if len(result.documents) > 1:
                progress.note(
                    f"split: {item.path}: over {limits.document_bytes} bytes of text, "
                    f"indexed as {len(result.documents)} parts"
                )
            yield from result.documents

    try:
        for batch in files.batches(documents(), limits.documents, limits.request_bytes):
            tally = sink.send(batch)
            total.added += tally.added
            total.updated += tally.updated
            total.unchanged += tally.unchanged
            progress.documents += len(batch)
            progress.show()
    except (CommandError, ValueError) as exc:
        progress.note(f"error: {exc}")
        return EXIT_ERROR
    finally:
        sink.close()
    progress.show(final=True)
    where = "the persist directory" if args.local else args.url
    print(
        f"index {args.index!r} at {where}: {total.added} added, {total.updated} updated, "
        f"{total.unchanged} unchanged; {unreadable} file(s) unreadable"
    )
    return EXIT_ERROR if unreadable else EXIT_OK


# -- sentinel ask ----------------------------------------------------------------------------------


async def _ask_here(settings: Settings, body: dict[str, Any]) -> dict[str, Any]:
    """One chat turn run by the application layer in this process, no HTTP: the services
    ``sentinel serve`` would build (indexes loaded from the persist directory)."""
    import time

    from sentinel_runtime.answer import chat
    from sentinel_runtime.answer.errors import TurnError
    from sentinel_runtime.answer.services import build_services
    from sentinel_runtime.index.base import IndexNotFound

    services = build_services(settings)
    try:
        turn = chat.ChatTurn(body=body, index_name=body.pop("index_name"))
        answered = await chat.run(services, turn, started=time.perf_counter())
    except TurnError as exc:
        raise CommandError(exc.message) from exc
    except IndexNotFound as exc:
        raise CommandError(str(exc)) from exc
    finally:
        await services.aclose()
    assert isinstance(answered, dict)  # not streamed
    return answered


def _ask_local(args: argparse.Namespace, body: dict[str, Any]) -> dict[str, Any]:
    import asyncio

    overrides: dict[str, Any] = {"DEMO_CORPUS": False}
    if "OUTPUT_GUARDRAILS_ENABLED" not in os.environ:
        overrides["OUTPUT_GUARDRAILS_ENABLED"] = True  # as `sentinel serve` starts
    return asyncio.run(_ask_here(_local_settings(args, **overrides), body))


def sources(reply: dict[str, Any]) -> list[tuple[str, str]]:
    """(chunk id, source path) of each citation in the answer, in order."""
    nodes = {n["node_id"]: n for n in reply.get("source_nodes") or []}
    cited = (reply.get("sentinel") or {}).get("citations", {}).get("ids") or []
    result = []
    for chunk_id in cited:
        node = nodes.get(chunk_id, {})
        metadata = node.get("metadata") or {}
        result.append((chunk_id, str(metadata.get("source") or node.get("doc_id") or "?")))
    return result


def render(reply: dict[str, Any], trace: bool) -> str:
    lines = [reply["choices"][0]["message"]["content"] or ""]
    cited = sources(reply)
    if cited:
        lines.append("")
        lines.append("sources:")
        lines.extend(f"  {source}  [{chunk_id}]" for chunk_id, source in cited)
    if trace:
        s = reply.get("sentinel") or {}
        gate = s.get("gate") or {}
        lines.append("")
        lines.append(f"decision: {s.get('decision')}")
        lines.append(f"gate:     {gate.get('action')} {', '.join(gate.get('reasons') or [])}")
        evidence = s.get("evidence") or {}
        kept = evidence.get("kept") or []
        lines.append(f"kept:     {len(kept)} chunk(s)")
        for dropped in evidence.get("filtered") or []:
            reasons = ", ".join(dropped.get("reasons") or [])
            lines.append(f"filtered: {dropped.get('chunkId')} ({reasons})")
        for choice in (s.get("guardrails") or {}).get("choices") or []:
            for hit in choice.get("scanners") or []:
                lines.append(f"scanner:  {hit.get('type')} {hit.get('action')}")
        lines.append(f"request:  {s.get('requestId')} (GET /v1/audit?request_id=...)")
    return "\n".join(lines)


def _ask(args: argparse.Namespace) -> int:
    from sentinel_runtime.observability import logs

    logs.configure("WARNING")
    body = {
        "model": "sentinel",
        "messages": [{"role": "user", "content": args.question}],
        "index_name": args.index,
    }
    try:
        if args.local:
            reply = _ask_local(args, body)
        else:
            with _client(args, args.timeout) as client:
                reply = _call(client, "POST", "/v1/chat/completions", body)
    except (CommandError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(json.dumps(reply, indent=2) if args.json else render(reply, args.trace))
    return EXIT_OK


# -- the parsers -----------------------------------------------------------------------------------


def _connection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--index", default=DEFAULT_INDEX, help=f"index name (default {DEFAULT_INDEX})"
    )
    parser.add_argument(
        "--url",
        default=os.environ.get("SENTINEL_URL") or DEFAULT_URL,
        help=f"the runtime's base URL (default SENTINEL_URL, else {DEFAULT_URL})",
    )
    parser.add_argument("--api-key", help="bearer token (default: RUNTIME_API_KEY)")
    parser.add_argument(
        "--local",
        action="store_true",
        help="no server: work on the persist directory in this process",
    )
    parser.add_argument(
        "--persist-dir", help="with --local: the index directory (default VECTOR_DB_PERSIST_DIR)"
    )


def register(commands: Any) -> None:
    index = commands.add_parser(
        "index",
        help="index files and folders (.txt .md .html .pdf) into a runtime's index",
        description="Index files and folders (recursively) into a runtime's index: .txt and "
        ".md as UTF-8, .html/.htm as their visible text, .pdf as its text layer; other "
        "files are skipped with a note. Each file is one document: doc_id and "
        "metadata.source are its path relative to the folder named, title its stem, "
        "timestamp its modification time. Indexing again replaces changed files. A text "
        "over MAX_DOCUMENT_BYTES is split into parts (<doc_id>:part2, ...). Exit 1 when a "
        "file could not be read (the others are indexed) or the runtime refused.",
    )
    index.add_argument("paths", nargs="+", metavar="PATH", help="files and folders")
    _connection(index)
    index.add_argument(
        "--timeout", type=float, default=300.0, help="seconds per request (default 300)"
    )
    index.set_defaults(handler=_index)

    ask = commands.add_parser(
        "ask",
        help="ask a question over an index; prints the answer and its sources",
        description="Ask a question over an index (a chat completion with index_name) and "
        "print the answer and the sources it cites.",
    )
    ask.add_argument("question")
    _connection(ask)
    ask.add_argument("--json", action="store_true", help="print the whole response as JSON")
    ask.add_argument(
        "--trace",
        action="store_true",
        help="also print Sentinel's decision, the gate's reasons and filtered evidence",
    )
    ask.add_argument("--timeout", type=float, default=120.0, help="seconds to wait (default 120)")
    ask.set_defaults(handler=_ask)
