"""The README's quick-start snippets run as written against a real ``sentinel serve``."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from support.runtime import RuntimeProcess

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
_START = README.index("## Quick start")
QUICK_START = README[_START : README.index("\n## ", _START)]
SNIPPETS = re.findall(r"```python\n(.*?)```", QUICK_START, re.DOTALL)


def _run(snippet: str, runtime: RuntimeProcess) -> str:
    code = snippet.replace("http://127.0.0.1:8000", runtime.base_url)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    return out.getvalue()


def test_quick_start_snippets_run_and_show_what_they_claim(runtime_factory) -> None:
    assert len(SNIPPETS) == 2
    runtime = runtime_factory()
    demo = _run(SNIPPETS[0], runtime)
    lines = demo.splitlines()
    assert lines[0].startswith("answer retrieve")
    assert "[refund-policy-2026#p0]" in demo
    assert any(line.startswith("refuse no_retrieve") for line in lines)
    assert any(line.startswith("summary restrict") for line in lines)
    assert "forum-vpn-tip#p0" in demo and "injected_instructions" in demo

    echo = _run(SNIPPETS[1], runtime)
    assert echo.splitlines()[0] == "key [REDACTED], mail <EMAIL>"
