"""A fake tool server on loopback: ``POST /tools/<name>`` answers ``handlers[name](args)``.

Each tool may sleep first (``delays``), so a test can measure what runs concurrently; the
peer records every call and the most calls it served at once (``max_in_flight``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from support.json_peer import JsonPeer


@dataclass
class ToolPeer(JsonPeer):
    handlers: dict[str, Callable[[dict[str, Any]], Any]] = field(default_factory=dict)
    delays: dict[str, float] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def answer(self, method: str, path: str, payload: Any) -> tuple[int, Any]:
        name = path.removeprefix("/tools/")
        if method != "POST" or name not in self.handlers:
            return 404, None
        with self.lock:
            self.calls.append((name, payload))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(self.delays.get(name, 0.0))
            return 200, self.handlers[name](payload)
        finally:
            with self.lock:
                self.in_flight -= 1

    def called(self, name: str) -> list[dict[str, Any]]:
        return [args for tool, args in self.calls if tool == name]


INDEPENDENT_TOOLS = tuple(f"t{i}" for i in range(4))


def independent_tools_section(base_url: str) -> dict[str, Any]:
    """A ``tools`` section whose goal ``all(X)`` needs four tools sharing no unbound variable:
    a solver can fetch their facts in one concurrent round."""
    return {
        "baseUrl": base_url,
        "functions": {name: {"url": f"/tools/{name}"} for name in INDEPENDENT_TOOLS},
        "bindings": [
            {"fact": f"p{i}(X, V)", "tool": name, "args": {"id": "X"}, "extract": {"V": "$.ok"}}
            for i, name in enumerate(INDEPENDENT_TOOLS)
        ],
        "rules": "all(X) :- p0(X, A), p1(X, B), p2(X, C), p3(X, D).",
    }
