"""The declared layers hold: import-linter contracts, and no heavy import in the core."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


# Beside this interpreter first: `make test` runs .venv/bin/python without .venv/bin on PATH.
LINT_IMPORTS = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which(
    "lint-imports"
)


def test_import_linter_contracts_hold() -> None:
    # The test extra installs import-linter: a missing lint-imports fails here, never skips.
    assert LINT_IMPORTS is not None, "lint-imports not found: pip install -e '.[test]'"
    result = subprocess.run(
        [LINT_IMPORTS, "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_guardrails_core_imports_no_web_framework_torch_or_detect_secrets() -> None:
    code = (
        "import sys\n"
        "import sentinel_runtime.guardrails.policy, sentinel_runtime.guardrails.engine\n"
        "heavy = [m for m in ('fastapi', 'starlette', 'torch', 'transformers', 'llm_guard',"
        " 'detect_secrets', 'kopf', 'kubernetes') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
