"""A fake LLM upstream that speaks the OpenAI chat protocol over real HTTP.

The LLM is a peer, not our code: this stands in for vLLM. Tests set what it answers
(content, a whole message, an HTTP status, a delay or a raw body) and read what it got.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from support.json_peer import JsonPeer


@dataclass
class FakeLLM(JsonPeer):
    content: str | list[dict[str, Any]] | None = "Hello from the fake LLM."
    message: dict[str, Any] | None = None  # overrides content when set
    # Computes each answer from the request (as a model would); gets the choice's index.
    responder: Callable[[dict[str, Any], int], str] | None = None

    failure_body = b'{"error": {"message": "upstream exploded"}}'

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

    def answer(self, method: str, path: str, payload: Any) -> tuple[int, Any]:
        if method == "GET":
            if path.endswith("/models"):
                return 200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]}
            return 404, None
        return 200, self.completion(payload)
