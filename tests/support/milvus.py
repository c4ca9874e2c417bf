"""A real Milvus server for tests and benchmarks: the Milvus 2.5 binary that the milvus-lite
wheel ships (``milvus_lite/lib/milvus``), listening on a loopback TCP port.

pymilvus starts the same binary itself for a ``MilvusClient("x.db")``, but on a Unix socket
that only its own process knows, and locks the file: one process only. Given an address
(as ``milvus_lite.server.Server(db, address)`` passes it), the binary serves gRPC there, so
several runtimes can share it, as they would share a Milvus in a cluster. We start the
binary directly, without importing ``milvus_lite`` (its ``__init__`` needs pkg_resources),
and stop it by its pid.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import time
from pathlib import Path

REASON = "needs the milvus-lite extra: pip install 'sentinel-rag[milvus-lite]'"


def binary() -> Path | None:
    """The Milvus server binary of the installed milvus-lite, or None."""
    if importlib.util.find_spec("pymilvus") is None:
        return None
    spec = importlib.util.find_spec("milvus_lite")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "lib" / "milvus"
    return path if path.is_file() else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class MilvusServer:
    """``with MilvusServer(directory) as milvus: MilvusClient(milvus.url)``."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        found = binary()
        if found is None:
            raise RuntimeError(f"no Milvus binary: {REASON}")
        self.binary = found
        self.directory = directory
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log = directory / "milvus.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def db_file(self) -> Path:
        return self.directory / "milvus.db"  # milvus-lite wants a short plain file name

    def start(self, timeout: float = 60.0) -> MilvusServer:
        self.directory.mkdir(parents=True, exist_ok=True)
        lib = str(self.binary.parent)
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = lib + (
            ":" + env["LD_LIBRARY_PATH"] if "LD_LIBRARY_PATH" in env else ""
        )
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [str(self.binary), str(self.db_file), f"127.0.0.1:{self.port}", "ERROR"],
                cwd=self.directory,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"milvus exited with {self.process.returncode}: {self.log.read_text()[-2000:]}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"milvus did not listen on {self.port} within {timeout} s")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def __enter__(self) -> MilvusServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
