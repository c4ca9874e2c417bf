"""The audit log persists one record per request, survives a restart and tolerates a torn line."""

from __future__ import annotations

import json
from pathlib import Path

from sentinel_runtime.pipeline.audit import FILE_NAME, AuditLog


def record(i: int, decision: str = "answer") -> dict[str, object]:
    return {"requestId": f"req-{i}", "decision": decision, "gate": {"action": "retrieve"}}


def test_records_are_appended_queried_and_reloaded(tmp_path: Path) -> None:
    log = AuditLog(tmp_path)
    for i in range(5):
        log.append(record(i, "refuse" if i % 2 else "answer"))
    assert [r["requestId"] for r in log.query(limit=2)] == ["req-4", "req-3"]
    assert {r["requestId"] for r in log.query(decision="refuse")} == {"req-1", "req-3"}
    assert log.query(request_id="req-2")[0]["decision"] == "answer"
    lines = (tmp_path / FILE_NAME).read_text().splitlines()
    assert [json.loads(line)["requestId"] for line in lines] == [f"req-{i}" for i in range(5)]

    with (tmp_path / FILE_NAME).open("a") as handle:
        handle.write('{"requestId": "req-torn", "deci')  # a crash mid-write
    reopened = AuditLog(tmp_path)
    assert [r["requestId"] for r in reopened.query()][:2] == ["req-4", "req-3"]
    reopened.append(record(6))
    assert reopened.query(limit=1)[0]["requestId"] == "req-6"


def test_memory_only_and_bounded(tmp_path: Path) -> None:
    log = AuditLog(None, memory_limit=3)
    for i in range(5):
        log.append(record(i))
    assert [r["requestId"] for r in log.query()] == ["req-4", "req-3", "req-2"]
    assert not list(tmp_path.iterdir())


def test_rotation(tmp_path: Path) -> None:
    log = AuditLog(tmp_path, max_bytes=200)
    for i in range(10):
        log.append(record(i))
    assert (tmp_path / (FILE_NAME + ".1")).exists()
    assert (tmp_path / FILE_NAME).stat().st_size < 400
