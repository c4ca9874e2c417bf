"""Chat answers rendered by orjson hold the same JSON as Starlette's encoder gives."""

from __future__ import annotations

import json

from pydantic import BaseModel
from starlette.responses import JSONResponse

from sentinel_runtime.api.json_body import OrjsonResponse


class Note(BaseModel):
    text: str


def test_same_json_values_as_the_standard_encoder() -> None:
    body = {
        "id": "chatcmpl-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Grüße ✓ \u2028"}}],
        "usage": {"prompt_tokens": 3, "total_tokens": 5},
        "sentinel": {"score": 0.1, "tiny": 1e-7, "flags": (True, None), "nested": {"a": [1.5]}},
    }
    fast = OrjsonResponse(body).body
    standard = JSONResponse(body).body
    assert json.loads(fast) == json.loads(standard)
    assert b"\\u" not in fast  # UTF-8, as Starlette sends it, not ASCII escapes


def test_values_orjson_does_not_know_fall_back_to_fastapis_encoder() -> None:
    assert json.loads(OrjsonResponse({"note": Note(text="x"), 1: "int key"}).body) == {
        "note": {"text": "x"},
        "1": "int key",
    }
