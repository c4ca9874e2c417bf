"""Scoped keys (``RUNTIME_KEYS_FILE``) against the runtime's app in process, in front of a fake
OpenAI upstream: a key scoped to ``a*`` reads ``alpha`` and cannot tell ``beta`` from an index
that does not exist; it writes nothing outside its scope; the audit log and the policy need
their scopes; rpm and tpm limits answer 429 with ``Retry-After``; an edit of the mounted
Secret takes effect without a restart; no key text reaches the logs, the audit trail or the
metrics."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml

from sentinel_runtime.access.keys import KeysFileError
from sentinel_runtime.api.app import create_app
from sentinel_runtime.settings import Settings
from support.configmap import ConfigMapDir
from support.fake_llm import FakeLLM
from support.inprocess import DEFAULTS, AppRuntime, app_runtime

ADMIN = "admin-key-0123456789abcdef"  # RUNTIME_API_KEY: every scope
TEAM_A = "team-a-key-0123456789abcdef"
AUDITOR = "auditor-key-0123456789abcdef"
LIMITED = "limited-key-0123456789abcdef"
FRUGAL = "frugal-key-0123456789abcdef"
LATER = "later-key-0123456789abcdef"
STREAMER = "streamer-key-0123456789abcdef"
ALL_KEYS = (ADMIN, TEAM_A, AUDITOR, LIMITED, FRUGAL, LATER, STREAMER)

KEYS: list[dict[str, Any]] = [
    {"name": "team-a", "key": TEAM_A, "read": ["a*"], "write": ["a*"]},
    {"name": "auditor", "key": AUDITOR, "audit": True, "policy": True},
    {"name": "limited", "key": LIMITED, "read": ["*"], "rpm": 2},
    {"name": "frugal", "key": FRUGAL, "read": ["*"], "tpm": 1},
    {"name": "streamer", "key": STREAMER, "read": ["*"], "tpm": 100000},
]
ALPHA = [{"doc_id": "alpha-refunds", "text": "Refunds are issued within thirty days."}]
BETA = [{"doc_id": "beta-secret", "text": "The beta launch date is the ninth of May."}]


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def keys_yaml(entries: list[dict[str, Any]]) -> str:
    return yaml.safe_dump({"keys": entries})


@pytest.fixture(scope="module")
def scoped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppRuntime, ConfigMapDir]]:
    root = tmp_path_factory.mktemp("scoped")
    secret = ConfigMapDir(root / "keys", filename="keys.yaml")
    secret.write(keys_yaml(KEYS))
    fake_llm = FakeLLM().start()
    try:
        with app_runtime(
            {
                "DEMO_CORPUS": False,
                "LLM_INFERENCE_URL": fake_llm.base_url,
                "RUNTIME_API_KEY": ADMIN,
                "RUNTIME_KEYS_FILE": str(secret.policy_path),
                "VECTOR_DB_PERSIST_DIR": str(root / "data"),
            }
        ) as runtime:
            admin = bearer(ADMIN)
            for name, docs in (("alpha", ALPHA), ("beta", BETA)):
                body = {"index_name": name, "documents": docs}
                assert runtime.client.post("/index", json=body, headers=admin).status_code == 200
            yield runtime, secret
    finally:
        fake_llm.stop()


@pytest.fixture
def runtime(scoped: tuple[AppRuntime, ConfigMapDir]) -> AppRuntime:
    return scoped[0]


# Every route that reads an index, as (method, path, request) for an index name.
def chat(name: str) -> tuple[str, str, dict[str, Any]]:
    body = {"model": "m", "messages": [{"role": "user", "content": "When are refunds issued?"}]}
    return "POST", "/v1/chat/completions", {"json": {**body, "index_name": name}}


READ_ROUTES: list[Any] = [
    pytest.param(chat, id="chat"),
    pytest.param(
        lambda n: (
            "POST",
            "/v1/chat/completions",
            {"json": {**chat(n)[2]["json"], "stream": True}},
        ),
        id="chat-stream",
    ),
    pytest.param(
        lambda n: (
            "POST",
            "/v1/completions",
            {"json": {"model": "m", "prompt": "refunds?", "index_name": n}},
        ),
        id="completions",
    ),
    pytest.param(
        lambda n: ("POST", "/retrieve", {"json": {"index_name": n, "query": "refunds"}}),
        id="retrieve",
    ),
    pytest.param(
        lambda n: (
            "POST",
            "/answer",
            {"json": {"index_name": n, "query": "When are refunds issued?"}},
        ),
        id="answer",
    ),
    pytest.param(
        lambda n: ("GET", "/debug/retrieval", {"params": {"index_name": n, "q": "refunds"}}),
        id="debug-retrieval",
    ),
    pytest.param(lambda n: ("GET", f"/indexes/{n}/documents", {}), id="list-documents"),
]
WRITE_ROUTES: list[Any] = [
    pytest.param(
        lambda n: ("POST", "/index", {"json": {"index_name": n, "documents": [{"text": "x"}]}}),
        id="index",
    ),
    pytest.param(
        lambda n: (
            "POST",
            f"/indexes/{n}/documents",
            {"json": {"documents": [{"doc_id": "beta-secret", "text": "changed"}]}},
        ),
        id="update",
    ),
    pytest.param(
        lambda n: (
            "POST",
            f"/indexes/{n}/documents/delete",
            {"json": {"doc_ids": ["beta-secret"]}},
        ),
        id="delete-documents",
    ),
    pytest.param(lambda n: ("DELETE", f"/indexes/{n}", {}), id="delete-index"),
    pytest.param(lambda n: ("POST", f"/persist/{n}", {}), id="persist"),
    pytest.param(lambda n: ("POST", f"/load/{n}", {"params": {"overwrite": "true"}}), id="load"),
]


def call(runtime: AppRuntime, route: tuple[str, str, dict[str, Any]], key: str) -> httpx.Response:
    method, path, kwargs = route
    return runtime.client.request(method, path, headers=bearer(key), **kwargs)


def named_away(response: httpx.Response, name: str) -> str:
    """The body with the index's name replaced, to compare answers about two names."""
    return response.text.replace(name, "<index>")


