"""``POST /v1/embeddings``: parse, hand the texts to ``answer.embeddings`` (the runtime's own
embedder), return OpenAI's list of embeddings. Errors are rendered by the handlers
``api.app`` registers."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from sentinel_runtime.answer import embeddings
from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.api.protocol import EmbeddingRequest

router = APIRouter(prefix="/v1", tags=["embeddings"])


@router.post("/embeddings")
async def create_embeddings(request: EmbeddingRequest, services: ServicesDep) -> dict[str, Any]:
    return await embeddings.embed(
        services,
        request.texts(),
        encoding_format=request.encoding_format,
        dimensions=request.dimensions,
    )
