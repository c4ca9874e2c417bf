"""Requests and latency by endpoint, read from a real runtime's /metrics: labelled by route
template, never by the raw path, so the number of series stays bounded."""

from __future__ import annotations

import re

import httpx

from support.runtime import RuntimeProcess, sample


def _series(text: str, name: str) -> list[dict[str, str]]:
    found = []
    for line in text.splitlines():
        match = re.match(rf"^{name}\{{(.*)\}} \S+$", line)
        if match:
            found.append(dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(1))))
    return found


def test_requests_are_counted_and_timed_by_route_template(runtime_factory) -> None:
    runtime: RuntimeProcess = runtime_factory(args=("--no-guardrails",))
    base = runtime.base_url
    assert (
        httpx.post(
            f"{base}/index", json={"index_name": "shop-7", "documents": [{"text": "a"}]}
        ).status_code
        == 200
    )
    for _ in range(3):
        httpx.get(f"{base}/indexes/shop-7/documents", timeout=5)
    assert httpx.delete(f"{base}/indexes/no-such-index-41", timeout=5).status_code == 404
    assert httpx.get(f"{base}/no/such/path/9731", timeout=5).status_code == 404
    assert httpx.put(f"{base}/health", timeout=5).status_code == 405
    # A method outside the standard ones reaches the app as "other"; one the HTTP parser
    # (httptools) does not know at all is its 400, before the app, and counts nowhere.
    assert httpx.request("PROPFIND", f"{base}/health", timeout=5).status_code == 405
    assert httpx.request("BREW", f"{base}/health", timeout=5).status_code == 400
    chat = httpx.post(
        f"{base}/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}]},
        timeout=15,
    )
    assert chat.status_code == 200
    runtime.metrics()  # one scrape, so /metrics itself is counted in the next one

    text = runtime.metrics()
    count = "rag_http_requests_total"
    assert sample(text, count, route="/index", method="POST", status="200") == 1
    assert sample(text, count, route="/indexes/{name}/documents", method="GET", status="200") == 3
    assert sample(text, count, route="/indexes/{name}", method="DELETE", status="404") == 1
    assert sample(text, count, route="other", method="GET", status="404") == 1
    assert sample(text, count, route="/health", method="PUT", status="405") == 1
    assert sample(text, count, route="/health", method="other", status="405") == 1
    assert sample(text, count, route="/v1/chat/completions", method="POST", status="200") == 1
    assert sample(text, count, route="/metrics", method="GET", status="200") >= 1
    latency = "rag_http_request_duration_seconds_count"
    assert sample(text, latency, route="/indexes/{name}/documents", method="GET") == 3
    assert sample(text, latency, route="/v1/chat/completions", method="POST") == 1
    assert sample(text, "rag_http_request_duration_seconds_sum", route="/index", method="POST") > 0

    # No raw path segment or unknown method ever becomes a label value.
    labels = _series(text, count) + _series(text, "rag_http_request_duration_seconds_bucket")
    values = {value for series in labels for value in series.values()}
    for raw in ("shop-7", "no-such-index-41", "9731", "/no/such/path/9731", "PROPFIND", "BREW"):
        assert not any(raw in value for value in values), raw
    assert {series["route"] for series in labels} <= {
        "/index",
        "/indexes/{name}/documents",
        "/indexes/{name}",
        "/health",
        "/ready",
        "/metrics",
        "/v1/chat/completions",
        "other",
    }


def test_requests_rejected_before_routing_are_counted_as_other(runtime_factory) -> None:
    runtime: RuntimeProcess = runtime_factory({"RUNTIME_API_KEY": "k3y"}, ("--no-guardrails",))
    reply = httpx.post(
        f"{runtime.base_url}/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}]},
        timeout=5,
    )
    assert reply.status_code == 401
    text = runtime.metrics()
    assert sample(text, "rag_http_requests_total", route="other", method="POST", status="401") == 1
    assert (
        sample(
            text,
            "rag_http_requests_total",
            route="/v1/chat/completions",
            method="POST",
            status="401",
        )
        == 0
    )
