"""``sentinel health``: the image's HEALTHCHECK, against real loopback servers."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from sentinel_runtime.cli import EXIT_ERROR, EXIT_OK, main
from support.json_peer import JsonPeer
from support.runtime import free_port


class HealthPeer(JsonPeer):
    def answer(self, method: str, path: str, payload: Any) -> tuple[int, Any]:
        return {
            "/health": (200, {"status": "ok"}),
            "/ready": (503, {"status": "no active policy"}),
        }.get(path, (404, None))


@pytest.fixture(scope="module")
def peer() -> Iterator[str]:
    server = HealthPeer().start()
    assert server.server is not None
    host, port = server.server.server_address[:2]
    yield f"http://{host}:{port}"
    server.stop()


def test_a_2xx_answer_is_healthy(peer: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["health", "--url", f"{peer}/health"]) == EXIT_OK
    assert capsys.readouterr().out.strip() == f"healthy: {peer}/health 200"


@pytest.mark.parametrize(("path", "status"), [("/ready", 503), ("/nowhere", 404)])
def test_an_error_status_is_unhealthy(
    peer: str, path: str, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["health", "--url", f"{peer}{path}"]) == EXIT_ERROR
    assert f"answered {status}" in capsys.readouterr().err


def test_a_closed_port_is_unhealthy(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}/health"
    assert main(["health", "--url", url]) == EXIT_ERROR
    assert "unhealthy" in capsys.readouterr().err


def test_a_server_that_never_answers_times_out() -> None:
    with socket.socket() as listener:  # accepts connections (backlog), never replies
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        started = time.monotonic()
        url = f"http://127.0.0.1:{port}/health"
        assert main(["health", "--url", url, "--timeout", "0.5"]) == EXIT_ERROR
        assert time.monotonic() - started < 5


def test_the_environments_proxy_is_not_used(peer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{free_port()}")
    assert main(["health", "--url", f"{peer}/health"]) == EXIT_OK


def test_only_http_urls_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["health", "--url", "file:///etc/hostname"]) == EXIT_ERROR
    assert "not an http(s) URL" in capsys.readouterr().err
