"""docs/governed-tool-calls.md: its snippet runs against the sample's tool server and prints
what the page shows; its YAML is the sample's rulebase, abridged."""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any

import yaml

from support.airline import SAMPLE
from support.docs_site import page

PAGE = "governed-tool-calls.md"
_TEXT = page(PAGE)
# Up to the HTTP part, which tests/api/test_docs_governance_http.py runs against a real runtime.
SECTION = _TEXT[: _TEXT.index("\n## Governed tool calls over HTTP")]


def test_the_pages_conversation_runs_and_prints_what_it_shows(airline_server: Any) -> None:
    code = re.findall(r"```python\n(.*?)```", SECTION, re.DOTALL)[0]  # the facade's conversation
    host, port = airline_server.server_address[:2]
    path = SAMPLE / "guardrails.yaml"
    code = code.replace(
        'Path("samples/airline/guardrails.yaml").read_text()',
        f"Path({str(path)!r}).read_text().replace('http://127.0.0.1:8765', 'http://{host}:{port}')",
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, PAGE, "exec"), {"__name__": "docs"})
    shown = re.search(r"prints\n\n```\n(.*?)```", SECTION, re.DOTALL)
    assert shown is not None
    expected = shown.group(1).splitlines()
    assert out.getvalue().splitlines()[: len(expected)] == expected
    assert "booking_of_interest = bk_456" in out.getvalue()


def test_the_pages_yaml_is_the_samples_rulebase_abridged() -> None:
    [block] = re.findall(r"```yaml\n(.*?)```", SECTION, re.DOTALL)
    shown = yaml.safe_load(block)["tools"]
    sample = yaml.safe_load(path_text())["tools"]
    assert shown["rules"] == sample["rules"]
    assert shown["guards"] == sample["guards"]
    assert shown["askable"] == sample["askable"]
    assert shown["contexts"] == sample["contexts"]
    for key in ("strict", "baseUrl", "defaultTtl", "ttl"):
        assert shown[key] == sample[key]
    assert all(binding in sample["bindings"] for binding in shown["bindings"])
    for name, function in shown["functions"].items():
        assert function == sample["functions"][name] | {"parameters": function["parameters"]}


def path_text() -> str:
    return (SAMPLE / "guardrails.yaml").read_text(encoding="utf-8")