@pytest.mark.parametrize("route", READ_ROUTES)
def test_a_key_reads_its_index_and_cannot_tell_others_from_missing_ones(
    runtime: AppRuntime, route: Callable[[str], tuple[str, str, dict[str, Any]]]
) -> None:
    own = call(runtime, route("alpha"), TEAM_A)
    assert own.status_code == 200, own.text
    assert "beta-secret" not in own.text

    hidden = call(runtime, route("beta"), TEAM_A)
    missing_outside = call(runtime, route("bzzz"), TEAM_A)  # outside the scope, absent
    missing_inside = call(runtime, route("azzz"), TEAM_A)  # inside the scope, absent
    missing_for_admin = call(runtime, route("bzzz"), ADMIN)  # what a missing index gets
    for response in (hidden, missing_outside, missing_inside, missing_for_admin):
        assert response.status_code == 404, response.text
    assert named_away(hidden, "beta") == named_away(missing_outside, "bzzz")
    assert named_away(hidden, "beta") == named_away(missing_inside, "azzz")
    assert named_away(hidden, "beta") == named_away(missing_for_admin, "bzzz")
    assert dict(hidden.headers).keys() == dict(missing_for_admin.headers).keys()
    assert "launch" not in hidden.text


def test_chat_answers_from_alpha_with_the_official_client(runtime: AppRuntime) -> None:
    client = runtime.openai(TEAM_A)
    reply = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "When are refunds issued?"}],
        extra_body={"index_name": "alpha"},
    )
    nodes = json.dumps(reply.model_extra["source_nodes"])
    assert "alpha-refunds" in nodes and "beta" not in nodes
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "When is the beta launch?"}],
            extra_body={"index_name": "beta"},
        )


@pytest.mark.parametrize("route", WRITE_ROUTES)
def test_a_write_outside_the_scope_is_403_and_changes_nothing(
    runtime: AppRuntime, route: Callable[[str], tuple[str, str, dict[str, Any]]]
) -> None:
    before = runtime.client.get("/indexes/beta/documents", headers=bearer(ADMIN)).json()
    refused = call(runtime, route("beta"), TEAM_A)
    assert refused.status_code == 403, refused.text
    error = refused.json()["error"]
    assert error["type"] == "permission_error"
    assert "team-a" in error["message"] and "beta" in error["message"]
    after = runtime.client.get("/indexes/beta/documents", headers=bearer(ADMIN)).json()
    assert after == before


