"""The HTTP connections to the LLM upstream: one aiohttp session per event loop.

aiohttp rather than httpx because every answer makes at least one upstream call: on this
machine a keep-alive POST costs httpx (httpcore, anyio) 0.42 ms of CPU at one connection and
1.2 ms at 32, aiohttp 0.09 ms and 0.07 ms, since httpcore checks the expiry of every pooled
connection on each request (``bench/upstream_client.py``; docs/benchmarks.md, "The chat hot
path under load").

What the httpx client did is kept: the same JSON body bytes, TLS verified against the same
CA bundle (``httpx.create_ssl_context``: ``SSL_CERT_FILE``/``SSL_CERT_DIR``, else certifi's),
proxies from the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``),
no redirects followed (a redirect is not an answer), and the timeout for connecting (at
most 10 s), for a free connection and between reads. The proxy is looked up once per URL:
aiohttp's ``trust_env`` would look it up, and ``.netrc`` credentials, in a worker thread on
every request. The pool holds ``max_connections`` (``LLM_MAX_CONNECTIONS``, at least
``MAX_INFLIGHT_TURNS``, so admitted turns do not queue here; docs/under-load.md).
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
import urllib.request
from typing import Any

import aiohttp
import httpx

from sentinel_runtime.observability import tracing

JSON_HEADERS = {"Content-Type": "application/json"}


def encode_json(payload: Any) -> bytes:
    """Compact UTF-8 JSON; NaN and infinities are refused (``ValueError``), as JSON has none."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8")


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``None``: connect directly)."""
    parts = urllib.parse.urlsplit(url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")


class Sessions:
    """An aiohttp session opened on first use in the running event loop (a session belongs to
    one loop; the runtime has one, tests start several)."""

    def __init__(self, *, headers: dict[str, str], timeout: float, max_connections: int) -> None:
        self._headers = headers
        self._max_connections = max_connections
        self._timeout = aiohttp.ClientTimeout(
            total=None, connect=timeout, sock_connect=min(timeout, 10.0), sock_read=timeout
        )
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._proxies: dict[str, str | None] = {}

    def session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            connector = aiohttp.TCPConnector(
                limit=self._max_connections, ssl=httpx.create_ssl_context()
            )
            self._session = aiohttp.ClientSession(
                headers=self._headers, timeout=self._timeout, connector=connector
            )
            self._loop = loop
            self._proxies = {}  # a new session reads the environment again
        return self._session

    def _proxy(self, url: str) -> str | None:
        if url not in self._proxies:
            self._proxies[url] = env_proxy(url)
        return self._proxies[url]

    async def open(
        self, method: str, url: str, payload: dict[str, Any] | None
    ) -> aiohttp.ClientResponse:
        """The response once its headers are in; the caller reads the body and closes it."""
        session, options = self.session(), {"proxy": self._proxy(url), "allow_redirects": False}
        headers = dict(JSON_HEADERS) if payload is not None else {}
        # The W3C traceparent of the current (client) span, with tracing on (docs/tracing.md).
        tracing.inject(headers)
        if payload is None:
            return await session.request(method, url, headers=headers or None, **options)
        return await session.request(
            method, url, data=encode_json(payload), headers=headers, **options
        )

    async def fetch(
        self, method: str, url: str, payload: dict[str, Any] | None
    ) -> tuple[int, bytes]:
        """Status and whole body of one request."""
        response = await self.open(method, url, payload)
        async with response:
            return response.status, await response.read()

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()
