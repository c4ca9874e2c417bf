"""The airline sample (samples/airline): its files, its tool server module, its tools section."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "airline"


def load_tool_server_module() -> Any:
    spec = importlib.util.spec_from_file_location("airline_tool_server", SAMPLE / "tool_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def airline_section(base_url: str) -> dict[str, Any]:
    """The sample policy's tools section, its tools served at ``base_url``."""
    document = yaml.safe_load((SAMPLE / "guardrails.yaml").read_text(encoding="utf-8"))
    section = document["tools"]
    section["baseUrl"] = base_url
    return section
