"""Property-based fuzzing of the whole HTTP API with schemathesis, against the app in process.

Every operation of ``/openapi.json`` is generated from its own schema in three phases:
``examples`` (the schema's own examples), ``coverage`` (boundary and invalid values of each
parameter, missing and extra fields, wrong types, unexpected methods) and ``fuzzing``
(Hypothesis-generated requests, valid and invalid). A ``stateful`` phase then runs sequences
of calls linked by what one response gives the next: schemathesis infers the links from the
schema (``POST /index``'s ``index_name`` feeds every ``/indexes/{name}/...`` route,
``/retrieve``, ``/answer``, ``/debug/retrieval`` and chat; ``GET /indexes``'s names feed the
same; ``POST /v1/governance/sessions``'s ``session_id`` feeds the other governance routes).

The app is ``sentinel serve``'s: the shipped guardrails policy enforced, the demo corpus
indexed as ``demo`` (so the index routes find documents), indexes persisted to a temporary
directory (so ``/persist`` and ``/load`` work); the built-in generator answers, so nothing
leaves the process. Each test (each operation of the parametrised ones) gets a new app.

What must hold: no request, however malformed, gets a 5xx; and what the app answers is what
its OpenAPI document says. Generation is deterministic (a fixed seed, derandomised, no
example database, no health checks that depend on the machine's speed) and bounded, so a run
is the same run every time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import hypothesis
import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import strategies as st
from schemathesis.python import asgi
from schemathesis.specs.openapi.schemas import OpenApiSchema

from sentinel_runtime.api.app import create_app
from sentinel_runtime.settings import Settings
from support.inprocess import DEFAULTS, SERVE

SEED = 20240917
# Fuzzing-phase examples per operation (the examples and coverage phases come on top): the hunt
# for server errors gets more; the conformance of the answers is mostly a matter of which
# statuses come back, which the coverage phase already reaches.
MAX_EXAMPLES = 25
CONFORMANCE_EXAMPLES = 10
STATEFUL_SCENARIOS = 30
STATEFUL_STEPS = 10  # calls per stateful scenario, at most
# Hypothesis's health checks judge the generation's speed and size, not the app: on a loaded
# machine they would fail a run that found nothing.
NO_HEALTH_CHECKS = list(hypothesis.HealthCheck)

# However malformed the request, the answer is never a 5xx.
SERVER_ERRORS = {"not_a_server_error": {"enabled": True}}
# The answers the OpenAPI document describes: their bodies, headers and content types, and
# that every status is documented (the document describes the error body of every route).
# Not checked here, because they cannot hold by design:
# - positive_data_acceptance (schema-valid must be 2xx): the schema does not carry every
#   rule: an index or session that does not exist is a 404, an invalid index name or text
#   with NUL a 400, a chat turn without a user message a 400 too;
# - negative_data_rejection (schema-invalid must be 4xx of its list): a body over the limit
#   is a 413, which schemathesis does not count as a rejection, and pydantic's lax mode
#   takes ``false`` for a number (``/validate``'s ``similarity``);
# - unsupported_method / allow_header_conformance: on a path with several operations
#   (``/indexes/{name}/documents``) Starlette's 405 lists the methods of one route only.
CONFORMANCE = {
    "status_code_conformance": {"enabled": True},
    "content_type_conformance": {"enabled": True},
    "response_schema_conformance": {"enabled": True},
    "response_headers_conformance": {"enabled": True},
}
# Stateful: no 5xx, and resources behave as resources (what was created can be read, what
# was deleted is gone).
STATEFUL = {
    **SERVER_ERRORS,
    "use_after_free": {"enabled": True},
    "ensure_resource_availability": {"enabled": True},
}


def fuzz_config(checks: dict[str, Any], max_examples: int) -> schemathesis.Config:
    return schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "generation": {
                "mode": "all",  # valid and invalid requests
                "max-examples": max_examples,
                "deterministic": True,
                "database": "none",  # no replay of earlier runs' failures: every run the same
            },
            "checks": {"enabled": False, **checks},
            "phases": {
                "examples": {"enabled": True},
                "coverage": {"enabled": True},
                "fuzzing": {"enabled": True},
                "stateful": {"enabled": True, "max-steps": STATEFUL_STEPS},
            },
        }
    )


def serve_settings(persist_dir: str) -> Settings:
    return Settings(
        **{
            **DEFAULTS,
            **SERVE,  # the shipped policy enforced, the demo corpus indexed as "demo"
            "VECTOR_DB_PERSIST_DIR": persist_dir,
            "OUTPUT_GUARDRAILS_HOT_RELOAD_ENABLED": False,
        }
    )


# A string with a lone surrogate is valid JSON (``"\ud800"``) but no valid UTF-8, so
# schemathesis never generates one; JSON clients (and attackers) can send it. The fuzzing
# phase sends some bodies with one appended to one of their strings.
LONE_SURROGATE = "\ud800"


def _string_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _string_paths(item, (*path, index))


def _with_surrogate(value: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return value + LONE_SURROGATE
    head, *rest = path
    if isinstance(value, dict):
        return {**value, head: _with_surrogate(value[head], tuple(rest))}
    return [
        _with_surrogate(item, tuple(rest)) if i == head else item for i, item in enumerate(value)
    ]


def with_lone_surrogates(context: schemathesis.HookContext, body: Any) -> st.SearchStrategy[Any]:
    paths = list(_string_paths(body))
    if not paths:
        return st.just(body)
    spoiled = st.sampled_from(paths).map(lambda path: _with_surrogate(body, path))
    return st.one_of(st.just(body), spoiled)


def fuzz_schema(
    checks: dict[str, Any], document: dict[str, Any], max_examples: int = MAX_EXAMPLES
) -> OpenApiSchema:
    schema = schemathesis.openapi.from_dict(document, config=fuzz_config(checks, max_examples))
    schema.hook("flatmap_body")(with_lone_surrogates)
    return schema


# The OpenAPI document of an app that is never started (building the app runs nothing; its
# lifespan does): the operations are known at collection, the app under test is the fixture's.
DOCUMENT = create_app(serve_settings("")).openapi()
server_errors = fuzz_schema(SERVER_ERRORS, DOCUMENT)
conformance = fuzz_schema(CONFORMANCE, DOCUMENT, CONFORMANCE_EXAMPLES)


@pytest.fixture
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    """A new app; schemathesis starts its lifespan on the first request and keeps it
    running until the teardown ends it."""
    built = create_app(serve_settings(str(tmp_path_factory.mktemp("fuzz") / "indexes")))
    try:
        yield built
    finally:
        asgi.shutdown_lifespans()


# The app is one per operation, not one per example: the examples of an operation share its
# state, as a server's clients do (the Hypothesis check against that is off).
@server_errors.parametrize()
@hypothesis.settings(suppress_health_check=NO_HEALTH_CHECKS)
def test_no_request_gets_a_server_error(case: schemathesis.Case, app: FastAPI) -> None:
    case.call_and_validate(app=app)


@conformance.parametrize()
@hypothesis.settings(suppress_health_check=NO_HEALTH_CHECKS)
def test_answers_are_what_the_openapi_document_says(case: schemathesis.Case, app: FastAPI) -> None:
    case.call_and_validate(app=app)


def test_no_sequence_of_requests_gets_a_server_error(app: FastAPI) -> None:
    schema = fuzz_schema(STATEFUL, DOCUMENT)
    schema.app = app
    machine = schema.as_state_machine()
    settings = schema.config.get_hypothesis_settings(phase="stateful")
    machine.run(
        settings=hypothesis.settings(
            settings, max_examples=STATEFUL_SCENARIOS, suppress_health_check=NO_HEALTH_CHECKS
        )
    )
