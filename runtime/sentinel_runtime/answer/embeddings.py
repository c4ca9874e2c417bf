"""Embeddings (``/v1/embeddings``) by the runtime's own embedder: the one its indexes use
(``services.indexes.embedder``, see ``index.embedders``), so a client's vectors live in the
same space as the indexed chunks.

Texts are counted with the tokenizer chat usage is counted with
(``pipeline.conversation``); one longer than :data:`MAX_INPUT_TOKENS` is refused, as OpenAI
refuses it. Vectors are returned as float lists or as OpenAI's base64 (little-endian
float32). An embedder that fails (a remote embeddings server) is a 502.
"""

from __future__ import annotations

import base64
from typing import Any, Literal

import anyio.to_thread
import numpy as np

from sentinel_runtime.answer.errors import InvalidRequestError
from sentinel_runtime.answer.services import Services
from sentinel_runtime.index.embedders import Embedder, EmbeddingError
from sentinel_runtime.llm.upstream import UpstreamError
from sentinel_runtime.pipeline import conversation

MAX_INPUT_TOKENS = 8192  # OpenAI's limit on one input of its embedding models


def count_text_tokens(text: str) -> int:
    """Tokens of one text (no per-message overhead: an input is not a chat message)."""
    return conversation.count_tokens([{"content": text}]) - conversation.TOKENS_PER_MESSAGE


async def embed(
    services: Services,
    texts: list[str],
    *,
    encoding_format: Literal["float", "base64"] = "float",
    dimensions: int | None = None,
) -> dict[str, Any]:
    """OpenAI's ``list`` of ``embedding`` objects for ``texts``, with their usage."""
    counts = [count_text_tokens(text) for text in texts]
    for index, tokens in enumerate(counts):
        if tokens > MAX_INPUT_TOKENS:
            raise InvalidRequestError(
                f"input[{index}] has {tokens} tokens; at most {MAX_INPUT_TOKENS} per input",
                param="input",
            )
    embedder = services.indexes.embedder
    try:
        matrix = await anyio.to_thread.run_sync(_embed, embedder, texts, dimensions)
    except EmbeddingError as exc:
        raise UpstreamError(502, "embedding_error", str(exc)) from exc
    data = [
        {"object": "embedding", "index": index, "embedding": _encoded(row, encoding_format)}
        for index, row in enumerate(matrix)
    ]
    tokens = sum(counts)
    return {
        "object": "list",
        "data": data,
        "model": embedder.name,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def _embed(embedder: Embedder, texts: list[str], dimensions: int | None) -> np.ndarray:
    # Off the event loop: the dimension of a remote embedder may take a request to learn.
    if dimensions is not None and dimensions != embedder.dim:
        raise InvalidRequestError(
            f"dimensions={dimensions} is not available: the runtime's embedder "
            f"({embedder.name}) returns {embedder.dim} dimensions",
            param="dimensions",
        )
    return embedder.embed(texts)


def _encoded(row: np.ndarray, encoding_format: str) -> list[float] | str:
    if encoding_format == "base64":
        return base64.b64encode(row.astype("<f4").tobytes()).decode("ascii")
    return [float(value) for value in row]
