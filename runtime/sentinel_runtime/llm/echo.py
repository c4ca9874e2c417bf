"""The built-in generator used when no ``LLM_INFERENCE_URL`` is configured.

It is not a language model: it answers with the text of the last user message, so that the
runtime works with no model at all and the output guardrails can be seen at work (a secret
typed in comes back redacted). Questions asked with an ``index_name`` are answered by the
pipeline's extractive generator instead (``pipeline.generation``).
"""

from __future__ import annotations

from typing import Any

from sentinel_runtime.llm.messages import completion, message_text
from sentinel_runtime.llm.streams import DeltaStream, TextStream

MODEL_NAME = "sentinel-embedded"  # the name clients see; kept for compatibility


class EchoGenerator:
    default_model = MODEL_NAME

    async def aclose(self) -> None:
        return None

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        user_turns = [m for m in body.get("messages", []) if m.get("role") == "user"]
        return completion(message_text(user_turns[-1]) if user_turns else "", model=MODEL_NAME)

    def stream(self, body: dict[str, Any]) -> DeltaStream:
        user_turns = [m for m in body.get("messages", []) if m.get("role") == "user"]
        return TextStream(message_text(user_turns[-1]) if user_turns else "")

    async def models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "sentinel"}],
        }
