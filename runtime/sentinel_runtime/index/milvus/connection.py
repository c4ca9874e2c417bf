"""The connection to Milvus and its errors. pymilvus is an optional extra, imported here
only when a Milvus backend is built or called (never when the runtime starts).

Every call goes through :func:`call`: a pymilvus error becomes a ``VectorDBError`` that
names the server, or ``IndexNotFound`` when the collection of an index has gone (dropped
by another runtime). Nothing is retried: the caller's request fails and says why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sentinel_runtime.index.base import IndexNotFound, VectorDBError

COLLECTION_NOT_FOUND = 100  # pymilvus's error code


def connect(url: str, token: str, timeout: float) -> Any:
    """A ``MilvusClient`` of its own (``dedicated``) for ``url``."""
    try:
        from pymilvus import MilvusClient
        from pymilvus.exceptions import MilvusException
    except ImportError as exc:
        raise VectorDBError(
            "VECTOR_DB_TYPE=milvus needs the optional extra: "
            "pip install 'sentinel-rag[milvus]' (and 'sentinel-rag[milvus-lite]' for a "
            "local .db file)"
        ) from exc
    try:
        return MilvusClient(uri=url, token=token, timeout=timeout, dedicated=True)
    except MilvusException as exc:
        raise error(url, exc) from exc


def error(url: str, exc: Exception) -> VectorDBError:
    """A pymilvus error as the runtime reports it."""
    message = getattr(exc, "message", "") or str(exc)
    return VectorDBError(f"Milvus at {url}: {message}")


def call(
    client: Any,
    method: str,
    *args: Any,
    describe: Callable[[Exception], Exception],
    index: str | None = None,
    **kwargs: Any,
) -> Any:
    """``client.method(*args, **kwargs)``, its pymilvus errors described by ``describe``;
    with ``index``, a missing collection is ``IndexNotFound(index)``."""
    from pymilvus.exceptions import MilvusException

    try:
        return getattr(client, method)(*args, **kwargs)
    except MilvusException as exc:
        if index is not None and (
            exc.code == COLLECTION_NOT_FOUND or "collection not found" in exc.message
        ):
            raise IndexNotFound(index) from exc
        raise describe(exc) from exc
