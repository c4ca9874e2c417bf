"""KAITO's index API over the ``IndexManager``: index, list, update, delete, persist, load,
retrieve. Index work is CPU-bound, so it runs in the threadpool, never on the event loop.

Every route of this router is a :class:`KaitoRoute`: it counts KAITO's per-endpoint metrics
(``rag_index_requests_total{status}`` and friends, with their latency histograms) and answers
every error the way KAITO's clients read it, a string ``detail``, with OpenAI's ``error``
object in the same body; a request that fails validation is a 400, as on KAITO.

Paths given to ``/persist`` and ``/load`` must lie inside ``VECTOR_DB_PERSIST_DIR``
(relative paths are taken from it); without it those endpoints answer 400. A client never
makes the runtime read or write anywhere else (KAITO writes where the client says). KAITO's
default location of an index, ``storage/<name>``, names the persist directory itself.

Scoped keys (``api.scopes``): the write routes (``/index``, updating or deleting documents,
deleting an index, ``/persist``, ``/load``) answer 403 for an index outside the key's write
scope; the read routes (listing documents, ``/retrieve``) answer an index outside its read
scope with the very 404 of a missing index; ``GET /indexes`` lists only what the key may read.

Index names (path parameters and ``index_name``) are checked before any work: a malformed
one is a 400 whose ``param`` names it. ``/index`` and ``/indexes/{name}/documents`` refuse
more than ``MAX_DOCUMENTS_PER_REQUEST`` documents or a text over ``MAX_DOCUMENT_BYTES`` with
a 413 naming the field (``documents.3.text``). ``GET /indexes`` keeps KAITO's body, a list of
names; the header ``Sentinel-Quarantined-Indexes`` counts the index files quarantined at
start (listed on ``/ready``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from prometheus_client import Counter, Histogram
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from sentinel_runtime.answer import retrieval
from sentinel_runtime.answer.services import Services
from sentinel_runtime.api import index_protocol as protocol
from sentinel_runtime.api.deps import ServicesDep
from sentinel_runtime.api.errors import describe_validation, error_body
from sentinel_runtime.api.protocol import IndexName
from sentinel_runtime.api.scopes import PrincipalDep, check_read, check_write
from sentinel_runtime.index import manager as index_manager
from sentinel_runtime.index import persistence
from sentinel_runtime.index.base import VectorDBError
from sentinel_runtime.index.embedders import EmbeddingError
from sentinel_runtime.observability import metrics

# KAITO's per-endpoint metrics, by (method, route template).
ENDPOINT_METRICS: dict[tuple[str, str], tuple[Counter, Histogram]] = {
    ("POST", "/index"): (metrics.INDEX_REQUESTS, metrics.INDEX_LATENCY),
    ("GET", "/indexes"): (metrics.INDEXES_REQUESTS, metrics.INDEXES_LATENCY),
    ("GET", "/indexes/{name}/documents"): (
        metrics.INDEXES_DOCUMENT_REQUESTS,
        metrics.INDEXES_DOCUMENT_LATENCY,
    ),
    ("POST", "/indexes/{name}/documents"): (
        metrics.INDEXES_UPDATE_DOCUMENT_REQUESTS,
        metrics.INDEXES_UPDATE_DOCUMENT_LATENCY,
    ),
    ("POST", "/indexes/{name}/documents/delete"): (
        metrics.INDEXES_DELETE_DOCUMENT_REQUESTS,
        metrics.INDEXES_DELETE_DOCUMENT_LATENCY,
    ),
    ("DELETE", "/indexes/{name}"): (metrics.DELETE_INDEX_REQUESTS, metrics.DELETE_INDEX_LATENCY),
    ("POST", "/persist/{name}"): (metrics.PERSIST_REQUESTS, metrics.PERSIST_LATENCY),
    ("POST", "/load/{name}"): (metrics.LOAD_REQUESTS, metrics.LOAD_LATENCY),
    ("POST", "/retrieve"): (metrics.INDEXES_RETRIEVE_REQUESTS, metrics.INDEXES_RETRIEVE_LATENCY),
}


class KaitoRoute(APIRoute):
    """A route of KAITO's index API: KAITO's metrics and error shape around the endpoint."""

    def get_route_handler(self) -> Callable[[Request], Awaitable[Response]]:
        handler = super().get_route_handler()
        key = (next(iter(self.methods)), self.path)
        if key not in ENDPOINT_METRICS:
            raise LookupError(f"KAITO route {key} has no entry in ENDPOINT_METRICS")
        requests, latency = ENDPOINT_METRICS[key]

        async def kaito_handler(request: Request) -> Response:
            started = time.perf_counter()
            response: Response | None = None
            try:
                response = await _answer(handler, request)
                return response
            finally:
                ok = response is not None and response.status_code < 400
                status = "success" if ok else "failure"
                requests.labels(status).inc()
                latency.labels(status).observe(time.perf_counter() - started)

        return kaito_handler


async def _answer(handler: Callable[[Request], Awaitable[Response]], request: Request) -> Response:
    try:
        return await handler(request)
    except RequestValidationError as exc:
        message, param, code = describe_validation(exc.errors())
        return JSONResponse(error_body(400, message, param=param, code=code), status_code=400)
    except StarletteHTTPException as exc:
        param = exc.param if isinstance(exc, Refusal) else None
        code = exc.code if isinstance(exc, Refusal) else None
        return JSONResponse(
            error_body(exc.status_code, str(exc.detail), param=param, code=code),
            status_code=exc.status_code,
            headers=exc.headers,
        )


class Refusal(HTTPException):
    """A refusal that names the field at fault (OpenAI's ``param``) and its ``code``."""

    def __init__(self, status: int, detail: str, *, param: str, code: str) -> None:
        super().__init__(status, detail)
        self.param = param
        self.code = code


router = APIRouter(tags=["indexes"], route_class=KaitoRoute)

QUARANTINE_HEADER = "Sentinel-Quarantined-Indexes"


def _within_limits(services: Services, documents: Sequence[protocol.DocumentIn]) -> None:
    """413 before any work for a request that carries more than the settings allow."""
    settings = services.settings
    found = protocol.oversized(
        documents, settings.MAX_DOCUMENTS_PER_REQUEST, settings.MAX_DOCUMENT_BYTES
    )
    if found is not None:
        message, param = found
        raise Refusal(413, message, param=param, code="request_too_large")


@contextmanager
def _http_errors() -> Iterator[None]:
    """One mapping from index errors to statuses (and KAITO's wording), for every endpoint."""
    try:
        yield
    except index_manager.IndexNotFound as exc:
        raise HTTPException(404, f"No such index: {exc.name!r} exists.") from exc
    except index_manager.IndexExistsError as exc:
        raise HTTPException(409, str(exc)) from exc
    except index_manager.PathNotAllowedError as exc:
        raise HTTPException(400, str(exc)) from exc
    except persistence.IndexFileError as exc:
        raise HTTPException(409, str(exc)) from exc
    except FileNotFoundError as exc:
        raise HTTPException(404, f"Path does not exist: {exc.filename}") from exc
    except EmbeddingError as exc:
        raise HTTPException(502, str(exc)) from exc
    except VectorDBError as exc:
        raise HTTPException(503, str(exc)) from exc
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from exc
    except OSError as exc:
        raise HTTPException(500, f"index file could not be written: {exc.strerror}") from exc


@router.post("/index")
async def index_documents(
    request: protocol.IndexRequest, services: ServicesDep, principal: PrincipalDep
) -> list[protocol.DocumentOut]:
    check_write(principal, request.index_name)
    _within_limits(services, request.documents)
    documents = [d.to_document() for d in request.documents]
    with _http_errors():
        added = await run_in_threadpool(
            services.indexes.add_documents, request.index_name, documents
        )
    return [protocol.DocumentOut.of(d) for d in added]


@router.get("/indexes")
async def list_indexes(
    services: ServicesDep, response: Response, principal: PrincipalDep
) -> list[str]:
    """KAITO's list of index names (those the key may read); the files quarantined at start
    are counted in the ``Sentinel-Quarantined-Indexes`` header (KAITO's clients read the body
    only)."""
    response.headers[QUARANTINE_HEADER] = str(len(services.indexes.quarantined()))
    with _http_errors():
        names = await run_in_threadpool(services.indexes.names)
    return principal.readable(names)


def _metadata_filter(text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HTTPException(
            400, f"Invalid metadata filter format. Must be a valid JSON string ({exc.msg})."
        ) from exc
    if not isinstance(value, dict):
        raise HTTPException(400, "Invalid metadata filter format. Must be a JSON object.")
    return value


@router.get("/indexes/{name}/documents")
async def list_documents(
    name: IndexName,
    services: ServicesDep,
    principal: PrincipalDep,
    *,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    offset: Annotated[int, Query(ge=0)] = 0,
    max_text_length: Annotated[int, Query(ge=1)] = protocol.DEFAULT_MAX_TEXT_LENGTH,
    metadata_filter: str | None = None,
) -> protocol.ListDocumentsResponse:
    wanted = _metadata_filter(metadata_filter)
    with _http_errors():
        check_read(principal, name)  # where a missing index is found: the same answer
        store = services.indexes.get(name)
        docs, total = await run_in_threadpool(store.list_documents, offset, limit, wanted)
    listed = [protocol.DocumentOut.of(doc, max_text_length) for doc in docs]
    return protocol.ListDocumentsResponse(documents=listed, count=len(listed), total_items=total)


@router.post("/indexes/{name}/documents")
async def update_documents(
    name: IndexName, request: protocol.UpdateRequest, services: ServicesDep, principal: PrincipalDep
) -> protocol.UpdateResponse:
    check_write(principal, name)
    _within_limits(services, request.documents)
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
    name: IndexName, request: protocol.DeleteRequest, services: ServicesDep, principal: PrincipalDep
) -> protocol.DeleteResponse:
    check_write(principal, name)
    with _http_errors():
        deleted, not_found = await run_in_threadpool(
            services.indexes.delete_documents, name, request.doc_ids
        )
    return protocol.DeleteResponse(deleted_doc_ids=deleted, not_found_doc_ids=not_found)


@router.delete("/indexes/{name}")
async def delete_index(
    name: IndexName, services: ServicesDep, principal: PrincipalDep
) -> protocol.MessageResponse:
    check_write(principal, name)
    with _http_errors():
        await run_in_threadpool(services.indexes.delete, name)
    return protocol.MessageResponse(message=f"Successfully deleted index {name}.")


@router.post("/persist/{name}")
async def persist_index(
    name: IndexName, services: ServicesDep, principal: PrincipalDep, path: str | None = None
) -> protocol.MessageResponse:
    check_write(principal, name)
    indexes = services.indexes
    with _http_errors():
        file = await run_in_threadpool(indexes.persist, name, indexes.confine(path, name))
    return protocol.MessageResponse(message=f"Successfully persisted index {name} to {file}.")


@router.post("/load/{name}")
async def load_index(
    name: IndexName,
    services: ServicesDep,
    principal: PrincipalDep,
    path: str | None = None,
    overwrite: bool = False,
) -> protocol.MessageResponse:
    check_write(principal, name)
    indexes = services.indexes
    with _http_errors():
        directory = indexes.confine(path, name)
        await run_in_threadpool(indexes.load, name, directory, overwrite)
    file = persistence.index_file(directory, name)
    return protocol.MessageResponse(message=f"Successfully loaded index {name} from {file}.")


@router.post("/retrieve")
async def retrieve(
    request: protocol.RetrieveRequest, services: ServicesDep, principal: PrincipalDep
) -> protocol.RetrieveResponse:
    """KAITO's retrieval, behind the same gate and evidence filter as an answer: a request
    the gate refuses retrieves nothing, and dropped chunks are reported, never returned.
    At most ``max_node_count`` nodes (and never more than the policy's ``gate.topK``);
    with ``context_token_ratio``, only those that fit KAITO's token budget."""
    with _http_errors():
        check_read(principal, request.index_name)
        services.indexes.get(request.index_name)  # KAITO's 404 for an unknown index
    retrieved = await retrieval.retrieve(
        services,
        index_name=request.index_name,
        query=request.query,
        node_count=request.node_count(),
        metadata_filter=request.metadata_filter,
        context_token_ratio=request.context_token_ratio,
    )
    results = [protocol.RetrievedChunk.of(hit) for hit in retrieved.hits]
    return protocol.RetrieveResponse(
        query=request.query, results=results, count=len(results), sentinel=retrieved.sentinel
    )
