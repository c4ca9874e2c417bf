"""The loopback HTTP server behind the fake peers (``fake_llm``, ``fake_embeddings``).

A peer is a dataclass that says how to answer one request (:meth:`JsonPeer.answer`); this
base records every POST, applies the configured delay, status or raw body, and runs the
server on 127.0.0.1 in a daemon thread.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class JsonPeer:
    status: int = 200
    delay: float = 0.0
    raw_body: bytes | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    failure_body = b'{"error": {"message": "peer exploded"}}'

    @property
    def base_url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def answer(self, method: str, path: str, payload: Any) -> tuple[int, Any]:
        """The status and JSON body for a request this peer serves (404 otherwise)."""
        raise NotImplementedError

    def _reply(
        self, method: str, path: str, headers: dict[str, str], payload: Any
    ) -> tuple[int, bytes]:
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
        return status, json.dumps(body).encode()

    def start(self) -> JsonPeer:
        peer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._send(*peer._reply("GET", self.path, dict(self.headers), None))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                payload = json.loads(self.rfile.read(length) or b"{}")
                self._send(*peer._reply("POST", self.path, dict(self.headers), payload))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
