"""Issue 19's "done when": from a fresh clone, what the README says works. The committed tree
is cloned and installed (``pip install``, not editable: the package data must be in the
wheel) into a new virtualenv; then ``sentinel serve --persist-dir``, ``sentinel index`` over a
folder of this test's own files (one PDF among them), ``sentinel ask``, a restart, and the
same question again: the same answer, cited.

Offline and quick: the new virtualenv gets its dependencies from this interpreter's
site-packages (a ``.pth`` line, appended after its own), so only the clone itself is built
and installed (``--no-deps --no-build-isolation``); the clone's copy is the one imported."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from support.documents import write_handbook
from support.runtime import start_runtime

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "What must laptops use?"

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and a clone"
)


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.mark.timeout(400)
def test_a_fresh_clone_serves_indexes_and_answers_across_a_restart(tmp_path: Path) -> None:
    clone = tmp_path / "sentinel"
    _run("git", "clone", "--quiet", "--no-hardlinks", ROOT, clone, cwd=tmp_path)
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(
        _run(
            python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=tmp_path
        ).strip()
    )
    (site / "zz_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    _run(
        sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
        "--no-build-isolation", "--no-index", clone, cwd=tmp_path, env=env,
    )  # fmt: skip
    where = _run(python, "-c", "import sentinel_runtime; print(sentinel_runtime.__file__)",
                 cwd=tmp_path)  # fmt: skip
    assert where.startswith(str(site)), where
    sentinel = venv / "bin" / "sentinel"

    work = tmp_path / "work"
    work.mkdir()
    write_handbook(work)
    serve = ("--persist-dir", "./sentinel-data", "--no-demo")
    runtime = start_runtime(tmp_path, args=serve, command=(str(sentinel),), cwd=work)
    try:
        url = {**env, "SENTINEL_URL": runtime.base_url}
        indexed = _run(sentinel, "index", "./handbook", "--index", "handbook", cwd=work, env=url)
        assert "4 added" in indexed
        first = _run(sentinel, "ask", QUESTION, "--index", "handbook", cwd=work, env=url)
    finally:
        runtime.stop()
    assert "full-disk encryption" in first
    assert "sources:\n  handbook/security/laptops.pdf  [handbook/security/laptops.pdf#p0]" in first

    runtime = start_runtime(tmp_path, args=serve, command=(str(sentinel),), cwd=work)
    try:
        url = {**env, "SENTINEL_URL": runtime.base_url}
        again = _run(sentinel, "ask", QUESTION, "--index", "handbook", cwd=work, env=url)
    finally:
        runtime.stop()
    assert again == first
