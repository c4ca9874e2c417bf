"""Errors on the wire: one table from the domain's exceptions to HTTP statuses, and one body.

Every error answer carries a string ``detail`` (what KAITO's clients read) and OpenAI's
``error`` object (``message``, ``type``, ``param``, ``code``: what OpenAI's clients read).
The routes raise nothing of their own for a turn that failed: the application layer's
exceptions (``answer.errors``) and those of the layers below arrive here, through the
handlers :func:`install` registers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from sentinel_runtime.answer.errors import (
    ContextWindowExceededError,
    InvalidRequestError,
    PolicyUnavailableError,
    TurnError,
    UnprocessableRequestError,
)
from sentinel_runtime.guardrails.engine import FAILURE_DETAIL, OutputGuardrailsError
from sentinel_runtime.index.base import IndexNotFound
from sentinel_runtime.llm.upstream import UpstreamError

_ERROR_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_exceeded",
}
_PARAM_SOURCES = {"body", "query", "path", "header", "cookie"}
_TYPE_TAGS = {"str", "int", "float", "bool", "none", "list", "dict", "constrained-str"}
# The application layer's refusals: status, and OpenAI's ``code`` when it has one.
TURN_ERRORS: dict[type[TurnError], tuple[int, str | None]] = {
    InvalidRequestError: (400, None),
    ContextWindowExceededError: (400, "context_length_exceeded"),
    UnprocessableRequestError: (422, None),
    PolicyUnavailableError: (503, "guardrails_unavailable"),
}


class ErrorObject(BaseModel):
    message: str
    type: str
    param: str | None
    code: str | None


class ErrorBody(BaseModel):
    """Every error answer's body (the OpenAPI document lists it for each route)."""

    detail: str
    error: ErrorObject


# The statuses any route may answer with this body: the edge's (400 bad text or JSON, 401,
# 413) and the last resort's 500, beside each route's own.
_DESCRIBED: dict[int | str, str] = {
    400: "The request is malformed or a parameter is out of range (`error.param` names it).",
    401: "Missing or invalid API key (only when RUNTIME_API_KEY or RUNTIME_KEYS_FILE is set).",
    413: "The request body, a document or the number of documents passes its limit.",
    500: "An unexpected error; the connection stays usable.",
    # Declared so FastAPI does not describe a 422 list body that no route returns.
    "4XX": "Another refusal: 403 outside the key's scope, 404 unknown resource (or one "
    "outside the key's read scope), 409 state conflict, 422 a request the domain cannot "
    "accept, 429 the key's or the upstream's rate limit or, on a turn, every slot and queue "
    "place taken (with Retry-After; same body; some add fields).",
    "5XX": "502/504 the upstream model server failed or timed out; 503 no usable guardrails "
    "policy or index store, or, on a turn, no slot freed within MAX_QUEUE_SECONDS (with "
    "Retry-After).",
}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text} for status, text in _DESCRIBED.items()
}


def error_body(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """KAITO's string ``detail`` and OpenAI's ``error`` object, in one body."""
    message = printable(message)
    if status in (502, 504):
        kind = "upstream_error"
    elif status >= 500:
        kind = "server_error"
    else:
        kind = _ERROR_TYPES.get(status, "invalid_request_error")
    error = {"message": message, "type": kind, "param": param, "code": code}
    return {"detail": message, "error": error}


def printable(text: str) -> str:
    """``text`` with any lone surrogate escaped, so the body can always be encoded: a
    message may quote the client's input, and that input may be the very fault."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def error_response(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> JSONResponse:
    return JSONResponse(error_body(status, message, param=param, code=code), status_code=status)


def describe_validation(errors: Sequence[Any]) -> tuple[str, str | None, str | None]:
    """One sentence for pydantic's error list, the first field at fault and its error type:
    ``max_node_count: Input should be less than or equal to 300``. A field that failed
    every member of a union is one clause, its members' messages joined by "or"."""
    by_field: dict[str, list[str]] = {}
    for error in errors:
        if error.get("type") == "json_invalid":
            # Its location is a character offset, not a field.
            reason = (error.get("ctx") or {}).get("error", "JSON decode error")
            at = error.get("loc", (None, None))[-1]
            return f"the request body is not valid JSON: {reason} (at {at})", None, "json_invalid"
        field = ".".join(_field_path(error.get("loc", ())))
        message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
        messages = by_field.setdefault(field, [])
        if message not in messages:
            messages.append(message)
    sentences = [
        " or ".join(messages)
        if not field or field in messages[0]
        else f"{field}: {' or '.join(messages)}"
        for field, messages in by_field.items()
    ]
    first = errors[0] if errors else {}
    code = first.get("type") if isinstance(first, dict) else None
    return "; ".join(sentences) or "invalid request", next(iter(by_field), None), code


def _field_path(loc: Sequence[Any]) -> list[str]:
    """The field's path: without the request part (``body``) and without the union
    members' tags pydantic puts in the location (``str``, ``list[str]``,
    ``function-after[check_name(), str]``), which name types, not fields."""
    parts = [str(part) for part in loc]
    if len(parts) > 1 and parts[0] in _PARAM_SOURCES:
        parts = parts[1:]
    return [p for p in parts if p not in _TYPE_TAGS and "[" not in p]


async def _invalid_request(request: Request, exc: Exception) -> JSONResponse:
    # OpenAI answers a malformed request with 400 and one readable sentence, never
    # FastAPI's 422 list; the client's input is not echoed back.
    assert isinstance(exc, RequestValidationError)
    message, param, code = describe_validation(exc.errors())
    return error_response(400, message, param=param, code=code)


async def _turn_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, TurnError)
    status, code = next(
        (entry for kind, entry in TURN_ERRORS.items() if isinstance(exc, kind)), (400, None)
    )
    return error_response(status, exc.message, param=exc.param, code=code)


async def _index_not_found(request: Request, exc: Exception) -> JSONResponse:
    return error_response(404, str(exc), param="index_name", code="index_not_found")


async def _upstream(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, UpstreamError)
    return error_response(exc.status_code, exc.detail, code=exc.reason)


async def _guardrails_failed(request: Request, exc: Exception) -> JSONResponse:
    # Fail closed: the answer that could not be scanned is not returned.
    return error_response(500, FAILURE_DETAIL, code="guardrails_error")


async def _http_exception(request: Request, exc: Exception) -> JSONResponse:
    # A route's own refusal (a missing resource, a state conflict), and Starlette's 404/405.
    assert isinstance(exc, HTTPException)
    response = error_response(exc.status_code, str(exc.detail))
    response.headers.update(exc.headers or {})
    return response


def install(app: FastAPI) -> None:
    """Register the table's handlers on ``app``."""
    app.add_exception_handler(HTTPException, _http_exception)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(TurnError, _turn_error)
    app.add_exception_handler(IndexNotFound, _index_not_found)
    app.add_exception_handler(UpstreamError, _upstream)
    app.add_exception_handler(OutputGuardrailsError, _guardrails_failed)
