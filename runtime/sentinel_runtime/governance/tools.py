"""Calling tools: over HTTP (POST the JSON arguments, read a JSON result) or, when the ``mcp``
package is installed, over MCP (a server started as a command, or a streamable HTTP URL).

Each function of the rulebase names its transport (``url`` or ``mcp``); its description is
an OpenAI function schema (:meth:`Function.openai_schema`). Failures are :class:`ToolError`
with a kind (``timeout``, ``http``, ``invalid_json``, ``transport``, ``no_transport``,
``mcp_unavailable``, ``tool_error``), never a bare exception of the HTTP library.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Mapping
from typing import Any

import httpx

from sentinel_runtime.governance.rulebase import Function

MAX_RESULT_BYTES = 1024 * 1024


class ToolError(Exception):
    def __init__(self, tool: str, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(f"{tool}: {message}")
        self.tool = tool
        self.kind = kind
        self.status = status


def mcp_available() -> bool:
    return importlib.util.find_spec("mcp") is not None


class HttpTransport:
    """POST ``{"arguments"...}`` as the JSON body to the function's URL; 2xx with a JSON body
    is the result. One shared ``httpx.AsyncClient`` (connection reuse); timeouts per function."""

    def __init__(self, client: httpx.AsyncClient | None = None) -> None:
        self._client = client
        self._owned = client is None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(trust_env=False)
        return self._client

    async def call(self, function: Function, arguments: Mapping[str, Any]) -> Any:
        assert function.url is not None
        try:
            response = await self._http().post(
                function.url, json=dict(arguments), timeout=function.timeout
            )
        except httpx.TimeoutException as exc:
            raise ToolError(
                function.name, "timeout", f"no answer within {function.timeout:g} s"
            ) from exc
        except httpx.HTTPError as exc:
            raise ToolError(
                function.name, "transport", f"cannot reach {function.url}: {exc}"
            ) from exc
        if response.status_code >= 400:
            raise ToolError(
                function.name,
                "http",
                f"HTTP {response.status_code}: {response.text[:200]}",
                response.status_code,
            )
        if len(response.content) > MAX_RESULT_BYTES:
            raise ToolError(function.name, "invalid_json", "the result is larger than 1 MiB")
        try:
            return response.json()
        except ValueError as exc:
            raise ToolError(function.name, "invalid_json", "the result is not JSON") from exc

    async def aclose(self) -> None:
        if self._client is not None and self._owned:
            await self._client.aclose()
            self._client = None


class McpTransport:
    """One MCP session per call (simple and stateless): ``mcp: {command, args, env}`` starts
    the server over stdio, ``mcp: {url}`` connects over streamable HTTP; ``tool`` (default:
    the function's name) is the MCP tool called. The result is the tool's structured content,
    else its first text content parsed as JSON, else that text."""

    async def call(self, function: Function, arguments: Mapping[str, Any]) -> Any:
        if not mcp_available():
            raise ToolError(
                function.name,
                "mcp_unavailable",
                "the mcp package is not installed (pip install mcp)",
            )
        spec = dict(function.mcp or {})
        name = str(spec.get("tool") or function.name)
        try:
            result = await _mcp_call(spec, name, dict(arguments), function.timeout)
        except ToolError:
            raise
        except TimeoutError as exc:
            raise ToolError(
                function.name, "timeout", f"no answer within {function.timeout:g} s"
            ) from exc
        except Exception as exc:  # the SDK's transport errors have no common base class
            raise ToolError(function.name, "transport", f"MCP call failed: {exc}") from exc
        if getattr(result, "isError", False):
            raise ToolError(function.name, "tool_error", _mcp_text(result) or "the tool failed")
        structured = getattr(result, "structuredContent", None)
        if structured is not None:
            return structured
        text = _mcp_text(result)
        try:
            return json.loads(text)
        except ValueError:
            return text


async def _mcp_call(
    spec: Mapping[str, Any], tool: str, arguments: dict[str, Any], timeout: float
) -> Any:

    from mcp import ClientSession

    async def run(read: Any, write: Any) -> Any:
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await session.call_tool(tool, arguments)

    if "url" in spec:
        from mcp.client import streamable_http

        connect = getattr(streamable_http, "streamablehttp_client", None)
        connect = connect or streamable_http.streamable_http_client
        async with asyncio.timeout(timeout), connect(str(spec["url"])) as streams:
            return await run(streams[0], streams[1])
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = spec.get("command")
    if not command:
        raise ToolError(tool, "no_transport", "mcp needs a url or a command")
    parts = command.split() if isinstance(command, str) else list(command)
    params = StdioServerParameters(
        command=parts[0],
        args=[*parts[1:], *map(str, spec.get("args") or [])],
        env={str(k): str(v) for k, v in (spec.get("env") or {}).items()} or None,
    )
    async with asyncio.timeout(timeout), stdio_client(params) as (read, write):
        return await run(read, write)


def _mcp_text(result: Any) -> str:
    for item in getattr(result, "content", None) or []:
        text = getattr(item, "text", None)
        if isinstance(text, str):
            return text
    return ""


class ToolClient:
    """Calls a rulebase function by its transport."""

    def __init__(self, http: HttpTransport | None = None, mcp: McpTransport | None = None) -> None:
        self.http = http or HttpTransport()
        self.mcp = mcp or McpTransport()

    async def call(self, function: Function, arguments: Mapping[str, Any]) -> Any:
        if function.url is not None:
            return await self.http.call(function, arguments)
        if function.mcp is not None:
            return await self.mcp.call(function, arguments)
        raise ToolError(
            function.name,
            "no_transport",
            "the function has no url or mcp server: the client calls it itself",
        )

    async def aclose(self) -> None:
        await self.http.aclose()
