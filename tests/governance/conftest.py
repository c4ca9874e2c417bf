"""Fixtures: the airline sample's tool server on loopback and its rulebase pointed at it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from sentinel_runtime.governance.rulebase import Rulebase, parse_rulebase
from support.airline import airline_section, load_tool_server_module


@pytest.fixture
def airline_server() -> Iterator[Any]:
    server = load_tool_server_module().make_server("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def airline_rulebase(airline_server: Any) -> Rulebase:
    host, port = airline_server.server_address[:2]
    return parse_rulebase(airline_section(f"http://{host}:{port}"))
