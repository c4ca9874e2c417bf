"""docs/governed-tool-calls.md, "Governed tool calls over HTTP" and "Tool calls in chat
completions", runs as written: the sample's tool server and ``sentinel serve --policy`` started
by the page's commands (on free ports), then its Python snippets (the airline conversation over
HTTP, then a chat completion whose proposed refund is removed) print what the page shows. The
upstream model is the fake one, proposing the refund the page describes."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import httpx

from support.airline import ROOT, SAMPLE
from support.docs_site import page
from support.fake_llm import FakeLLM, tool_call, tool_calls_message
from support.runtime import free_port, start_runtime, stop_process

PAGE = "governed-tool-calls.md"
_TEXT = page(PAGE)
SECTION = _TEXT[_TEXT.index("\n## Governed tool calls over HTTP") :]


def _shown(after: str) -> list[str]:
    found = re.search(r"prints\n\n```\n(.*?)```", SECTION[SECTION.index(after) :], re.DOTALL)
    assert found is not None
    return found.group(1).splitlines()


def _start_tool_server(command: str, port: int) -> subprocess.Popen[bytes]:
    argv = shlex.split(command.replace("8765", str(port)).rstrip("& "))
    assert argv[:2] == ["python", "samples/airline/tool_server.py"]
    process = subprocess.Popen([sys.executable, *argv[1:]], cwd=ROOT)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        time.sleep(0.05)
    stop_process(process)
    raise AssertionError("the tool server did not start")


def test_the_http_snippets_run_against_the_commands_of_the_page(tmp_path: Path) -> None:
    [commands] = re.findall(r"```sh\n(python samples/airline.*?)```", SECTION, re.DOTALL)
    server_line, serve_line = commands.strip().splitlines()
    # The runtime's line: environment, then `sentinel serve --policy FILE`.
    serve = shlex.split(serve_line)
    assert serve[0].startswith("LLM_INFERENCE_URL=") and serve[1:3] == ["sentinel", "serve"]
    assert serve[3:] == ["--policy", "samples/airline/guardrails.yaml"]

    port = free_port()
    tools = _start_tool_server(server_line, port)
    fake = FakeLLM().start()
    policy = tmp_path / "guardrails.yaml"
    text = (SAMPLE / "guardrails.yaml").read_text(encoding="utf-8")
    policy.write_text(text.replace("http://127.0.0.1:8765", f"http://127.0.0.1:{port}"))
    runtime = start_runtime(
        tmp_path, {"LLM_INFERENCE_URL": fake.base_url}, ("--policy", str(policy), "--no-demo")
    )
    try:
        snippets = re.findall(r"```python\n(.*?)```", SECTION, re.DOTALL)
        assert len(snippets) == 2
        namespace: dict[str, object] = {"__name__": "docs"}

        def run(code: str) -> list[str]:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = code.replace("http://127.0.0.1:8000", runtime.base_url)
                exec(compile(code, PAGE, "exec"), namespace)
            return out.getvalue().splitlines()

        assert run(snippets[0]) == _shown("The airline conversation over HTTP")

        fake.message = tool_calls_message(
            tool_call("call_1", "refund_booking", {"booking_id": "bk_789"})
        )
        assert run(snippets[1]) == _shown("a model that proposes refunding BK-789")
        sent = fake.requests[-1]["json"]
        assert [t["function"]["name"] for t in sent["tools"]][-1] == "refund_booking"
        assert sent["messages"][0]["role"] == "system"  # the session's summary went upstream
    finally:
        runtime.stop()
        fake.stop()
        stop_process(tools)
