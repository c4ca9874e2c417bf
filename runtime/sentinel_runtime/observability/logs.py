"""JSON-lines logging: one object per line with a stable ``event`` field.

Callers pass an event name from :mod:`sentinel_runtime.observability.events` and plain
fields; nothing here ever receives scanned text, so secrets cannot reach the log stream.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
from typing import Any

_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys()) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's ANSI-coloured duplicate of the message
}


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON object; ``extra`` fields become top-level keys."""

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "ts": dt.datetime.fromtimestamp(record.created, tz=dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": getattr(record, "event", None) or record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RESERVED and key != "event":
                payload[key] = value
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str, ensure_ascii=False)


def configure(level: str = "INFO") -> None:
    """Route the root logger (and uvicorn's) to stderr as JSON lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        uv = logging.getLogger(name)
        uv.handlers[:] = []
        uv.propagate = True


def log_event(
    logger: logging.Logger,
    event: str,
    level: int = logging.INFO,
    *,
    exc_info: bool = False,
    **fields: Any,
) -> None:
    """Emit one structured event; ``fields`` must not collide with LogRecord attributes."""
    if not logger.isEnabledFor(level):
        return  # per-request events cost nothing when their level is off
    clashes = _RESERVED.intersection(fields)
    if clashes:
        raise ValueError(f"log fields collide with LogRecord attributes: {sorted(clashes)}")
    logger.log(level, event, extra={"event": event, **fields}, exc_info=exc_info)
