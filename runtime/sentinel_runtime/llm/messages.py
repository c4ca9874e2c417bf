"""OpenAI chat messages and completions as plain dicts: the text of a message, and a
``chat.completion`` built from a text (the built-in generators' and the pipeline's answers)."""

from __future__ import annotations

import time
import uuid
from typing import Any


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
    """An OpenAI ``chat.completion`` with one assistant message; its usage is zero, for the
    caller to count (the answer layer's ``turn.usage``: this layer has no tokenizer of chat
    messages)."""
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