def test_a_write_inside_the_scope_goes_through(runtime: AppRuntime) -> None:
    body = {"index_name": "alpha-notes", "documents": [{"text": "Notes of team a."}]}
    assert runtime.client.post("/index", json=body, headers=bearer(TEAM_A)).status_code == 200
    assert runtime.client.delete("/indexes/alpha-notes", headers=bearer(TEAM_A)).status_code == 200


def test_listing_shows_only_what_the_key_may_read(runtime: AppRuntime) -> None:
    assert runtime.client.get("/indexes", headers=bearer(TEAM_A)).json() == ["alpha"]
    assert runtime.client.get("/indexes", headers=bearer(AUDITOR)).json() == []
    assert set(runtime.client.get("/indexes", headers=bearer(ADMIN)).json()) == {"alpha", "beta"}
    ready = runtime.client.get("/ready").json()  # open to the kubelet: counts, no names
    assert ready["indexes"]["loaded"] == 2
    assert "beta" not in json.dumps(ready)


def test_without_an_index_name_answer_picks_the_one_index_the_key_reads(
    runtime: AppRuntime,
) -> None:
    response = runtime.client.post(
        "/answer", json={"query": "When are refunds issued?"}, headers=bearer(TEAM_A)
    )
    assert response.status_code == 200, response.text
    assert response.json()["index_name"] == "alpha"
    refused = runtime.client.post("/answer", json={"query": "refunds"}, headers=bearer(ADMIN))
    assert refused.status_code == 422  # two indexes: the admin must name one


@pytest.mark.parametrize("path", ["/v1/audit", "/v1/guardrails/policy", "/v1/governance/rulebase"])
def test_audit_and_policy_need_their_scopes(runtime: AppRuntime, path: str) -> None:
    refused = runtime.client.get(path, headers=bearer(TEAM_A))
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["type"] == "permission_error"
    assert runtime.client.get(path, headers=bearer(AUDITOR)).status_code == 200
    assert runtime.client.get(path, headers=bearer(ADMIN)).status_code == 200
    assert runtime.client.get(path).status_code == 401
    assert runtime.client.get(path, headers=bearer("not-a-key-0123456789")).status_code == 401


def test_a_key_over_its_rpm_gets_429_with_retry_after(runtime: AppRuntime) -> None:
    before = runtime.metric("rag_key_rate_limited_total", key="limited", limit="rpm")
    statuses = [
        runtime.client.get("/indexes", headers=bearer(LIMITED)).status_code for _ in range(2)
    ]
    assert statuses == [200, 200]
    refused = runtime.client.get("/indexes", headers=bearer(LIMITED))
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 30  # one request refills in 30 s
    error = refused.json()["error"]
    assert error["type"] == "rate_limit_exceeded"
    assert error["code"] == "rate_limit_exceeded"
    assert "requests per minute" in error["message"]
    # Other keys are not held back; the official client sees a RateLimitError.
    assert runtime.client.get("/indexes", headers=bearer(TEAM_A)).status_code == 200
    with pytest.raises(openai.RateLimitError):
        runtime.openai(LIMITED).models.list()
    after = runtime.metric("rag_key_rate_limited_total", key="limited", limit="rpm")
    assert after - before == 2


def test_a_key_over_its_tpm_gets_429_once_its_answers_used_the_tokens(
    runtime: AppRuntime,
) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "Say hello."}]}
    before = runtime.metric("rag_key_tokens_total", key="frugal")
    first = runtime.client.post("/v1/chat/completions", json=body, headers=bearer(FRUGAL))
    assert first.status_code == 200, first.text
    used = first.json()["usage"]["total_tokens"]
    assert used >= 2
    assert runtime.metric("rag_key_tokens_total", key="frugal") - before == used
    refused = runtime.client.post("/v1/chat/completions", json=body, headers=bearer(FRUGAL))
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limit_exceeded"
    assert "tokens per minute" in refused.json()["error"]["message"]
    # 1 token a minute, in debt by used - 1: back above zero after `used` minutes.
    assert int(refused.headers["retry-after"]) == used * 60


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param({}, id="plain"),
        pytest.param({"stream_options": {"include_usage": True}}, id="usage-asked"),
        pytest.param({"index_name": "alpha"}, id="rag"),
    ],
)
def test_a_streamed_answer_is_charged_when_it_ends(
    runtime: AppRuntime, extra: dict[str, Any]
) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "Say hello."}], "stream": True}
    before = runtime.metric("rag_key_tokens_total", key="streamer")
    with runtime.client.stream(
        "POST", "/v1/chat/completions", json={**body, **extra}, headers=bearer(STREAMER)
    ) as response:
        assert response.status_code == 200
        events = [line for line in response.iter_lines() if line.startswith("data: {")]
    charged = runtime.metric("rag_key_tokens_total", key="streamer") - before
    assert charged > 0
    if "stream_options" in extra:  # what the client was told is what the key was charged
        assert charged == json.loads(events[-1].removeprefix("data: "))["usage"]["total_tokens"]


