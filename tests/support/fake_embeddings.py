"""A fake embeddings server that speaks OpenAI's ``POST /v1/embeddings`` over real HTTP.

It stands in for TEI, vLLM or OpenAI: a peer, not our code. Its vectors are deterministic
(seeded by each input's bytes), deliberately not unit length, and listed in reverse order
with their ``index`` so the client must sort them. Tests set failures and read requests.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


def fake_vector(text: str, dim: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return (np.random.default_rng(seed).normal(size=dim) * 3.0).tolist()


@dataclass
class FakeEmbeddings:
    dim: int = 32
    status: int = 200
    delay: float = 0.0
    raw_body: bytes | None = None
    drop_one: bool = False  # answer one embedding fewer than asked
    requests: list[dict[str, Any]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def answer(self, payload: dict[str, Any]) -> dict[str, Any]:
        texts = payload["input"]
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(t, self.dim)}
            for i, t in enumerate(texts)
        ]
        if self.drop_one:
            data = data[1:]
        return {"object": "list", "data": data[::-1], "model": payload.get("model", "fake")}

    def start(self) -> FakeEmbeddings:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                payload = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "json": payload}
                )
                if fake.delay:
                    time.sleep(fake.delay)
                if self.path != "/v1/embeddings":
                    status, body = 404, b'{"error": "not found"}'
                elif fake.raw_body is not None:
                    status, body = fake.status, fake.raw_body
                elif fake.status >= 400:
                    status, body = fake.status, b'{"error": {"message": "embedder exploded"}}'
                else:
                    status, body = 200, json.dumps(fake.answer(payload)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
