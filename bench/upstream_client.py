"""The LLM upstream's client alone: CPU per request of ``llm.http_client.Sessions`` (aiohttp,
what the runtime uses) beside ``httpx.AsyncClient`` (what it used before), both posting the
same chat body to the bench's echo app (``http_load.serve_echo``, its own process).

``python bench/upstream_client.py [--requests 3200]`` or ``python bench/run.py --only
upstream_client``. For 1 and 32 concurrent requests on one event loop (uvloop, as ``sentinel
serve`` runs), each client in turn, ``--rounds`` times: this process's CPU time per request
(``time.process_time``, so the echo server's share is not counted) and wall time per request;
medians over the rounds, and aiohttp's CPU as a share of httpx's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import httpx
import uvloop

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

import http_load  # noqa: E402
from sentinel_runtime.llm.http_client import Sessions  # noqa: E402
from sentinel_runtime.settings import DEFAULT_LLM_MAX_CONNECTIONS  # noqa: E402
from stats import table  # noqa: E402
from support.runtime import stop_process  # noqa: E402

CONCURRENCY = (1, 32)
WARMUP = 50

Post = Callable[[], Awaitable[None]]


async def _timed(post: Post, requests: int, concurrency: int) -> tuple[float, float]:
    """(CPU ms, wall ms) per request for ``requests`` posts, ``concurrency`` at a time."""

    async def worker(count: int) -> None:
        for _ in range(count):
            await post()

    await worker(WARMUP)
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker(requests // concurrency) for _ in range(concurrency)))
    done = requests // concurrency * concurrency
    return (
        (time.process_time() - cpu) / done * 1000,
        (time.perf_counter() - wall) / done * 1000,
    )


async def _with_aiohttp(url: str, requests: int, concurrency: int) -> tuple[float, float]:
    sessions = Sessions(headers={}, timeout=30.0, max_connections=DEFAULT_LLM_MAX_CONNECTIONS)

    async def post() -> None:
        status, body = await sessions.fetch("POST", url, http_load.REQUEST_BODY)
        assert status == 200 and json.loads(body)["choices"]

    try:
        return await _timed(post, requests, concurrency)
    finally:
        await sessions.aclose()


async def _with_httpx(url: str, requests: int, concurrency: int) -> tuple[float, float]:
    async with httpx.AsyncClient(timeout=30.0) as client:

        async def post() -> None:
            response = await client.post(url, json=http_load.REQUEST_BODY)
            assert response.status_code == 200 and response.json()["choices"]

        return await _timed(post, requests, concurrency)


CLIENTS = {"httpx.AsyncClient (before)": _with_httpx, "aiohttp (Sessions)": _with_aiohttp}


def run(quick: bool = False, *, requests: int = 3200, rounds: int = 3) -> str:
    if quick:
        requests, rounds = 640, 1
    with tempfile.TemporaryDirectory() as tmp:
        echo = http_load.start_echo(Path(tmp), "echo")
        url = f"{echo.base_url}/v1/chat/completions"
        try:
            measured: dict[tuple[str, int], list[tuple[float, float]]] = {}
            for concurrency in CONCURRENCY:
                for _ in range(rounds):  # alternated, so drift reaches both clients
                    for name, client in CLIENTS.items():
                        got = uvloop.run(client(url, requests, concurrency))
                        measured.setdefault((name, concurrency), []).append(got)
        finally:
            stop_process(echo.process)
    rows = []
    for concurrency in CONCURRENCY:
        cpu = {n: statistics.median(c for c, _ in measured[(n, concurrency)]) for n in CLIENTS}
        before = cpu["httpx.AsyncClient (before)"]
        for name in CLIENTS:
            wall = statistics.median(w for _, w in measured[(name, concurrency)])
            rows.append(
                [
                    str(concurrency),
                    name,
                    f"{cpu[name]:.3f}",
                    f"{wall:.3f}",
                    f"{cpu[name] / before:.2f}x" if name != "httpx.AsyncClient (before)" else "-",
                ]
            )
    title = (
        f"Upstream client: {requests} keep-alive POSTs of a chat body to a bare ASGI echo app, "
        f"median of {rounds} alternating rounds"
    )
    header = ["concurrent", "client", "CPU ms/request", "wall ms/request", "CPU vs httpx"]
    return table(title, header, rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--requests", type=int, default=3200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(run(args.quick, requests=args.requests, rounds=args.rounds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
