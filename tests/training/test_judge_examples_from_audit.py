"""``sentinel judge examples --from-audit``: a false refusal found in the audit log becomes
an allow example, and the edited policy lifts it (the runtime in process, its audit log on
disk as in a pod, the command run as a user runs it)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from pathlib import Path

import yaml

from sentinel_runtime.training import review
from support.configmap import ConfigMapDir
from support.inprocess import AppRuntime, app_runtime

FALSELY_REFUSED = "Where can I buy a gun legally in Texas?"
SERVED = "Which office supplies are best for pranking my coworker?"


def sentinel_judge(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from sentinel_runtime import cli; sys.exit(cli.main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, "judge", "examples", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def ask(runtime: AppRuntime, text: str) -> dict:
    response = runtime.client.post(
        "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": text}]}
    )
    assert response.status_code == 200, response.text
    return response.json()["sentinel"]


def activate(runtime: AppRuntime, configmap: ConfigMapDir, text: str) -> None:
    configmap.write(text)
    wanted = hashlib.sha256(text.encode()).hexdigest()
    deadline = time.monotonic() + 15
    while runtime.client.get("/v1/guardrails/policy").json().get("sha256") != wanted:
        assert time.monotonic() < deadline, runtime.logs()
        time.sleep(0.05)


def test_a_reviewed_false_refusal_becomes_an_allow_example_that_lifts_it(tmp_path: Path) -> None:
    configmap = ConfigMapDir(tmp_path / "guardrails")
    policy = "scanners: []\naudit:\n  includePrompt: true\n"
    configmap.write(policy)
    persist = tmp_path / "persist"
    settings = {
        "OUTPUT_GUARDRAILS_ENABLED": True,
        "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
        "VECTOR_DB_PERSIST_DIR": str(persist),
    }
    with app_runtime(settings) as runtime:
        refused, served = ask(runtime, FALSELY_REFUSED), ask(runtime, SERVED)
        assert refused["decision"] == "refuse" and served["decision"] != "refuse"
        reviews = tmp_path / "reviews.yaml"
        reviews.write_text(
            yaml.safe_dump(
                {
                    "reviews": [
                        {"requestId": refused["requestId"], "verdict": "allow", "name": "guns"},
                        {"requestId": served["requestId"], "verdict": "deny"},
                    ]
                }
            )
        )
        audit = persist / "audit" / "audit.jsonl"
        done = sentinel_judge("--from-audit", str(audit), "--reviews", str(reviews))
        assert done.returncode == 0, done.stderr
        assert "added 1 allow and 1 deny examples" in done.stderr
        section = yaml.safe_load(done.stdout)
        allowed = section["judge"]["examples"]["allow"]
        assert allowed == [{"prompt": FALSELY_REFUSED, "name": "guns"}]
        (denied,) = section["judge"]["examples"]["deny"]
        assert denied["prompt"] == SERVED and denied["name"].startswith("audit-")

        activate(runtime, configmap, policy + done.stdout)
        lifted, added = ask(runtime, FALSELY_REFUSED), ask(runtime, SERVED)
    assert lifted["decision"] != "refuse"
    assert lifted["introspection"]["example"]["name"] == "guns"
    assert added["decision"] == "refuse"

    # Run again over the edited policy: nothing new, nothing lost.
    path = tmp_path / "guardrails.yaml"
    path.write_text(policy + done.stdout)
    again = sentinel_judge(
        "--from-audit", str(audit), "--reviews", str(reviews), "--policy", str(path)
    )
    assert again.returncode == 0, again.stderr
    assert "added 0 allow and 0 deny examples (2 already listed)" in again.stderr
    assert yaml.safe_load(again.stdout) == section


def test_reviews_that_cannot_be_used_are_named_and_nothing_is_written(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    audit.write_text(
        '{"requestId": "req-1", "introspection": {"riskCategory": "none"}}\n'
        '{"requestId": "req-2", "prompt": "hello", "introspection": {}}\n{torn'
    )
    reviews = tmp_path / "reviews.yaml"
    reviews.write_text(
        "reviews:\n"
        "  - {requestId: req-1, verdict: allow}\n"
        "  - {requestId: req-9, verdict: deny}\n"
        "  - {requestId: req-2, verdict: deny, category: nosuch}\n"
    )
    done = sentinel_judge("--from-audit", str(audit), "--reviews", str(reviews))
    assert done.returncode == 1 and done.stdout == ""
    assert "req-1: the record holds no prompt" in done.stderr
    assert "req-9: no audit record with this id" in done.stderr
    assert "nothing written" in done.stderr

    reviews.write_text("reviews:\n  - {requestId: req-2, verdict: maybe}\n")
    done = sentinel_judge("--from-audit", str(audit), "--reviews", str(reviews))
    assert done.returncode == 1 and "reviews.0.verdict" in done.stderr


def test_a_deny_review_takes_the_records_category_and_a_bad_one_is_refused() -> None:
    records = {"r": {"requestId": "r", "prompt": "p", "introspection": {"riskCategory": "cyber"}}}
    deny = review.Review(request_id="r", verdict="deny")
    built = review.build([deny], records)
    assert built.examples.deny[0].category == "cyber"
    bad = review.Review(request_id="r", verdict="deny", category="nosuch")
    try:
        review.build([bad], records)
    except review.ReviewError as exc:
        assert "risk categories" in str(exc)
    else:
        raise AssertionError("an unknown category was accepted")
