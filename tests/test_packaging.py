"""What the project ships: the CRDs at the top level and in the chart, the evaluation data
inside the package (found without ``../shared``), and the wheel's metadata and contents.

The wheel is built once per module from a copy of the sources (pyproject.toml, README.md,
LICENSE, runtime, operator), as a user's ``pip install .`` builds it, then unpacked and run.
"""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from sentinel_runtime.evaluation import datasets, injection

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGED_FILES = sorted(
    path.relative_to(datasets.PACKAGED).as_posix()
    for path in datasets.PACKAGED.rglob("*")
    if path.is_file()
)
DATA_FILES = [name for name in PACKAGED_FILES if not Path(name).name.startswith("LICENSE")]
LICENCE_FILES = [name for name in PACKAGED_FILES if Path(name).name.startswith("LICENSE")]


# --- CRDs ---------------------------------------------------------------------------------


# --- evaluation data ----------------------------------------------------------------------


def test_every_loader_reads_the_packaged_copy_when_shared_is_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(datasets.ENV_VAR, raising=False)
    monkeypatch.setattr(datasets, "BESIDE_REPO", tmp_path / "no-shared" / "datasets")
    root = datasets.datasets_dir()
    assert root == datasets.PACKAGED and datasets.available()
    assert len(datasets.load_harmbench(root)) == 400
    assert len(datasets.load_advbench(root)) == 520
    assert len(datasets.load_strongreject(root)) == 313
    assert len(datasets.load_xstest(root)) == 450
    for name in ("nq", "hotpotqa", "msmarco"):
        assert len(datasets.load_poisonedrag(root, name)) == 100
    assert len(injection.load_attacks(root)) == 200  # 15 + 15 text and 10 code categories, x 5
    assert {context.task for context in injection.load_contexts(root)} == {"email", "table", "code"}


def test_shared_datasets_beside_the_checkout_come_before_the_packaged_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(datasets.ENV_VAR, raising=False)
    monkeypatch.setattr(datasets, "BESIDE_REPO", tmp_path)
    assert datasets.datasets_dir() == tmp_path
    monkeypatch.setenv(datasets.ENV_VAR, str(tmp_path / "configured"))
    assert datasets.datasets_dir() == tmp_path / "configured"


@pytest.mark.skipif(
    not (ROOT.parent / "shared" / "datasets").is_dir(), reason="../shared/datasets is absent"
)
@pytest.mark.parametrize("name", PACKAGED_FILES)
def test_packaged_files_are_unchanged_copies_of_shared(name: str) -> None:
    shared = ROOT.parent / "shared" / "datasets" / name
    assert (datasets.PACKAGED / name).read_bytes() == shared.read_bytes()


def test_each_packaged_folder_keeps_its_licence_and_each_file_its_data_card_line() -> None:
    card = (ROOT / "docs" / "data-card.md").read_text(encoding="utf-8")
    folders = {Path(name).parent.as_posix() for name in PACKAGED_FILES}
    assert folders == {"bipia", "harmbench", "poisonedrag", "xstest"}
    assert {Path(name).parent.as_posix() for name in LICENCE_FILES} == folders
    missing = [name for name in DATA_FILES if f"| `{name}` |" not in card]
    assert not missing, f"no data card line in docs/data-card.md for {missing}"


# --- pyproject and the wheel --------------------------------------------------------------


def test_requires_python_has_no_upper_cap() -> None:
    specifiers = SpecifierSet(PYPROJECT["project"]["requires-python"])
    assert not [spec for spec in specifiers if spec.operator in {"<", "<=", "==", "~=", "==="}]
    assert all(version in specifiers for version in ("3.11", "3.12", "3.13", "3.14"))
    assert "3.10" not in specifiers


def test_licence_is_an_spdx_expression_with_its_files() -> None:
    project = PYPROJECT["project"]
    assert isinstance(project["license"], str) and project["license"].startswith("Apache-2.0")
    patterns = project["license-files"]
    assert all(any(ROOT.glob(pattern)) for pattern in patterns), patterns


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in ("runtime", "operator"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(src), "-w", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    assert "did not match any files" not in build.stderr, build.stderr
    (built,) = out.glob("sentinel_rag-*.whl")
    return built


@pytest.mark.timeout(400)
def test_wheel_holds_the_data_files_and_every_licence(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    prefix = "sentinel_runtime/evaluation/data/datasets/"
    assert {prefix + name for name in PACKAGED_FILES} <= names
    dist_info = next(name.split("/")[0] for name in names if name.endswith(".dist-info/METADATA"))
    licences = {name for name in names if name.startswith(f"{dist_info}/licenses/")}
    assert f"{dist_info}/licenses/LICENSE" in licences
    for name in LICENCE_FILES:
        assert f"{dist_info}/licenses/runtime/{prefix}{name}" in licences
    assert not [name for name in names if "garak" in name.lower()]


@pytest.mark.timeout(400)
def test_wheel_metadata_has_the_spdx_licence_and_no_python_cap(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        meta_name = next(
            name for name in archive.namelist() if name.endswith(".dist-info/METADATA")
        )
        metadata = email.parser.Parser().parsestr(archive.read(meta_name).decode("utf-8"))
    assert tuple(map(int, metadata["Metadata-Version"].split("."))) >= (2, 4)  # PEP 639
    assert metadata["License-Expression"] == PYPROJECT["project"]["license"]
    assert metadata["License"] is None  # the deprecated free-text field is gone
    assert metadata["Requires-Python"] == ">=3.11"
    assert "LICENSE" in metadata.get_all("License-File")


@pytest.mark.timeout(400)
def test_eval_runs_from_the_installed_wheel_without_shared(wheel: Path, tmp_path: Path) -> None:
    """`sentinel eval` from the wheel's files, with no ../shared and no env var: the packaged
    data is found and read (the poisoning suite, a few seconds)."""
    site = tmp_path / "lib" / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {k: v for k, v in os.environ.items() if k != datasets.ENV_VAR}
    env["PYTHONPATH"] = str(site)
    output = tmp_path / "eval.json"
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from sentinel_runtime import cli; "
            "from sentinel_runtime.evaluation import datasets; "
            "print(datasets.__file__, datasets.datasets_dir(), file=sys.stderr); "
            "sys.exit(cli.main(sys.argv[1:]))",
            *("eval", "--only", "poisoning", "--output", str(output)),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    module, root = run.stderr.splitlines()[0].split()
    assert Path(module).is_relative_to(site)
    assert Path(root) == site / "sentinel_runtime" / "evaluation" / "data" / "datasets"
    assert "poisoning" in run.stdout and output.is_file()
