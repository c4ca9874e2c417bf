"""In-process runtimes that the shell's environment cannot reach: builtin embedder, embedded
store, no key, no upstream, no demo corpus, guardrails off, unless a test says otherwise."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from sentinel_runtime.api.app import create_app
from sentinel_runtime.settings import Settings

# Settings the shell must not leak into an in-process runtime.
ISOLATED = {
    "EMBEDDING_TYPE": "builtin",
    "VECTOR_DB_TYPE": "embedded",
    "RUNTIME_API_KEY": "",
    "LLM_INFERENCE_URL": "",
    "LLM_CONTEXT_WINDOW": 0,
    "DEMO_CORPUS": False,
    "OUTPUT_GUARDRAILS_ENABLED": False,
    "OUTPUT_GUARDRAILS_HOT_RELOAD_ENABLED": False,
}

Client = Callable[..., TestClient]


@contextmanager
def isolated_clients(persist: Path) -> Iterator[Client]:
    """A factory of in-process runtimes (lifespan run) with ``settings`` over the isolated
    defaults, sharing the persist directory ``persist``; all closed at the end."""
    opened: list[TestClient] = []

    def start(**settings: Any) -> TestClient:
        values = {**ISOLATED, "VECTOR_DB_PERSIST_DIR": str(persist), **settings}
        client = TestClient(create_app(Settings(**values)))
        client.__enter__()
        opened.append(client)
        return client

    try:
        yield start
    finally:
        for client in opened:
            client.__exit__(None, None, None)