def test_audit_records_and_metrics_carry_the_key_name(runtime: AppRuntime) -> None:
    chatted = call(runtime, chat("alpha"), TEAM_A)
    request_id = chatted.json()["sentinel"]["requestId"]
    records = runtime.client.get(
        "/v1/audit", params={"request_id": request_id}, headers=bearer(AUDITOR)
    ).json()["records"]
    assert [r["key"] for r in records] == ["team-a"]
    assert runtime.counted("rag_http_requests_total", key="team-a", status="200") >= 1
    labels = {"route": "other", "method": "GET", "status": "401", "key": "unauthenticated"}
    before = runtime.metric("rag_http_requests_total", **labels)
    assert runtime.client.get("/v1/audit", headers=bearer(TEAM_A + "x")).status_code == 401
    assert runtime.metric("rag_http_requests_total", **labels) == before + 1


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"not within {timeout} s")


def test_a_secret_edit_takes_effect_without_a_restart(
    scoped: tuple[AppRuntime, ConfigMapDir],
) -> None:
    runtime, secret = scoped
    status = lambda key: runtime.client.get("/indexes", headers=bearer(key)).status_code  # noqa: E731
    assert status(LATER) == 401
    # A broken edit (the key sits on the broken line) keeps the keys in force.
    secret.write(f'keys:\n  - name: later\n    key: "{LATER}\n    read: [beta\n')
    wait_for(lambda: runtime.metric("rag_keys_rejected") == 1)
    assert status(TEAM_A) == 200 and status(LATER) == 401
    failed = [line for line in runtime.logs().splitlines() if "runtime_keys_reload_failed" in line]
    assert failed and "line" in json.loads(failed[-1])["error"]
    # A good edit: team-a is revoked, later is added, with no restart.
    secret.write(keys_yaml([*KEYS[1:], {"name": "later", "key": LATER, "read": ["beta"]}]))
    wait_for(lambda: status(TEAM_A) == 401)
    assert status(LATER) == 200
    assert runtime.client.get("/indexes", headers=bearer(LATER)).json() == ["beta"]
    assert runtime.metric("rag_keys_rejected") == 0
    assert runtime.metric("rag_keys_active") == len(KEYS)
    secret.write(keys_yaml(KEYS))  # as the other tests expect
    wait_for(lambda: status(TEAM_A) == 200)


def test_no_key_text_in_logs_audit_or_metrics(runtime: AppRuntime) -> None:
    # Some traffic of every kind first: answers, refusals, 401s, 429s (other tests ran too).
    call(runtime, chat("alpha"), TEAM_A)
    call(runtime, chat("beta"), TEAM_A)
    runtime.client.get("/indexes", headers=bearer("wrong-key-0123456789abcdef"))
    audit = runtime.client.get("/v1/audit", params={"limit": 1000}, headers=bearer(ADMIN)).text
    outputs = {"logs": runtime.logs(), "audit": audit, "metrics": runtime.metrics()}
    assert "team-a" in outputs["audit"] and 'key="team-a"' in outputs["metrics"]
    for where, text in outputs.items():
        for key in ALL_KEYS:
            assert key not in text, f"a key's text is in the {where}"


def test_a_bad_keys_file_stops_the_start(tmp_path: Path) -> None:
    path = tmp_path / "keys.yaml"
    path.write_text(keys_yaml([{"name": "anonymous", "key": "tiny-key-text"}]))
    settings = Settings(**{**DEFAULTS, "RUNTIME_KEYS_FILE": str(path)})
    with pytest.raises(KeysFileError) as raised:
        create_app(settings)
    message = str(raised.value)
    assert str(path) in message and "keys[0]" in message and "reserved" in message
    assert "16 to 4096 characters" in message and "tiny-key-text" not in message
    with pytest.raises(KeysFileError, match="cannot be read"):
        create_app(Settings(**{**DEFAULTS, "RUNTIME_KEYS_FILE": str(tmp_path / "none.yaml")}))
