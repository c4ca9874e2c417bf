"""`sentinel serve` raises its open-file limit to what admission can hold open."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

from sentinel_runtime import open_files
from support.runtime import start_runtime, stop_process

# `sentinel serve` started under the given soft and hard limits, as a host would start it.
LIMITED = (
    "import resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard})); "
    "from sentinel_runtime.cli import main; sys.exit(main(sys.argv[1:]))"
)


def _limits(pid: int) -> tuple[int, int]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError("no open-files line")


def test_what_admission_holds_open_at_the_defaults() -> None:
    assert open_files.needed(1024, 2048) == 2 * 1024 + 2048 + open_files.RESERVED


def test_the_soft_limit_is_raised_up_to_the_hard_one(tmp_path: Path) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    wanted = open_files.needed(1024, 2048)
    # A child may not raise its hard limit above this process's (without privilege).
    hard_for_child = wanted + 1000 if hard == resource.RLIM_INFINITY else min(hard, wanted + 1000)
    code = LIMITED.format(soft=256, hard=hard_for_child)
    runtime = start_runtime(tmp_path, {}, command=(sys.executable, "-c", code))
    try:
        soft, child_hard = _limits(runtime.process.pid)
    finally:
        stop_process(runtime.process)
    assert child_hard == hard_for_child
    assert soft == min(wanted, hard_for_child)


def test_a_hard_limit_below_the_need_is_said_at_start(tmp_path: Path) -> None:
    code = LIMITED.format(soft=256, hard=1024)
    runtime = start_runtime(tmp_path, {"LOG_LEVEL": "INFO"}, command=(sys.executable, "-c", code))
    try:
        soft, hard = _limits(runtime.process.pid)
    finally:
        stop_process(runtime.process)
    assert (soft, hard) == (1024, 1024)
    log = runtime.log_path.read_text()
    assert "runtime_open_files_low" in log and '"needed": 4352' in log


def test_a_lower_need_leaves_a_higher_soft_limit_alone() -> None:
    code = (
        "import resource; from sentinel_runtime import open_files; "
        "resource.setrlimit(resource.RLIMIT_NOFILE, (2048, 4096)); "
        "print(open_files.raise_to(100).soft, resource.getrlimit(resource.RLIMIT_NOFILE)[0])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2048", "2048"]
