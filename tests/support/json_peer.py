"""The loopback HTTP server behind the fake peers (``fake_llm``, ``fake_embeddings``).

A peer is a dataclass that says how to answer one request (:meth:`JsonPeer.answer`); this
base records every POST, applies the configured delay, status or raw body, and runs the
server on 127.0.0.1 in a daemon thread. A peer may stream a POST instead
(:meth:`JsonPeer.stream`): server-sent events, each after its own pause (kept on one clock
from the stream's start, so a paced stream does not drift), written as they come; the base
notes when the client closes the connection before the stream's end.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Disconnect:
    """A client that closed its connection while a stream was being written."""

    path: str
    events_sent: int  # events written before the close was seen
    at: float  # time.monotonic() when it was seen


@dataclass
class JsonPeer:
    status: int = 200
    delay: float = 0.0
    raw_body: bytes | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)  # the POSTs
    gets: list[str] = field(default_factory=list)  # the paths of the GETs
    server: ThreadingHTTPServer | None = None
    disconnects: list[Disconnect] = field(default_factory=list)
    streams_done: int = 0  # streams written to their end

    failure_body = b'{"error": {"message": "peer exploded"}}'

    @property
    def base_url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def answer(self, method: str, path: str, payload: Any) -> tuple[int, Any]:
        """The status and JSON body for a request this peer serves (404 otherwise)."""
        raise NotImplementedError

    def stream(self, path: str, payload: Any) -> Iterable[tuple[float, bytes]] | None:
        """For a POST to stream: ``(pause in seconds, bytes)`` pairs written in order, as
        ``text/event-stream``; ``None`` (the default) answers with :meth:`answer`'s JSON."""
        return None

    def _reply(
        self, method: str, path: str, headers: dict[str, str], payload: Any
    ) -> tuple[int, bytes | Iterable[tuple[float, bytes]]]:
        if method == "GET":
            self.gets.append(path)
        if method == "POST":
            self.requests.append({"path": path, "headers": headers, "json": payload})
            if self.delay:
                time.sleep(self.delay)
        status, body = self.answer(method, path, payload)
        if status == 404:
            return 404, b'{"error": "not found"}'
        if method == "POST" and self.raw_body is not None:
            return self.status, self.raw_body
        if method == "POST" and self.status >= 400:
            return self.status, self.failure_body
        if method == "POST":
            events = self.stream(path, payload)
            if events is not None:
                return status, events
        return status, json.dumps(body).encode()

    def start(self) -> JsonPeer:
        peer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def _send(self, status: int, body: bytes | Iterable[tuple[float, bytes]]) -> None:
                if not isinstance(body, bytes):
                    self._stream(status, body)
                    return
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _stream(self, status: int, events: Iterable[tuple[float, bytes]]) -> None:
                # HTTP/1.0 without a length: the body ends when the connection closes.
                self.send_response(status)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                self.wfile.flush()
                sent = 0
                due = time.monotonic()  # pauses add up on one clock: no drift over a stream
                for pause, data in events:
                    due += pause
                    if self._client_gone(max(0.0, due - time.monotonic())):
                        break
                    try:
                        self.wfile.write(data)
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        break
                    sent += 1
                else:
                    peer.streams_done += 1
                    return
                peer.disconnects.append(Disconnect(self.path, sent, time.monotonic()))

            def _client_gone(self, pause: float) -> bool:
                """Wait ``pause`` seconds, or less if the client closes its end meanwhile
                (the request was read whole, so a readable socket means end of file)."""
                readable, _, _ = select.select([self.connection], [], [], pause)
                if not readable:
                    return False
                try:
                    return self.connection.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    return True

            def do_GET(self) -> None:
                self._send(*peer._reply("GET", self.path, dict(self.headers), None))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                payload = json.loads(self.rfile.read(length) or b"{}")
                self._send(*peer._reply("POST", self.path, dict(self.headers), payload))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        # shutdown() waits for the next poll: 0.05 s, not the default 0.5 s per stopped peer.
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
