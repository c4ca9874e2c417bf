"""A fake LLM upstream that speaks the OpenAI chat protocol over real HTTP.

The LLM is a peer, not our code: this stands in for vLLM. Tests set what it answers
(content, a whole message, an HTTP status, a delay or a raw body) and read what it got.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeLLM:
    content: str | list[dict[str, Any]] | None = "Hello from the fake LLM."
    message: dict[str, Any] | None = None  # overrides content when set
    status: int = 200
    delay: float = 0.0
    raw_body: bytes | None = None
    # Computes each answer from the request (as a model would); gets the choice's index.
    responder: Callable[[dict[str, Any], int], str] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def completion(self, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        payload = payload or {}
        count = int(payload.get("n") or 1)
        choices = []
        for index in range(count):
            message = self.message or {"role": "assistant", "content": self.content}
            if self.responder is not None:
                message = {"role": "assistant", "content": self.responder(payload, index)}
            choices.append({"index": index, "message": message, "finish_reason": "stop"})
        return {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "fake-model",
            "choices": choices,
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def start(self) -> FakeLLM:
        fake = self

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
                if self.path.endswith("/models"):
                    body = {"object": "list", "data": [{"id": "fake-model", "object": "model"}]}
                    self._send(200, json.dumps(body).encode())
                else:
                    self._send(404, b'{"error": "not found"}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                payload = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "json": payload}
                )
                if fake.delay:
                    time.sleep(fake.delay)
                if fake.raw_body is not None:
                    self._send(fake.status, fake.raw_body)
                elif fake.status >= 400:
                    self._send(fake.status, b'{"error": {"message": "upstream exploded"}}')
                else:
                    self._send(200, json.dumps(fake.completion(payload)).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
