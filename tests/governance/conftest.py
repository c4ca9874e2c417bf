"""Fixtures: the airline sample's tool server on loopback and its policy pointed at it."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from sentinel_runtime.governance.rulebase import Rulebase, parse_rulebase

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "airline"


def load_tool_server_module() -> Any:
    spec = importlib.util.spec_from_file_location("airline_tool_server", SAMPLE / "tool_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def airline_server() -> Iterator[Any]:
    server = load_tool_server_module().make_server("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def airline_section(base_url: str) -> dict[str, Any]:
    document = yaml.safe_load((SAMPLE / "guardrails.yaml").read_text(encoding="utf-8"))
    section = document["tools"]
    section["baseUrl"] = base_url
    return section


@pytest.fixture
def airline_rulebase(airline_server: Any) -> Rulebase:
    host, port = airline_server.server_address[:2]
    return parse_rulebase(airline_section(f"http://{host}:{port}"))
