"""The upstream model's context window, in tokens: ``LLM_CONTEXT_WINDOW`` when it is set,
else what the upstream's ``GET /v1/models`` reports as the model's ``max_model_len`` (vLLM's
field, which KAITO's RAG service reads for the same purpose), looked up once.

The window bounds what a turn sends (``chat.check_context_window``), how much history a RAG
turn keeps, and KAITO's ``context_token_ratio`` budget on ``/retrieve``. Unknown (no
setting, no upstream, or an upstream that does not report it) is 0: no check, no trimming.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Protocol

# After a failed lookup (upstream down, no model list), ask again no sooner than this.
RETRY_SECONDS = 30.0


class ModelLister(Protocol):
    async def model_listing(self) -> dict[str, Any] | None: ...


def max_model_len(listing: Mapping[str, Any], model: str) -> int | None:
    """``max_model_len`` of ``model`` in an OpenAI model list (the first entry when no entry
    has that id, or when ``model`` is empty), or None when it is not a positive integer."""
    entries = [e for e in listing.get("data") or [] if isinstance(e, Mapping)]
    if not entries:
        return None
    entry = next((e for e in entries if model and e.get("id") == model), entries[0])
    value = entry.get("max_model_len")
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


class ContextWindow:
    """One runtime's view of the window; ``known`` is what was found so far (for the
    synchronous paths), ``resolve`` looks it up when it can."""

    def __init__(self, configured: int, upstream: ModelLister | None, model: str) -> None:
        self._configured = configured
        self._upstream = upstream
        self._model = model
        self._found: int | None = None
        self._retry_at = 0.0

    @property
    def known(self) -> int:
        return self._configured or self._found or 0

    @property
    def source(self) -> str:
        """Where ``known`` comes from: ``setting``, ``upstream`` or ``unknown``."""
        if self._configured:
            return "setting"
        return "upstream" if self._found else "unknown"

    async def resolve(self) -> int:
        if self._configured or self._found is not None or self._upstream is None:
            return self.known
        now = time.monotonic()
        if now < self._retry_at:
            return 0
        listing = await self._upstream.model_listing()
        found = max_model_len(listing, self._model) if listing is not None else None
        if found is None:
            self._retry_at = now + RETRY_SECONDS
            return 0
        self._found = found
        return found
