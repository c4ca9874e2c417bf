"""The real tools the shipped artefacts are checked with, found or fetched once per session.

helm, prometheus and promtool come from scripts/tools/install.sh (cached outside the repo);
hadolint, kubernetes-validate, lint-imports and sentinel are console scripts of the venv,
found beside the interpreter because ``make test`` does not put ``.venv/bin`` on PATH. A
tool that cannot be had is a test error, never a skip.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "scripts" / "tools" / "install.sh"
CACHED_TOOLS = ("helm", "prometheus", "promtool")


@functools.cache
def _cached_bin() -> Path:
    result = subprocess.run(
        ["bash", str(INSTALL), "--print-bin"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHON": sys.executable},
        timeout=900,
    )
    if result.returncode != 0:
        pytest.fail(f"{INSTALL.relative_to(ROOT)} failed:\n{result.stderr[-4000:]}")
    return Path(result.stdout.strip().splitlines()[-1])


def tool(name: str) -> str:
    """The path of a tool: fetched into the cache (helm, prometheus, promtool) or the venv's."""
    if name in CACHED_TOOLS:
        return str(_cached_bin() / name)
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: run `make .venv/.installed` (the test extra has it)")
    return found


def run(name: str, *args: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess[str]:
    """Run a tool; on an unexpected exit status, fail with its output."""
    result = subprocess.run(
        [tool(name), *args], capture_output=True, text=True, timeout=300, **kwargs
    )
    if check and result.returncode != 0:
        pytest.fail(
            f"{name} {' '.join(args)} exited {result.returncode}:\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result
