"""A fake embeddings server that speaks OpenAI's ``POST /v1/embeddings`` over real HTTP.

It stands in for TEI, vLLM or OpenAI: a peer, not our code. Its vectors are deterministic
(seeded by each input's bytes), deliberately not unit length, and listed in reverse order
with their ``index`` so the client must sort them. Tests set failures and read requests.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from support.json_peer import JsonPeer


def fake_vector(text: str, dim: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return (np.random.default_rng(seed).normal(size=dim) * 3.0).tolist()


@dataclass
class FakeEmbeddings(JsonPeer):
    dim: int = 32
    drop_one: bool = False  # answer one embedding fewer than asked

    failure_body = b'{"error": {"message": "embedder exploded"}}'

    def embeddings(self, payload: dict[str, Any]) -> dict[str, Any]:
        texts = payload["input"]
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(t, self.dim)}
            for i, t in enumerate(texts)
        ]
        if self.drop_one:
            data = data[1:]
        return {"object": "list", "data": data[::-1], "model": payload.get("model", "fake")}

    def answer(self, method: str, path: str, payload: Any) -> tuple[int, Any]:
        if method != "POST" or path != "/v1/embeddings":
            return 404, None
        return 200, self.embeddings(payload)
