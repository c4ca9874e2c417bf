"""Start ``sentinel serve`` as a real subprocess on a free loopback port."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai

from support.configmap import ConfigMapDir
from support.fake_llm import FakeLLM

STARTUP_SECONDS = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RuntimeProcess:
    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path

    def logs(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def metrics(self) -> str:
        return httpx.get(f"{self.base_url}/metrics", timeout=10).text

    def metric(self, name: str, **labels: str) -> float:
        """The value of one sample from the live /metrics text (0.0 when absent)."""
        return sample(self.metrics(), name, **labels)

    def stop(self) -> None:
        stop_process(self.process)


def stop_process(process: subprocess.Popen) -> None:
    """Terminate, then kill after 10 s; reaped either way."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def sample(text: str, name: str, **labels: str) -> float:
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        match = re.match(r"^([a-zA-Z_:][\w:]*)(\{(.*)\})?\s+(\S+)$", line)
        if not match or match.group(1) != name:
            continue
        found = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(3) or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(match.group(4))
    return 0.0


def start_runtime(
    tmp_path: Path,
    env: Mapping[str, str] | None = None,
    args: tuple[str, ...] = (),
    *,
    command: Sequence[str] = (sys.executable, "-m", "sentinel_runtime.cli"),
    cwd: Path | None = None,
) -> RuntimeProcess:
    """``command serve --port P *args`` (default command: this interpreter's runtime), run in
    ``cwd``, its output in ``tmp_path``; returns once ``/health`` answers."""
    port = free_port()
    log_path = tmp_path / f"runtime-{port}.log"
    full_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            ("OUTPUT_GUARDRAILS_", "LLM_", "RUNTIME_API_KEY", "EMBEDDING_", "VECTOR_DB_")
        )
    }
    full_env.update(env or {})
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*command, "serve", "--port", str(port), *args],
            cwd=cwd,
            env=full_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    runtime = RuntimeProcess(process, f"http://127.0.0.1:{port}", log_path)
    wait_until_answering(process, f"{runtime.base_url}/health", "runtime", log_path)
    return runtime


def wait_until_answering(
    process: subprocess.Popen[bytes],
    url: str,
    name: str,
    log_path: Path,
    seconds: float = STARTUP_SECONDS,
) -> None:
    """Return once ``url`` answers; raise, with the process's log, if it exits or takes
    longer than ``seconds`` (then it is stopped)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log = log_path.read_text(errors="replace")
            raise RuntimeError(f"{name} exited with {process.returncode}:\n{log}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    stop_process(process)
    log = log_path.read_text(errors="replace")
    raise RuntimeError(f"{name} did not start in {seconds} s:\n{log}")


def openai_client(runtime: RuntimeProcess, api_key: str = "unused") -> openai.OpenAI:
    """The official client pointed at a runtime, with no retries to hide a failure."""
    return openai.OpenAI(base_url=f"{runtime.base_url}/v1", api_key=api_key, max_retries=0)


@contextmanager
def guarded_runtime(
    tmp_path: Path, policy: str, env: Mapping[str, str] | None = None
) -> Iterator[tuple[RuntimeProcess, FakeLLM]]:
    """A runtime enforcing ``policy`` (a hot-reloaded file) in front of a fake upstream."""
    configmap = ConfigMapDir(tmp_path / "guardrails")
    configmap.write(policy)
    fake_llm = FakeLLM().start()
    try:
        runtime = start_runtime(
            tmp_path,
            {
                "OUTPUT_GUARDRAILS_ENABLED": "true",
                "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
                "LLM_INFERENCE_URL": fake_llm.base_url,
                **(env or {}),
            },
        )
        try:
            yield runtime, fake_llm
        finally:
            runtime.stop()
    finally:
        fake_llm.stop()
