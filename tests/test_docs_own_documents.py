"""docs/your-own-documents.md runs as written: its ``sh`` and ``python`` blocks, in order, in
a temporary directory holding a ``handbook`` folder (``support.documents``), against a real
``sentinel serve`` on a free loopback port (``SENTINEL_URL`` and the blocks' ``127.0.0.1:8000``
point there). The ``text`` blocks are what the commands before them print.

The ``sentinel serve`` block starts the runtime; a block using ``--local`` runs with it stopped
(as the page says); the test restarts it between the two asks, as a user would, and the
answer is the same."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from support.docs_site import code_blocks, page
from support.documents import write_handbook
from support.runtime import RuntimeProcess, start_runtime
from test_cli import SENTINEL

pytestmark = pytest.mark.skipif(SENTINEL is None, reason="sentinel console script not installed")

PAGE = "your-own-documents.md"
BLOCKS = code_blocks(page(PAGE), "sh", "python", "text")
PLACEHOLDER = "http://127.0.0.1:8000"


class Walkthrough:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.cwd = tmp_path / "work"
        self.cwd.mkdir()
        write_handbook(self.cwd)
        self.serve_args: tuple[str, ...] | None = None
        self.runtime: RuntimeProcess | None = None

    def start(self) -> RuntimeProcess:
        assert self.serve_args is not None
        self.runtime = start_runtime(
            self.tmp_path, args=self.serve_args, command=(SENTINEL,), cwd=self.cwd
        )
        return self.runtime

    def stop(self) -> None:
        if self.runtime is not None:
            self.runtime.stop()
            self.runtime = None

    def env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("RUNTIME_API_KEY", "VECTOR_DB_", "MAX_", "SENTINEL_URL"))
        }
        env["PATH"] = f"{Path(SENTINEL).parent}{os.pathsep}{env.get('PATH', '')}"
        if self.runtime is not None:
            env["SENTINEL_URL"] = self.runtime.base_url
        return env

    def sh(self, block: str) -> str:
        if block.strip().startswith("sentinel serve"):
            self.serve_args = tuple(shlex.split(block.strip())[2:])
            self.stop()
            runtime = self.start()
            first = runtime.logs().splitlines()[0]
            assert first == (
                f"sentinel: listening on {runtime.base_url}, API docs {runtime.base_url}/docs; "
                "policy the shipped default; indexes embedded, persisted to "
                f"{(self.cwd / 'sentinel-data').resolve()}; http httptools, loop uvloop"
            )
            return ""
        if "--local" in block:
            self.stop()
        elif self.runtime is None:
            self.start()
        script = block
        if self.runtime is not None:
            script = script.replace(PLACEHOLDER, self.runtime.base_url)
        result = subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=self.cwd,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert result.returncode == 0, f"{block}\n{result.stdout}\n{result.stderr}"
        assert "Traceback" not in result.stderr
        return result.stdout

    def python(self, block: str) -> str:
        if self.runtime is None:
            self.start()
        assert self.runtime is not None
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = block.replace(PLACEHOLDER, self.runtime.base_url)
            exec(compile(code, PAGE, "exec"), {})
        return out.getvalue()


def _matches(shown: str, printed: str) -> bool:
    """``printed`` ends with the ``text`` block (what the last command of its block printed),
    ``…`` standing for any characters."""
    pattern = ".*?".join(re.escape(part) for part in shown.strip().split("\u2026"))
    return re.fullmatch(f"(?:.*\n)?{pattern}", printed.strip(), re.DOTALL) is not None


def test_the_walkthrough_runs_as_written(tmp_path: Path) -> None:
    kinds = [kind for kind, _ in BLOCKS]
    assert kinds == ["sh", "sh", "text", "sh", "python", "sh", "sh", "text"]
    walk = Walkthrough(tmp_path)
    try:
        outputs: list[str] = []
        first_ask = ""
        for number, (kind, block) in enumerate(BLOCKS):
            if kind == "text":
                assert _matches(block, outputs[-1]), f"block {number}:\n{outputs[-1]}"
                continue
            if number == 5:  # after the first asks: stop and start again, as a user would
                walk.stop()
                walk.start()
                assert walk.sh(BLOCKS[1][1]).endswith(first_ask)
            printed = walk.sh(block) if kind == "sh" else walk.python(block)
            outputs.append(printed)
            if number == 1:
                assert printed.startswith("index 'handbook' at http://127.0.0.1:")
                assert "4 added, 0 updated, 0 unchanged; 0 file(s) unreadable" in printed
                first_ask = printed.split("\n", 1)[1]
            if number in (3, 4):  # curl and the openai client
                text = (
                    json.loads(printed)["choices"][0]["message"]["content"]
                    if kind == "sh"
                    else printed
                )
                assert "reimbursed within 14 days" in text
                assert "handbook/expenses.html" in printed
            if number == 5:  # --local: the same answer from the persist directory
                assert printed.split("\n", 1)[1] == first_ask
    finally:
        walk.stop()
