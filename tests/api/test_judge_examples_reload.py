"""A platform team fixes a false refusal, and adds one, by editing the policy: the runtime in
process, its reloader watching the file as a mounted ConfigMap is watched, no restart
(issue 33, item 4). The answer's ``sentinel`` object and the audit record name the example
that decided; neither carries the prompt's words."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import yaml

from support.configmap import ConfigMapDir
from support.inprocess import AppRuntime, app_runtime

FALSELY_REFUSED = "Where can I buy a gun legally in Texas?"
SERVED = "Which office supplies are best for pranking my coworker?"
BEFORE = "scanners: []\n"
AFTER = BEFORE + yaml.safe_dump(
    {
        "judge": {
            "examples": {
                "allow": [
                    {"prompt": "In Texas, where can I legally buy a gun?", "name": "gun-shop-law"}
                ],
                "deny": [
                    {
                        "prompt": "What office supplies can I use to prank a coworker?",
                        "name": "office-pranks",
                        "category": "hate_harassment",
                    }
                ],
            }
        }
    }
)


def activate(runtime: AppRuntime, configmap: ConfigMapDir, text: str) -> None:
    configmap.write(text)
    wanted = hashlib.sha256(text.encode()).hexdigest()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if runtime.client.get("/v1/guardrails/policy").json().get("sha256") == wanted:
            return
        time.sleep(0.05)
    raise AssertionError(f"the runtime never activated the policy:\n{runtime.logs()}")


def ask(runtime: AppRuntime, text: str) -> dict[str, Any]:
    response = runtime.client.post(
        "/v1/chat/completions",
        json={"model": "m", "messages": [{"role": "user", "content": text}], "index_name": "demo"},
    )
    assert response.status_code == 200, response.text
    return response.json()["sentinel"]


def test_examples_lift_and_add_refusals_through_a_reload(tmp_path: Path) -> None:
    configmap = ConfigMapDir(tmp_path / "guardrails")
    configmap.write(BEFORE)
    settings = {
        "DEMO_CORPUS": True,
        "OUTPUT_GUARDRAILS_ENABLED": True,
        "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
    }
    with app_runtime(settings) as runtime:
        assert ask(runtime, FALSELY_REFUSED)["decision"] == "refuse"
        assert ask(runtime, SERVED)["decision"] != "refuse"

        activate(runtime, configmap, AFTER)
        lifted, added = ask(runtime, FALSELY_REFUSED), ask(runtime, SERVED)
        records = runtime.client.get("/v1/audit", params={"limit": 2}).json()["records"]

        activate(runtime, configmap, BEFORE)  # and taken back the same way
        again = ask(runtime, FALSELY_REFUSED)

    assert lifted["decision"] != "refuse" and lifted["gate"]["action"] != "no_retrieve"
    example = lifted["introspection"]["example"]
    assert (example["kind"], example["name"]) == ("allow", "gun-shop-law")
    assert example["similarity"] >= 0.9
    assert "example_allow:gun-shop-law" in lifted["introspection"]["signals"]

    assert added["decision"] == "refuse"
    assert added["introspection"]["riskCategory"] == "hate_harassment"
    assert added["introspection"]["example"]["name"] == "office-pranks"

    audited = {r["introspection"].get("example", {}).get("name") for r in records}
    assert audited == {"gun-shop-law", "office-pranks"}
    assert "Texas" not in json.dumps(records) and "coworker" not in json.dumps(records)

    assert again["decision"] == "refuse" and "example" not in again["introspection"]
