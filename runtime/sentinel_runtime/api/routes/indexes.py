"""KAITO's index API over the ``IndexManager``: index, list, update, delete, persist, load,
retrieve. Index work is CPU-bound, so it runs in the threadpool, never on the event loop.

Paths given to ``/persist`` and ``/load`` must lie inside ``VECTOR_DB_PERSIST_DIR``
(relative paths are taken from it); without it those endpoints answer 400. A client never
makes the runtime read or write anywhere else.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query
from starlette.concurrency import run_in_threadpool

from sentinel_runtime.api import answering
from sentinel_runtime.api import index_protocol as protocol
from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.index import manager as index_manager
from sentinel_runtime.index import persistence
from sentinel_runtime.index.base import VectorDBError
from sentinel_runtime.index.embedders import EmbeddingError
from sentinel_runtime.pipeline import report, runner

router = APIRouter(tags=["indexes"])


@contextmanager
def _http_errors() -> Iterator[None]:
    """One mapping from index errors to statuses, for every endpoint."""
    try:
        yield
    except index_manager.IndexNotFound as exc:
        raise HTTPException(404, str(exc)) from exc
    except index_manager.IndexExistsError as exc:
        raise HTTPException(409, str(exc)) from exc
    except index_manager.PathNotAllowedError as exc:
        raise HTTPException(400, str(exc)) from exc
    except persistence.IndexFileError as exc:
        raise HTTPException(409, str(exc)) from exc
    except FileNotFoundError as exc:
        raise HTTPException(404, f"no persisted index at {exc.filename}") from exc
    except EmbeddingError as exc:
        raise HTTPException(502, str(exc)) from exc
    except VectorDBError as exc:
        raise HTTPException(503, str(exc)) from exc
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from exc
    except OSError as exc:
        raise HTTPException(500, f"index file could not be written: {exc.strerror}") from exc


@router.post("/index")
async def index_documents(
    request: protocol.IndexRequest, services: ServicesDep
) -> list[protocol.DocumentOut]:
    documents = [d.to_document() for d in request.documents]
    with _http_errors():
        added = await run_in_threadpool(
            services.indexes.add_documents, request.index_name, documents
        )
    return [protocol.DocumentOut.of(d) for d in added]


@router.get("/indexes")
async def list_indexes(services: ServicesDep) -> list[str]:
    return services.indexes.names()


def _metadata_filter(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HTTPException(422, f"metadata_filter is not JSON: {exc.msg}") from exc
    if not isinstance(value, dict):
        raise HTTPException(422, "metadata_filter must be a JSON object")
    return value


@router.get("/indexes/{name}/documents")
async def list_documents(
    name: str,
    services: ServicesDep,
    *,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    offset: Annotated[int, Query(ge=0)] = 0,
    max_text_length: Annotated[int | None, Query(ge=1)] = None,
    metadata_filter: str | None = None,
) -> protocol.ListDocumentsResponse:
    wanted = _metadata_filter(metadata_filter)
    with _http_errors():
        store = services.indexes.get(name)
        docs, total = await run_in_threadpool(store.list_documents, offset, limit, wanted)
    listed = []
    for doc in docs:
        cut = max_text_length is not None and len(doc.text) > max_text_length
        listed.append(
            protocol.ListedDocument(
                doc_id=doc.doc_id,
                text=doc.text[:max_text_length] if cut else doc.text,
                metadata=dict(doc.metadata),
                is_truncated=cut,
            )
        )
    return protocol.ListDocumentsResponse(documents=listed, count=len(listed), total=total)


@router.post("/indexes/{name}/documents")
async def update_documents(
    name: str, request: protocol.UpdateRequest, services: ServicesDep
) -> protocol.UpdateResponse:
    documents = [d.to_document() for d in request.documents]
    with _http_errors():
        updated, unchanged, not_found = await run_in_threadpool(
            services.indexes.update_documents, name, documents
        )
    out = protocol.DocumentOut.of
    return protocol.UpdateResponse(
        updated_documents=[out(d) for d in updated],
        unchanged_documents=[out(d) for d in unchanged],
        not_found_documents=[out(d) for d in not_found],
    )


@router.post("/indexes/{name}/documents/delete")
async def delete_documents(
    name: str, request: protocol.DeleteRequest, services: ServicesDep
) -> protocol.DeleteResponse:
    with _http_errors():
        deleted, not_found = await run_in_threadpool(
            services.indexes.delete_documents, name, request.doc_ids
        )
    return protocol.DeleteResponse(deleted_doc_ids=deleted, not_found_doc_ids=not_found)


@router.delete("/indexes/{name}")
async def delete_index(name: str, services: ServicesDep) -> dict[str, str]:
    with _http_errors():
        await run_in_threadpool(services.indexes.delete, name)
    return {"message": f"index {name!r} deleted"}


@router.post("/persist/{name}")
async def persist_index(
    name: str, services: ServicesDep, path: str | None = None
) -> protocol.FileResponse:
    indexes = services.indexes
    with _http_errors():
        store = indexes.get(name)
        file = await run_in_threadpool(indexes.persist, name, indexes.confine(path))
    return protocol.FileResponse(index_name=name, path=str(file), documents=store.document_count)


@router.post("/load/{name}")
async def load_index(
    name: str, services: ServicesDep, path: str | None = None, overwrite: bool = False
) -> protocol.FileResponse:
    indexes = services.indexes
    with _http_errors():
        index_manager.check_name(name)
        directory = indexes.confine(path)
        store = await run_in_threadpool(indexes.load, name, directory, overwrite)
    file = persistence.index_file(directory, name)
    return protocol.FileResponse(index_name=name, path=str(file), documents=store.document_count)


@router.post("/retrieve")
async def retrieve(
    request: protocol.RetrieveRequest, services: ServicesDep
) -> protocol.RetrieveResponse:
    """KAITO's retrieval, behind the same gate and evidence filter as an answer: a request
    the gate refuses retrieves nothing, and dropped chunks are reported, never returned."""
    engine = answering.active_engine(services)
    with _http_errors():
        context = answering.context_for(services, engine, request.index_name)
    pipeline_request = runner.PipelineRequest(
        request.query, request.index_name, request.top_k, metadata_filter=request.metadata_filter
    )
    result = await runner.retrieve(pipeline_request, context)
    kept = result.bundle.kept if result.bundle is not None else ()
    results = [protocol.RetrievedChunk.of(hit) for hit in kept]
    described = report.sentinel(result, index_name=request.index_name)
    sentinel = {k: described[k] for k in ("requestId", "introspection", "gate", "evidence")}
    return protocol.RetrieveResponse(
        query=request.query, results=results, count=len(results), sentinel=sentinel
    )
