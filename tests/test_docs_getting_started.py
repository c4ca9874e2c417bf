"""docs/getting-started.md's snippets run as written against a real ``sentinel serve``; the
README's example and its two commands are that page's, word for word."""

from __future__ import annotations

import contextlib
import io

from support.docs_site import README, code_blocks, page
from support.runtime import RuntimeProcess

PAGE = "getting-started.md"
GETTING_STARTED = page(PAGE)
SNIPPETS = [body for _, body in code_blocks(GETTING_STARTED, "python")]


def _run(snippet: str, runtime: RuntimeProcess) -> str:
    code = snippet.replace("http://127.0.0.1:8000", runtime.base_url)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, PAGE, "exec"), {})
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


def test_the_readme_shows_the_tested_commands_and_example() -> None:
    readme = README.read_text(encoding="utf-8")
    assert [body for _, body in code_blocks(readme, "python")] == SNIPPETS[:1]
    commands = code_blocks(GETTING_STARTED, "sh")[0]
    assert "make serve" in commands[1] and "make test" in commands[1]
    assert code_blocks(readme, "sh") == [commands]
