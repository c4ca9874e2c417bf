"""The built-in generator used when no ``LLM_INFERENCE_URL`` is configured.

It is not a language model: it answers with the text of the last user message, so that
the runtime works with no model at all and the output guardrails can be seen at work (a
secret typed in comes back redacted). Questions asked with an ``index_name`` are answered
by the pipeline's extractive generator instead (``pipeline.generation``).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

MODEL_NAME = "sentinel-embedded"


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def completion(text: str, *, model: str) -> dict[str, Any]:
    """An OpenAI ``chat.completion`` with one assistant message (tokens are not counted)."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


class EmbeddedGenerator:
    default_model = MODEL_NAME

    async def aclose(self) -> None:
        return None

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        user_turns = [m for m in body.get("messages", []) if m.get("role") == "user"]
        return completion(message_text(user_turns[-1]) if user_turns else "", model=MODEL_NAME)

    async def models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "sentinel"}],
        }
