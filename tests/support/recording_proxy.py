"""A loopback proxy in front of a real model server: it records what Sentinel sends upstream
and, when a test asks, alters what the model answered (to prove a check catches it).

Requests are forwarded as they came (JSON bodies, non-streaming); the upstream's status and
body come back unchanged unless :attr:`RecordingProxy.rewrite` is set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from support.json_peer import JsonPeer


@dataclass
class RecordingProxy(JsonPeer):
    target: str = ""  # the upstream's base URL, ".../v1"
    timeout: float = 120.0
    # Applied to each choice's message content of a successful chat completion.
    rewrite: Callable[[str], str] | None = None

    def answer(self, method: str, path: str, payload: Any) -> tuple[int, Any]:
        url = self.target + path.removeprefix("/v1")
        response = httpx.request(method, url, json=payload, timeout=self.timeout)
        try:
            body = response.json()
        except ValueError:
            body = {"error": {"message": response.text[:500]}}
        if self.rewrite is not None and response.status_code == 200 and "choices" in body:
            for choice in body["choices"]:
                message = choice.get("message") or {}
                if isinstance(message.get("content"), str):
                    message["content"] = self.rewrite(message["content"])
        return response.status_code, body

    def chat_bodies(self) -> list[dict[str, Any]]:
        """The chat-completion bodies sent upstream, oldest first."""
        return [r["json"] for r in self.requests if r["path"].endswith("/chat/completions")]
