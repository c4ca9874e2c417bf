"""A runtime that survives its own data, against the app in process: damaged and symlinked
index files quarantined at start and reported (``/ready``, ``GET /indexes``' header), a
failed policy reload reported while the last good policy serves, the document limits (413
naming the field), no half-made index after a failed ``/index``, and index names checked
before any work."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from sentinel_runtime.index import persistence
from sentinel_runtime.index.embedders import HashingEmbedder
from sentinel_runtime.index.manager import IndexManager
from sentinel_runtime.index.types import Document
from support.configmap import ConfigMapDir
from support.inprocess import AppRuntime, app_runtime

NO_DEMO = {"DEMO_CORPUS": "false"}
DOCS = [Document("a", "Alpha text about invoices."), Document("b", "Beta text about refunds.")]
POLICY = "scanners:\n  - type: ban_substrings\n    action: redact\n    substrings: [alpha]\n"
BROKEN = b"scanners:\n  - type: [unclosed\n"


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"condition not met within {timeout} s")


def services(runtime: AppRuntime) -> Any:
    return runtime.client.app.state.services  # type: ignore[attr-defined]


def error(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert body["detail"] == body["error"]["message"]  # KAITO's string and OpenAI's object
    return body["error"]


# -- quarantine at start ---------------------------------------------------------------------


@pytest.fixture
def bad_persist_dir(tmp_path: Path) -> Path:
    """A persist directory with a good index, a truncated one and a symlink to a good one."""
    persist = tmp_path / "persist"
    manager = IndexManager(HashingEmbedder(), persist)
    manager.add_documents("good", DOCS)
    manager.add_documents("broken", DOCS)
    broken = persist / "broken.sentinel-index"
    broken.write_bytes(broken.read_bytes()[:64])
    IndexManager(HashingEmbedder(), tmp_path / "elsewhere").add_documents("linked", DOCS)
    os.symlink(tmp_path / "elsewhere" / "linked.sentinel-index", persist / "linked.sentinel-index")
    return persist


def test_damaged_and_symlinked_index_files_are_quarantined_and_reported(
    bad_persist_dir: Path,
) -> None:
    settings = {**NO_DEMO, "VECTOR_DB_PERSIST_DIR": str(bad_persist_dir)}
    with app_runtime(settings) as runtime:
        client = runtime.client
        listed = client.get("/indexes")
        assert listed.status_code == 200
        assert listed.json() == ["good"]  # KAITO's body: names only
        assert listed.headers["Sentinel-Quarantined-Indexes"] == "2"

        ready = client.get("/ready")
        assert ready.status_code == 200 and ready.json()["ready"] is True
        indexes = ready.json()["indexes"]
        assert indexes["loaded"] == ["good"]
        by_file = {Path(q["file"]).name: q for q in indexes["quarantined"]}
        assert set(by_file) == {"broken.sentinel-index", "linked.sentinel-index"}
        assert by_file["broken.sentinel-index"]["problem"] == "damaged"
        assert by_file["linked.sentinel-index"]["problem"] == "symlink"
        for record in by_file.values():
            moved = Path(record["movedTo"])
            assert moved.parent == bad_persist_dir / "quarantine"
            assert moved.name.startswith(Path(record["file"]).name + ".")
            assert os.path.lexists(moved) and record["reason"]
            assert abs(record["at"] - time.time()) < 600

        assert runtime.counted("rag_index_files_quarantined_total", problem="damaged") == 1
        assert runtime.counted("rag_index_files_quarantined_total", problem="symlink") == 1
        assert '"event": "rag_index_file_quarantined"' in runtime.logs()
        hits = client.post("/retrieve", json={"index_name": "good", "query": "invoices"})
        assert hits.status_code == 200 and hits.json()["results"][0]["doc_id"] == "a"


def test_a_clean_start_reports_no_quarantine(tmp_path: Path) -> None:
    with app_runtime({**NO_DEMO, "VECTOR_DB_PERSIST_DIR": str(tmp_path)}) as runtime:
        assert runtime.client.get("/indexes").headers["Sentinel-Quarantined-Indexes"] == "0"
        assert runtime.client.get("/ready").json()["indexes"] == {
            "loaded": [],
            "quarantined": [],
        }


# -- policy reload state ---------------------------------------------------------------------


def test_a_failed_reload_is_shown_while_the_last_good_policy_serves(tmp_path: Path) -> None:
    configmap = ConfigMapDir(tmp_path / "guardrails")
    configmap.write(POLICY)
    settings = {
        **NO_DEMO,
        "OUTPUT_GUARDRAILS_ENABLED": True,
        "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
    }
    with app_runtime(settings) as runtime:
        client = runtime.client
        good_hash = client.get("/v1/guardrails/policy").json()["sha256"]
        assert client.get("/v1/guardrails/policy").json()["reload"]["lastFailure"] is None
        configmap.write(BROKEN)

        def failed() -> bool:
            attempt = client.get("/v1/guardrails/policy").json()["reload"]["lastAttempt"]
            return attempt is not None and attempt["result"] == "failure"

        wait_for(failed)
        described = client.get("/v1/guardrails/policy").json()
        assert described["active"] is True and described["sha256"] == good_hash
        reload = described["reload"]
        assert reload["lastAttempt"]["activePolicyHash"] == good_hash
        failure = reload["lastFailure"]
        assert failure["policyHash"] == hashlib.sha256(BROKEN).hexdigest()
        assert failure["status"] == "load_failed" and "not valid YAML" in failure["message"]
        assert abs(failure["at"] - time.time()) < 60
        # The last good policy keeps scanning.
        scanned = client.post("/v1/guardrails/scan", json={"text": "alpha beta"}).json()
        assert scanned["action"] == "redact" and scanned["policyHash"] == good_hash

        ready = client.get("/ready")
        assert ready.status_code == 200
        guardrails = ready.json()["guardrails"]
        assert guardrails["policyHash"] == good_hash
        assert guardrails["reloadFailed"]["policyHash"] == failure["policyHash"]

        # Fixed: the reload succeeds, /ready stops mentioning it, the failure stays on record.
        configmap.write(POLICY.replace("alpha", "gamma"))
        wait_for(lambda: client.get("/v1/guardrails/policy").json()["sha256"] != good_hash)
        reload = client.get("/v1/guardrails/policy").json()["reload"]
        assert reload["lastAttempt"]["result"] == "success"
        assert reload["lastFailure"]["policyHash"] == failure["policyHash"]
        assert "reloadFailed" not in client.get("/ready").json()["guardrails"]


# -- document limits -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def limited() -> Any:
    settings = {**NO_DEMO, "MAX_DOCUMENT_BYTES": 100, "MAX_DOCUMENTS_PER_REQUEST": 3}
    with app_runtime(settings) as runtime:
        yield runtime


@pytest.mark.parametrize(
    ("route", "documents", "param"),
    [
        pytest.param(
            "/index",
            [{"text": "short"}, {"text": "é" * 51}],  # 102 UTF-8 bytes, 51 characters
            "documents.1.text",
            id="index-bytes",
        ),
        pytest.param("/index", [{"text": "x"}] * 4, "documents", id="index-count"),
        pytest.param(
            "/indexes/kb/documents",
            [{"doc_id": "a", "text": "y" * 101}],
            "documents.0.text",
            id="update-bytes",
        ),
        pytest.param(
            "/indexes/kb/documents",
            [{"doc_id": str(i), "text": "y"} for i in range(4)],
            "documents",
            id="update-count",
        ),
    ],
)
def test_documents_over_the_limits_are_a_413_naming_the_field(
    limited: AppRuntime, route: str, documents: list[dict[str, Any]], param: str
) -> None:
    client = limited.client
    assert client.post("/index", json={"index_name": "kb", "documents": [{"text": "seed"}]})
    body = {"documents": documents} | ({"index_name": "other"} if route == "/index" else {})
    response = client.post(route, json=body)
    assert response.status_code == 413, response.text
    problem = error(response)
    assert problem["param"] == param and problem["code"] == "request_too_large"
    assert "MAX_DOCUMENT" in problem["message"]
    assert client.get("/indexes").json() == ["kb"]


def test_documents_at_the_limits_are_accepted(limited: AppRuntime) -> None:
    documents = [{"text": "é" * 50}, {"text": "z" * 100}, {"text": "ok"}]
    response = limited.client.post("/index", json={"index_name": "at", "documents": documents})
    assert response.status_code == 200, response.text


def test_the_default_document_limit_is_2_mib_of_utf8() -> None:
    with app_runtime(NO_DEMO) as runtime:
        over = "€" * (2 * 1024 * 1024 // 3 + 1)  # 3 bytes each: 2 MiB + 1 byte
        response = runtime.client.post(
            "/index", json={"index_name": "big", "documents": [{"text": over}]}
        )
        assert response.status_code == 413 and error(response)["param"] == "documents.0.text"
        assert runtime.client.get("/indexes").json() == []


# -- nothing half-made -----------------------------------------------------------------------


@pytest.fixture
def persisted_app(tmp_path: Path) -> Any:
    with app_runtime({**NO_DEMO, "VECTOR_DB_PERSIST_DIR": str(tmp_path)}) as runtime:
        yield runtime


def test_a_failing_embedder_leaves_no_index(
    persisted_app: AppRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = services(persisted_app).indexes.embedder

    def embed(texts):
        if any("poison" in text for text in texts):
            raise RuntimeError("the embedder crashed")
        return HashingEmbedder.embed(embedder, texts)

    monkeypatch.setattr(embedder, "embed", embed)
    documents = [{"text": "fine"}, {"text": "poison pill"}]
    response = persisted_app.client.post(
        "/index", json={"index_name": "kb", "documents": documents}
    )
    assert response.status_code == 500
    listed = persisted_app.client.get("/indexes")
    assert listed.status_code == 200 and listed.json() == []
    assert persisted_app.client.get("/indexes/kb/documents").status_code == 404


def test_a_failed_save_leaves_no_index(
    persisted_app: AppRuntime, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def full_disk(path: Path, snapshot: persistence.Snapshot) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(persistence, "write", full_disk)
    response = persisted_app.client.post(
        "/index", json={"index_name": "kb", "documents": [{"text": "Alpha text."}]}
    )
    assert response.status_code == 500 and "could not be written" in error(response)["message"]
    assert persisted_app.client.get("/indexes").json() == []
    assert not (tmp_path / "kb.sentinel-index").exists()


@pytest.mark.parametrize(
    "document",
    [
        pytest.param('{"text": "alpha \\ud800 beta"}', id="text"),
        pytest.param('{"doc_id": "x\\udfff", "text": "alpha"}', id="doc_id"),
        pytest.param('{"text": "alpha", "metadata": {"k": "\\ud800"}}', id="metadata"),
    ],
)
def test_a_lone_surrogate_leaves_no_index(persisted_app: AppRuntime, document: str) -> None:
    body = '{"index_name": "kb", "documents": [{"text": "fine"}, ' + document + "]}"
    response = persisted_app.client.post(
        "/index", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400, response.text
    listed = persisted_app.client.get("/indexes")
    assert listed.status_code == 200 and listed.json() == []


# -- index names -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("GET", "/indexes/-bad/documents", None, id="list"),
        pytest.param(
            "POST",
            "/indexes/-bad/documents",
            {"documents": [{"doc_id": "a", "text": "t"}]},
            id="update",
        ),
        pytest.param(
            "POST", "/indexes/-bad/documents/delete", {"doc_ids": ["a"]}, id="delete-docs"
        ),
        pytest.param("DELETE", "/indexes/has%20space", None, id="delete"),
        pytest.param("POST", "/persist/-bad", None, id="persist"),
        pytest.param("POST", "/load/" + "x" * 64, None, id="load"),
    ],
)
def test_a_malformed_path_name_is_a_400_naming_it(
    persisted_app: AppRuntime, method: str, path: str, body: Any
) -> None:
    response = persisted_app.client.request(method, path, json=body)
    assert response.status_code == 400, response.text
    problem = error(response)
    assert problem["param"] == "name" and "invalid index name" in problem["message"]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param("/index", {"index_name": "../etc", "documents": [{"text": "t"}]}, id="index"),
        pytest.param("/retrieve", {"index_name": "a/b", "query": "q"}, id="retrieve"),
    ],
)
def test_a_malformed_body_name_is_a_400_naming_it(
    persisted_app: AppRuntime, path: str, body: dict[str, Any]
) -> None:
    response = persisted_app.client.post(path, json=body)
    assert response.status_code == 400, response.text
    assert error(response)["param"] == "index_name"
