"""The audit trail: one JSON record per answered request, appended to a file and queryable.

Records hold decisions, chunk ids, reason codes, scanner actions and latencies; never a
detected secret, and never the prompt unless the policy's ``audit.includePrompt`` is set
(and then only the prompt as the output scanners redacted it). With a directory the log is
``<dir>/audit.jsonl`` (one line per record, flushed per record, rotated to ``.1`` past
``max_bytes``); the most recent ``memory_limit`` records are also kept in memory, loaded
back from the file at start, and serve ``GET /v1/audit``.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sentinel_runtime.observability import events
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)

FILE_NAME = "audit.jsonl"
DEFAULT_MEMORY_LIMIT = 1000
DEFAULT_MAX_BYTES = 50 * 1024 * 1024


class AuditLog:
    def __init__(
        self,
        directory: Path | None,
        *,
        memory_limit: int = DEFAULT_MEMORY_LIMIT,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.path = directory / FILE_NAME if directory is not None else None
        self.max_bytes = max_bytes
        self._recent: deque[dict[str, Any]] = deque(maxlen=memory_limit)
        self._lock = threading.Lock()
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._recent.extend(_read_tail(self.path, memory_limit))

    def append(self, record: dict[str, Any]) -> None:
        with self._lock:
            self._recent.append(record)
        if self.path is None:
            return
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False, default=str)
        with self._lock:
            try:
                if self.path.exists() and self.path.stat().st_size > self.max_bytes:
                    os.replace(self.path, self.path.with_name(FILE_NAME + ".1"))
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(line + "\n")
            except OSError as exc:
                # The answer was already decided; losing its record is reported, not fatal.
                log_event(
                    logger,
                    events.AUDIT_WRITE_FAILED,
                    logging.ERROR,
                    path=str(self.path),
                    error=type(exc).__name__,
                )

    def query(
        self,
        *,
        request_id: str | None = None,
        decision: str | None = None,
        gate_action: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Most recent first."""
        with self._lock:
            records = list(self._recent)
        found = []
        for record in reversed(records):
            if request_id is not None and record.get("requestId") != request_id:
                continue
            if decision is not None and record.get("decision") != decision:
                continue
            if gate_action is not None and record.get("gate", {}).get("action") != gate_action:
                continue
            found.append(record)
            if len(found) >= limit:
                break
        return found


def _read_tail(path: Path, limit: int) -> Iterable[dict[str, Any]]:
    if not path.exists():
        return []
    tail: deque[dict[str, Any]] = deque(maxlen=limit)
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line after a crash: skip it, keep the rest
            if isinstance(record, dict):
                tail.append(record)
    return tail
