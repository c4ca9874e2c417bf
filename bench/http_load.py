"""The HTTP hot path under load: Sentinel beside a bare ASGI app under the same uvicorn.

``python bench/http_load.py [--seconds 4] [--runs 3] [--tail [--tail-seconds 120]
[--tail-connections 1,32]] [--profile]``, or ``python bench/run.py --only http_load``.

The load generator is ``wrk`` (Debian's package, unpacked into
``${SENTINEL_CACHE:-~/.cache/sentinel}/tools/wrk`` by ``scripts/bench-tools.sh``, which this
bench runs first); without it the bench stops with a message, it does not fall back to a
Python client, whose own cost would be most of what it measured.

Servers, each a process on its own 127.0.0.1 port, started here and stopped at the end:

* ``echo``: a minimal pure-ASGI app answering every POST with the same fixed
  ``chat.completion`` JSON, run by ``uvicorn.run`` with exactly the arguments ``sentinel
  serve`` passes (same interpreter, so the same uvicorn, event loop and HTTP implementation):
  the floor, what uvicorn alone costs per request;
* ``echo-h11`` (not with ``--tail``): the same app under uvicorn's pure-Python h11 parser and
  asyncio's loop, the floor as issue 23 measured it before the runtime took httptools and
  uvloop;
* ``off``: ``sentinel serve`` with ``OUTPUT_GUARDRAILS_ENABLED=false``;
* ``default``: ``sentinel serve`` with the shipped default policy;
* and the upstream both Sentinels call (``LLM_INFERENCE_URL``): another process of the echo
  app, so the fake model costs what the floor costs and is never the bottleneck.

The request: ``POST /v1/chat/completions`` with one short user message, no ``index_name``,
not streamed (a wrk Lua script sets the body and ``Content-Type``; its ``done`` function
prints the latency percentiles in microseconds). Each server is checked first with one
request: 200, the expected answer, and for ``default`` the policy hash in ``sentinel``.

For 1 connection (1 wrk thread) and 32 connections (2 threads; the machine has 2 cores, which
wrk, the server and, for Sentinel, the upstream share), servers alternate, ``--runs`` runs of
``--seconds`` each: req/s median, p50 and p99 (medians over the runs), and CPU time per request
of the server, of the upstream and of wrk (``/proc/<pid>/stat`` utime+stime, and the
children's rusage for wrk), read around each run. CPU per request separates what the server
costs from contention for the two cores: ``1 core req/s`` is 1000 / server CPU ms per request.
``server cores`` is the share of a core the server had; ``server CPU wait`` the time its
threads were runnable but waiting for a CPU (``/proc/<pid>/task/*/schedstat``); ``others'
cores`` what every other process on the machine took meanwhile (``/proc/stat``): when that is
high, req/s and tails say more about the machine than about the runtime.

``--tail``: one connection for ``--tail-seconds`` (120) per server: p50, p99, p99.9, p99.99,
max and p99/p50 as each request took (the Lua script times them itself: wrk's own percentiles
are corrected for coordinated omission, so one 80 ms pause every few seconds becomes its p99;
that corrected p99 is shown beside), and the Sentinels' garbage collections meanwhile
(count, median and longest pause of generations 1 and 2, from a ``gc.callbacks`` hook this
bench registers before calling ``sentinel serve``'s own ``main``). ``--tail-connections``
runs the same at other levels too (``1,32``), one wrk thread per connection since the script's
timer is per thread; the target is read at one connection only.

``--profile [SECONDS]``: ``py-spy record`` (``.venv/bin/pip install py-spy``) of the
default-policy server under 32 connections, the top functions by own time, once for the thread
holding the GIL and once for every busy thread.

Targets (issue 23): default policy >= 0.85x guardrails off and guardrails off >= 0.2x the echo
floor (32 connections; shown against both floors); p99 <= 3x p50 at one client over a
2-minute run.
"""

from __future__ import annotations

import argparse
import collections
import functools
import importlib.util
import itertools
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO / "tests") not in sys.path:  # run directly: bench helpers, test support servers
    sys.path[:0] = [str(HERE), str(REPO / "tests")]

import httpx  # noqa: E402

from sentinel_runtime import cli as runtime_cli  # noqa: E402
from stats import table  # noqa: E402
from support.runtime import (  # noqa: E402
    free_port,
    start_runtime,
    stop_process,
    wait_until_answering,
)

MODEL = "fake-model"
QUESTION = "What is the capital of France?"
ANSWER = "The capital of France is Paris, on the Seine; about two million people live there."
REQUEST_BODY = {"model": MODEL, "messages": [{"role": "user", "content": QUESTION}]}
COMPLETION = {
    "id": "chatcmpl-echo",
    "object": "chat.completion",
    "created": 1700000000,
    "model": MODEL,
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 9, "completion_tokens": 18, "total_tokens": 27},
}
PERCENTILES = (50.0, 75.0, 90.0, 99.0, 99.9, 99.99)
CONNECTION_LEVELS = ((1, 1), (32, 2))  # (connections, wrk threads)
# The floor as issue 23 measured it (9,163 req/s at 32 connections), before the runtime
# depended on httptools and uvloop: the same echo app under uvicorn's pure-Python parser and
# asyncio's loop. The C stack made the floor about five times faster and Sentinel's own work
# no cheaper, so the off/echo ratio is shown against both floors.
H11_ECHO = "echo-h11"
H11_STACK = ("h11", "asyncio")
DEFAULT_OVER_OFF_TARGET = 0.85
OFF_OVER_ECHO_TARGET = 0.2
TAIL_RATIO_TARGET = 3.0
STARTUP_SECONDS = 30.0
WARMUP_SECONDS = 1.0
TOOLS_SCRIPT = REPO / "scripts" / "bench-tools.sh"

WRK_SCRIPT = """\
-- POST one short chat request; done() prints what bench/http_load.py parses.
wrk.method = "POST"
wrk.body = [[%(body)s]]
wrk.headers["Content-Type"] = "application/json"

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("bench: requests %%d duration_us %%d bytes %%d\\n",
    summary.requests, summary.duration, summary.bytes))
  io.write(string.format("bench: errors connect %%d read %%d write %%d status %%d timeout %%d\\n",
    e.connect, e.read, e.write, e.status, e.timeout))
  io.write(string.format("bench: latency_us min %%d mean %%.1f max %%d stdev %%.1f\\n",
    latency.min, latency.mean, latency.max, latency.stdev))
  for _, p in ipairs({%(percentiles)s}) do
    io.write(string.format("bench: percentile_us %%g %%d\\n", p, latency:percentile(p)))
  end
end
"""


# --- the echo floor (and the fake upstream): a bare ASGI app ---------------------------------

_COMPLETION_BYTES = json.dumps(COMPLETION, separators=(",", ":")).encode()
_MODELS_BYTES = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]}).encode()


async def echo_app(scope: dict[str, Any], receive: Callable, send: Callable) -> None:
    """Every POST gets the same ``chat.completion``; every GET the model list."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    more = True
    while more:  # drain the request body
        message = await receive()
        more = message.get("more_body", False)
    body = _COMPLETION_BYTES if scope["method"] == "POST" else _MODELS_BYTES
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def serve_echo(port: int, stack: tuple[str, str] | None = None) -> None:
    """``uvicorn.run`` as ``sentinel serve`` calls it (runtime/sentinel_runtime/cli.py), or
    on another ``(http, loop)`` stack."""
    import uvicorn

    http, loop = stack or runtime_cli.server_stack()
    print(f"echo: listening on 127.0.0.1:{port}; http {http}, loop {loop}", file=sys.stderr)
    uvicorn.run(
        echo_app,
        host="127.0.0.1",
        port=port,
        http=http,
        loop=loop,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=10,
    )


# --- wrk: fetching, running, parsing ----------------------------------------------------------


class WrkMissingError(SystemExit):
    """wrk could not be obtained: the bench cannot measure what it claims to."""


def find_wrk() -> Path:
    """The cached wrk wrapper, fetched by scripts/bench-tools.sh when missing; a ``wrk`` on
    PATH when the fetch fails."""
    done = subprocess.run(
        ["bash", str(TOOLS_SCRIPT), "--print-bin"], capture_output=True, text=True, timeout=600
    )
    path = Path(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
    if done.returncode == 0 and path is not None and path.exists():
        return path
    installed = shutil.which("wrk")
    if installed:
        return Path(installed)
    raise WrkMissingError(
        "http_load: ERROR: wrk (the native load generator) could not be obtained by "
        f"scripts/bench-tools.sh (exit {done.returncode}):\n{done.stderr.strip()}\n"
        "This benchmark needs wrk; it does not fall back to a Python client. Make Debian's "
        "mirror reachable (or set SENTINEL_DEBIAN_MIRROR), or put a wrk on PATH, then run it "
        "again."
    )


@dataclass
class WrkResult:
    requests: int
    seconds: float
    errors: dict[str, int]
    percentiles_us: dict[float, int]
    mean_us: float
    max_us: int
    non_2xx: int = 0
    reported_rps: float | None = None  # wrk's own "Requests/sec" line
    # timed by the script itself, without wrk's coordinated-omission correction (raw scripts)
    raw_percentiles_us: dict[float, int] = field(default_factory=dict)
    raw_requests: int = 0
    raw_max_us: int = 0
    wrk_cpu_s: float = 0.0
    server_cpu_s: float = 0.0
    machine_cpu_s: float = 0.0  # every CPU's busy time (/proc/stat) during the run
    server_wait_s: float = 0.0  # the server's threads runnable but waiting for a CPU

    @property
    def server_cores(self) -> float:
        """How much of a core the server had (its CPU seconds per second)."""
        return self.server_cpu_s / self.seconds if self.seconds else 0.0

    @property
    def other_cores(self) -> float:
        """Cores busy with other processes (not the server, its upstream or wrk)."""
        ours = self.server_cpu_s + self.upstream_cpu_s + self.wrk_cpu_s
        return max(0.0, self.machine_cpu_s - ours) / self.seconds if self.seconds else 0.0

    upstream_cpu_s: float = 0.0

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def ms(self, percentile: float) -> float:
        return self.percentiles_us[percentile] / 1000

    def failures(self) -> dict[str, int]:
        """Non-2xx answers and socket errors (wrk's ``status`` errors are the non-2xx)."""
        kinds = {"non-2xx": self.non_2xx, **self.errors}
        return {kind: n for kind, n in kinds.items() if n and kind != "status"}


def describe_failures(results: Sequence[WrkResult]) -> str:
    total: collections.Counter[str] = collections.Counter()
    for result in results:
        total.update(result.failures())
    if not total:
        return "0"
    return f"{sum(total.values())} (" + ", ".join(f"{k} {n}" for k, n in total.items()) + ")"


_BENCH_LINE = re.compile(r"^bench: (\w+) (.*)$")


def parse_wrk(output: str) -> WrkResult:
    """wrk's output with this bench's ``done`` lines (``bench: ...``) into numbers."""
    counts: dict[str, int] = {}
    errors: dict[str, int] = {}
    percentiles: dict[float, int] = {}
    latency: dict[str, float] = {}
    raw_percentiles: dict[float, int] = {}
    raw_counts: dict[str, int] = {}
    reported: float | None = None
    non_2xx = 0
    for raw_line in output.splitlines():
        line = raw_line.strip()
        if line.startswith("Requests/sec:"):
            reported = float(line.split()[1])
        elif line.startswith("Non-2xx or 3xx responses:"):
            non_2xx = int(line.rsplit(maxsplit=1)[1])
        match = _BENCH_LINE.match(line)
        if not match:
            continue
        kind, rest = match.groups()
        words = rest.split()
        if kind == "requests":
            pairs = ["requests", *words]
            counts = {k: int(v) for k, v in zip(pairs[::2], pairs[1::2], strict=True)}
        elif kind == "errors":
            errors = {k: int(v) for k, v in zip(words[::2], words[1::2], strict=True)}
        elif kind == "latency_us":
            latency = {k: float(v) for k, v in zip(words[::2], words[1::2], strict=True)}
        elif kind == "percentile_us":
            percentiles[float(words[0])] = int(words[1])
        elif kind == "raw_percentile_us":
            raw_percentiles[float(words[0])] = int(words[1])
        elif kind == "raw_requests":
            raw_counts = {"requests": int(words[0]), "max_us": int(words[2])}
    if not counts or not errors or not percentiles or not latency:
        raise ValueError(f"no bench: lines in wrk's output (was the Lua script loaded?):\n{output}")
    return WrkResult(
        requests=counts["requests"],
        seconds=counts["duration_us"] / 1e6,
        errors=errors,
        percentiles_us=percentiles,
        mean_us=latency["mean"],
        max_us=int(latency["max"]),
        non_2xx=non_2xx,
        reported_rps=reported,
        raw_percentiles_us=raw_percentiles,
        raw_requests=raw_counts.get("requests", 0),
        raw_max_us=raw_counts.get("max_us", 0),
    )


# wrk corrects its latency statistics for coordinated omission before printing them or
# calling done() (stats_correct: a response that took L adds synthetic samples at L - i,
# L - 2i, ... for the mean interval i per connection), so its percentiles describe requests
# arriving at a steady rate. With ``raw``, the script also times each request itself
# (CLOCK_MONOTONIC through LuaJIT's FFI, from request() to response()) and prints those
# percentiles as they were; the per-request Lua calls cost wrk some throughput.
RAW_LATENCY_LUA = """\
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clk_id, bench_timespec *tp);
]]
local clock = ffi.new("bench_timespec")
local function now_us()
  ffi.C.clock_gettime(1, clock)  -- CLOCK_MONOTONIC
  return tonumber(clock.tv_sec) * 1000000 + tonumber(clock.tv_nsec) / 1000
end
local sent = 0
raw = {}  -- per thread: microseconds -> responses (read by done() through thread:get)
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function request()
  sent = now_us()
  return wrk.format()
end

function response(status, headers, body)
  local us = math.floor(now_us() - sent)
  raw[us] = (raw[us] or 0) + 1
end

local function raw_done()
  local merged, keys, total = {}, {}, 0
  for _, thread in ipairs(threads) do
    for us, n in pairs(thread:get("raw")) do
      if merged[us] == nil then table.insert(keys, us) end
      merged[us] = (merged[us] or 0) + n
      total = total + n
    end
  end
  table.sort(keys)
  io.write(string.format("bench: raw_requests %%d max_us %%d\\n", total, keys[#keys] or 0))
  for _, p in ipairs({%(percentiles)s}) do
    local want, seen = math.ceil(total * p / 100), 0
    for _, us in ipairs(keys) do
      seen = seen + merged[us]
      if seen >= want then
        io.write(string.format("bench: raw_percentile_us %%g %%d\\n", p, us))
        break
      end
    end
  end
end
"""


def write_wrk_script(path: Path, *, raw: bool = False) -> Path:
    body = json.dumps(REQUEST_BODY, separators=(",", ":"))
    percentiles = ", ".join(f"{p:g}" for p in PERCENTILES)
    values = {"body": body, "percentiles": percentiles}
    text = WRK_SCRIPT % values
    if raw:
        text = (RAW_LATENCY_LUA % values) + text.replace(
            "  for _, p in ipairs(", "  raw_done()\n  for _, p in ipairs(", 1
        )
    path.write_text(text, encoding="utf-8")
    return path


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads) from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_queue_wait_seconds(pid: int) -> float:
    """Time a process's threads spent runnable but waiting for a CPU (schedstat, in ns)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):  # a thread that just ended
            continue
    return total / 1e9


def machine_busy_seconds() -> float:
    """Busy time summed over every CPU (/proc/stat: all but idle and iowait)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# --- the servers ------------------------------------------------------------------------------


@dataclass
class Server:
    name: str
    process: subprocess.Popen
    base_url: str
    log_path: Path
    upstream: Server | None = None  # whose CPU is read beside this one's
    gc_log: Path | None = None  # its garbage collections, when started through GC_WATCH

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1/chat/completions"

    def collections(self, start: float, end: float) -> dict[int, list[float]]:
        """Pause in ms of each collection per generation between two time.monotonic()s."""
        found: dict[int, list[float]] = {}
        if self.gc_log is None or not self.gc_log.exists():
            return found
        for line in self.gc_log.read_text().splitlines():
            at, generation, ms = line.split()
            if start <= float(at) <= end:
                found.setdefault(int(generation), []).append(float(ms))
        return found


# ``sentinel serve`` itself (its cli.main, this interpreter), with a gc callback first that
# writes each collection's time.monotonic(), generation and pause (ms) to SENTINEL_BENCH_GC_LOG.
GC_WATCH = """\
import gc, os, sys, time
log = open(os.environ["SENTINEL_BENCH_GC_LOG"], "w", buffering=1)
began = [0.0]
def watch(phase, info):
    if phase == "start":
        began[0] = time.perf_counter()
    else:
        pause = (time.perf_counter() - began[0]) * 1000
        log.write(f"{time.monotonic():.6f} {info['generation']} {pause:.3f}\\n")
gc.callbacks.append(watch)
from sentinel_runtime.cli import main
sys.exit(main(sys.argv[1:]))
"""


def start_echo(root: Path, name: str, stack: tuple[str, str] | None = None) -> Server:
    port = free_port()
    log_path = root / f"{name}-{port}.log"
    code = (
        f"import sys; sys.path[:0] = [{str(HERE)!r}, {str(REPO / 'tests')!r}]; "
        f"import http_load; http_load.serve_echo({port}, {stack!r})"
    )
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-c", code], stdout=log, stderr=subprocess.STDOUT, cwd=root
        )
    server = Server(name, process, f"http://127.0.0.1:{port}", log_path)
    wait_until_answering(process, f"{server.base_url}/v1/models", name, log_path, STARTUP_SECONDS)
    return server


def _start_sentinel(
    root: Path, name: str, upstream: Server, *, guardrails: bool, watch_gc: bool
) -> Server:
    directory = root / name
    directory.mkdir()
    env = {
        "LLM_INFERENCE_URL": f"{upstream.base_url}/v1/chat/completions",
        "LLM_MODEL": MODEL,
        "OUTPUT_GUARDRAILS_ENABLED": "true" if guardrails else "false",
        "LOG_LEVEL": "WARNING",
    }
    if not watch_gc:
        runtime = start_runtime(directory, env)
        return Server(name, runtime.process, runtime.base_url, runtime.log_path, upstream)
    gc_log = directory / "gc.log"
    env["SENTINEL_BENCH_GC_LOG"] = str(gc_log)
    runtime = start_runtime(directory, env, command=(sys.executable, "-c", GC_WATCH))
    return Server(name, runtime.process, runtime.base_url, runtime.log_path, upstream, gc_log)


def check(server: Server) -> str:
    """One request: 200 and the upstream's answer; for ``default``, the policy in force."""
    response = httpx.post(server.url, json=REQUEST_BODY, timeout=30)
    if response.status_code != 200:
        raise RuntimeError(f"{server.name}: HTTP {response.status_code}: {response.text[:500]}")
    body = response.json()
    content = body["choices"][0]["message"]["content"]
    if content != ANSWER:
        raise RuntimeError(f"{server.name}: unexpected answer {content!r}")
    info = body.get("sentinel")
    if server.name.startswith("echo"):
        return f"{server.name}: 200, the fixed completion ({len(response.content)} B)"
    guardrails = (info or {}).get("guardrails") or {}
    policy = guardrails.get("policyHash") or guardrails.get("policy_hash")
    if server.name == "default" and not policy:
        raise RuntimeError(f"{server.name}: no policy hash in the response: {info!r}")
    if server.name == "off" and policy:
        raise RuntimeError(f"{server.name}: guardrails are on (policy {policy}): {info!r}")
    shown = f"enabled={json.dumps(guardrails.get('enabled'))}"
    if policy:
        shown += f", policyHash={policy[:16]}..."
    size = len(response.content)
    return (
        f"{server.name}: 200, the upstream's answer ({size} B); sentinel.guardrails {shown}; "
        f"sentinel keys: {', '.join(sorted(info or {}))}"
    )


@contextmanager
def servers(
    root: Path, *, watch_gc: bool = False, h11_floor: bool = False
) -> Iterator[dict[str, Server]]:
    with ExitStack() as stack:
        started: list[Server] = []
        stack.callback(lambda: [stop_process(s.process) for s in reversed(started)])
        upstream = start_echo(root, "upstream")
        started.append(upstream)
        started.append(start_echo(root, "echo"))
        if h11_floor:
            started.append(start_echo(root, H11_ECHO, H11_STACK))
        for name, guardrails in (("off", False), ("default", True)):
            started.append(
                _start_sentinel(root, name, upstream, guardrails=guardrails, watch_gc=watch_gc)
            )
        yield {s.name: s for s in started if s.name != "upstream"}


def run_wrk(
    wrk: Path, script: Path, server: Server, *, connections: int, threads: int, seconds: float
) -> WrkResult:
    command = [
        str(wrk),
        "-t",
        str(threads),
        "-c",
        str(connections),
        "-d",
        f"{seconds:g}s",
        "--timeout",
        "10s",
        "--latency",
        "-s",
        str(script),
        server.url,
    ]
    pid = server.process.pid
    upstream_pid = server.upstream.process.pid if server.upstream else None
    server_before = cpu_seconds(pid)
    wait_before = run_queue_wait_seconds(pid)
    upstream_before = cpu_seconds(upstream_pid) if upstream_pid else 0.0
    children_before = _children_cpu()
    machine_before = machine_busy_seconds()
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    machine_after = machine_busy_seconds()
    server_after = cpu_seconds(pid)
    wait_after = run_queue_wait_seconds(pid)
    upstream_after = cpu_seconds(upstream_pid) if upstream_pid else 0.0
    if done.returncode != 0:
        raise RuntimeError(f"wrk exited with {done.returncode}: {done.stderr}{done.stdout}")
    result = parse_wrk(done.stdout)
    result.wrk_cpu_s = _children_cpu() - children_before
    result.server_cpu_s = server_after - server_before
    result.machine_cpu_s = machine_after - machine_before
    result.server_wait_s = wait_after - wait_before
    result.upstream_cpu_s = upstream_after - upstream_before
    return result


# --- reporting --------------------------------------------------------------------------------


def _installed(name: str) -> str:
    try:
        return f"{name} {metadata.version(name)}"
    except metadata.PackageNotFoundError:
        return f"no {name}"


def versions() -> str:
    """The uvicorn, loop and HTTP implementation the servers here can run on."""
    uvicorn_bin = Path(sys.executable).with_name("uvicorn")
    command = [str(uvicorn_bin)] if uvicorn_bin.exists() else [sys.executable, "-m", "uvicorn"]
    done = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=30)
    importable = ", ".join(
        f"{name} importable: {importlib.util.find_spec(name) is not None}"
        for name in ("uvloop", "httptools")
    )
    http, loop = runtime_cli.server_stack()
    return (
        f"{done.stdout.strip() or done.stderr.strip()}; {importable} "
        f"({_installed('uvloop')}, {_installed('httptools')}); sentinel serve passes "
        f"http={http!r}, loop={loop!r}, and so does the echo floor"
    )


_STACK = re.compile(r"http (\w+), loop (\w+)")


def server_stack(server: Server) -> str:
    """The HTTP implementation and loop a server said it started with (its first lines)."""
    head = server.log_path.read_text(encoding="utf-8", errors="replace")[:4000]
    match = _STACK.search(head)
    return f"http {match.group(1)}, loop {match.group(2)}" if match else "uvicorn's auto choice"


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def measured_commit() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], capture_output=True, text=True, cwd=REPO)
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", "runtime")
    return head + (" + uncommitted changes in runtime/" if dirty else "")


@dataclass
class Series:
    runs: list[WrkResult] = field(default_factory=list)

    def med(self, fn: Callable[[WrkResult], float]) -> float:
        return statistics.median(fn(r) for r in self.runs)

    @property
    def rps(self) -> float:
        return self.med(lambda r: r.rps)

    def cpu_ms(self, attribute: str) -> float:
        """CPU ms per request (all runs pooled)."""
        requests = sum(r.requests for r in self.runs)
        return sum(getattr(r, attribute) for r in self.runs) / requests * 1000 if requests else 0


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "-"


def _verdict(label: str, value: float, target: float, more_is_better: bool = True) -> str:
    met = value >= target if more_is_better else value <= target
    sign = ">=" if more_is_better else "<="
    return f"{label}: {value:.2f}x ({'met' if met else 'MISSED'}: {sign} {target}x)"


def load_runs(
    wrk: Path, script: Path, running: dict[str, Server], seconds: float, runs: int
) -> tuple[str, list[str]]:
    rows: list[list[str]] = []
    verdicts: list[str] = []
    for connections, threads in CONNECTION_LEVELS:
        level = functools.partial(run_wrk, wrk, script, connections=connections, threads=threads)
        for server in running.values():  # warm up each server at this concurrency
            level(server, seconds=WARMUP_SECONDS)
        series = {name: Series() for name in running}
        for _ in range(runs):  # alternated, so drift on the shared machine hits all alike
            for name, server in running.items():
                series[name].runs.append(level(server, seconds=seconds))
        rps = {name: s.rps for name, s in series.items()}
        cpu = {name: s.cpu_ms("server_cpu_s") for name, s in series.items()}
        for name, got in series.items():
            ratio = "-"
            if name == "off":
                ratio = f"{_ratio(rps['off'], rps['echo'])} of echo"
                if H11_ECHO in rps:
                    ratio += f", {_ratio(rps['off'], rps[H11_ECHO])} of {H11_ECHO}"
            elif name == "default":
                ratio = f"{_ratio(rps['default'], rps['off'])} of off"
            server_cpu = cpu[name]
            upstream_cpu = got.cpu_ms("upstream_cpu_s")
            rows.append(
                [
                    f"{connections} ({threads} thr)",
                    name,
                    f"{got.rps:,.0f}",
                    " / ".join(f"{r.rps:,.0f}" for r in got.runs),
                    ratio,
                    f"{got.med(lambda r: r.ms(50.0)):.2f}",
                    f"{got.med(lambda r: r.ms(99.0)):.2f}",
                    f"{server_cpu:.3f}",
                    f"{1000 / server_cpu:,.0f}" if server_cpu else "-",
                    f"{upstream_cpu:.3f}" if running[name].upstream else "-",
                    f"{got.cpu_ms('wrk_cpu_s'):.3f}",
                    f"{got.med(lambda r: r.server_cores):.2f}",
                    f"{got.cpu_ms('server_wait_s'):.3f}",
                    f"{got.med(lambda r: r.other_cores):.2f}",
                    describe_failures(got.runs),
                ]
            )
        h11 = ""
        if H11_ECHO in rps:
            h11 = "; " + _verdict(
                f"off/{H11_ECHO} req/s", rps["off"] / rps[H11_ECHO], OFF_OVER_ECHO_TARGET
            )
        verdicts.append(
            f"{connections} connection(s): "
            + _verdict("off/echo req/s", rps["off"] / rps["echo"], OFF_OVER_ECHO_TARGET)
            + h11
            + "; "
            + _verdict("default/off req/s", rps["default"] / rps["off"], DEFAULT_OVER_OFF_TARGET)
            + f"; by server CPU per request: off/echo {cpu['echo'] / cpu['off']:.2f}x, "
            f"default/off {cpu['off'] / cpu['default']:.2f}x"
        )
    header = [
        "connections",
        "server",
        "req/s (median)",
        "req/s per run",
        "ratio",
        "wrk p50 ms",
        "wrk p99 ms",
        "server CPU ms/req",
        "1 core req/s",
        "upstream CPU ms/req",
        "wrk CPU ms/req",
        "server cores",
        "server CPU wait ms/req",
        "others' cores",
        "failed",
    ]
    title = (
        f"POST /v1/chat/completions, no index, not streamed: {runs} alternating runs of "
        f"{seconds:g} s per server (wrk; its percentiles are corrected for coordinated "
        "omission, see --tail for requests as timed)"
    )
    return table(title, header, rows), verdicts


def _pauses(pauses: list[float] | None) -> str:
    if not pauses:
        return "0"
    return f"{len(pauses)}, {statistics.median(pauses):.1f}/{max(pauses):.1f}"


def tail_runs(
    wrk: Path,
    script: Path,
    running: dict[str, Server],
    seconds: float,
    levels: Sequence[int] = (1,),
) -> tuple[str, list[str]]:
    """``script``: one written with ``raw=True`` (each request timed as it was). One wrk
    thread per connection at every level: the script's timer is per thread."""
    rows: list[list[str]] = []
    verdicts: list[str] = []
    for connections, (name, server) in itertools.product(levels, running.items()):
        level = functools.partial(
            run_wrk, wrk, script, connections=connections, threads=connections
        )
        level(server, seconds=WARMUP_SECONDS)
        began = time.monotonic()
        got = level(server, seconds=seconds)
        collected = server.collections(began, time.monotonic())
        raw = {p: us / 1000 for p, us in got.raw_percentiles_us.items()}
        if not raw:
            raise RuntimeError("the tail script printed no raw percentiles")
        ratio = raw[99.0] / raw[50.0]
        corrected = got.ms(99.0) / got.ms(50.0)
        rows.append(
            [
                str(connections),
                name,
                f"{got.rps:,.0f}",
                f"{raw[50.0]:.2f}",
                f"{raw[99.0]:.2f}",
                f"{raw[99.9]:.2f}",
                f"{raw[99.99]:.2f}",
                f"{got.raw_max_us / 1000:.2f}",
                f"{ratio:.2f}x",
                f"{got.ms(99.0):.2f}",
                f"{corrected:.2f}x",
                f"{got.server_cpu_s / got.requests * 1000:.3f}" if got.requests else "-",
                f"{got.server_wait_s / got.requests * 1000:.3f}" if got.requests else "-",
                f"{got.other_cores:.2f}",
                _pauses(collected.get(1)) if server.gc_log else "-",
                _pauses(collected.get(2)) if server.gc_log else "-",
                f"{got.requests:,}",
                describe_failures([got]),
            ]
        )
        if connections != 1:  # the target is for one client; other levels are shown
            continue
        if name == "echo" and ratio > TAIL_RATIO_TARGET:
            verdicts.append(
                f"caution: the echo floor itself has p99/p50 {ratio:.1f}x here: the machine's "
                "scheduling (other processes on its cores) makes the tail, not the runtime alone"
            )
        if name != "echo":
            verdicts.append(
                _verdict(
                    f"{name}: p99/p50 as timed", ratio, TAIL_RATIO_TARGET, more_is_better=False
                )
                + "; "
                + _verdict(
                    "wrk's corrected p99/p50", corrected, TAIL_RATIO_TARGET, more_is_better=False
                )
            )
    header = [
        "connections",
        "server",
        "req/s",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "p99.99 ms",
        "max ms",
        "p99/p50",
        "wrk p99 ms (corrected)",
        "wrk p99/p50",
        "server CPU ms/req",
        "server CPU wait ms/req",
        "others' cores",
        "gen1 GCs: n, median/max ms",
        "gen2 GCs: n, median/max ms",
        "requests",
        "failed",
    ]
    levels_shown = " and ".join(f"-c{n} -t{n}" for n in levels)
    title = (
        f"Tail latency: {seconds:g} s per server and level, one after another (wrk "
        f"{levels_shown}); "
        "p50 to max as each request took (timed by the Lua script), beside wrk's p99 corrected "
        "for coordinated omission (a stall of L counts again at L - i, L - 2i, ... for the mean "
        "interval i: what requests arriving at a steady rate would have seen)"
    )
    return table(title, header, rows), verdicts


def _py_spy() -> str | None:
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else shutil.which("py-spy")


_LINE_NUMBER = re.compile(r":\d+\)$")
_THREAD = re.compile(r"^thread \((?:0x)?[0-9a-fA-F]+\): ?")
PROFILE_RATE = 200  # samples per second


@dataclass
class Profile:
    """py-spy's raw (collapsed) stacks: samples per leaf function, thread and package."""

    own: collections.Counter[str] = field(default_factory=collections.Counter)
    threads: collections.Counter[str] = field(default_factory=collections.Counter)
    packages: collections.Counter[str] = field(default_factory=collections.Counter)
    # per leaf function: the two frames above it (caller <- its caller), with their samples
    callers: dict[str, collections.Counter[str]] = field(default_factory=dict)
    total: int = 0


def read_profile(raw: str) -> Profile:
    """Own time per function (its line numbers merged); a first ``thread (id): name`` frame
    (``--threads``) counts toward that thread's name instead."""
    found = Profile()
    for line in raw.splitlines():
        stack, _, samples = line.rpartition(" ")
        if not stack or not samples.isdigit():
            continue
        frames = stack.split(";")
        if _THREAD.match(frames[0]):
            found.threads[_THREAD.sub("", frames[0]) or "?"] += int(samples)
            frames = frames[1:] or ["(no Python frame)"]
        leaf = _LINE_NUMBER.sub(")", frames[-1])
        above = " <- ".join(_short(_LINE_NUMBER.sub(")", f)) for f in frames[-2:-4:-1])
        found.callers.setdefault(leaf, collections.Counter())[above or "(top)"] += int(samples)
        found.own[leaf] += int(samples)
        found.packages[_package(leaf)] += int(samples)
        found.total += int(samples)
    return found


def top_own_time(raw: str, count: int = 15) -> tuple[list[tuple[str, int]], int]:
    """The leaf functions with the most samples, and all samples."""
    found = read_profile(raw)
    return found.own.most_common(count), found.total


_PATH_MARKERS = ("site-packages/", "/runtime/", "lib/python3.11/")  # what precedes a package


def _package(frame: str) -> str:
    """The top-level package (or stdlib module) a frame's file belongs to."""
    path = frame.rpartition(" (")[2].rstrip(")")
    for marker in _PATH_MARKERS:
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    parts = path.split("/")
    if parts[0] == "sentinel_runtime" and len(parts) > 2:
        return f"sentinel_runtime.{parts[1]}"
    return parts[0].removesuffix(".py") or "?"


def _short(frame: str) -> str:
    """``fn (/abs/.../site-packages/pkg/mod.py)`` as ``fn (pkg/mod.py)``."""
    for marker in _PATH_MARKERS:
        if marker in frame:
            name, _, path = frame.partition(" (")
            return f"{name} ({path.split(marker, 1)[1]}"
    return frame


def _record(py_spy: str, pid: int, seconds: float, out: Path, *flags: str) -> subprocess.Popen:
    command = [py_spy, "record", "--pid", str(pid), "--duration", f"{seconds:g}"]
    command += ["--rate", str(PROFILE_RATE), "--format", "raw", "--output", str(out), *flags]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _shares(counter: collections.Counter[str], total: int, count: int) -> str:
    return ", ".join(f"{name} {n / total:.0%}" for name, n in counter.most_common(count))


def profile(wrk: Path, script: Path, server: Server, seconds: float, root: Path) -> str:
    """Two py-spy recordings of the server under 32 connections: only the thread holding the
    GIL (``--gil``: where Python's CPU goes), then every busy thread (``--threads``; sampled
    without pausing the process, whose pauses make py-spy count threads waiting on a lock as
    busy)."""
    py_spy = _py_spy()
    if py_spy is None:
        return "profile: py-spy is not installed (.venv/bin/pip install py-spy); skipped"
    parts: list[str] = []
    passes = (
        ("GIL held: Python's own CPU", ("--gil",)),
        ("busy samples, every thread", ("--threads", "--nonblocking")),
    )
    for label, flags in passes:
        out = root / f"default-{flags[0].strip('-')}.raw"
        recorder = _record(py_spy, server.process.pid, seconds, out, *flags)
        time.sleep(0.5)
        load = run_wrk(wrk, script, server, connections=32, threads=2, seconds=seconds + 1)
        _, error = recorder.communicate(timeout=seconds + 60)
        if recorder.returncode != 0 or not out.exists():
            failed = error.strip()[-500:]
            parts.append(f"profile: py-spy record failed ({recorder.returncode}): {failed}")
            continue
        found = read_profile(out.read_text(encoding="utf-8", errors="replace"))
        if not found.total:
            parts.append(f"profile ({label}): no samples")
            continue
        rows = [
            [f"{n / found.total:.1%}", str(n), _short(frame)]
            for frame, n in found.own.most_common(15)
        ]
        title = (
            f"Default-policy server under 32 connections ({load.rps:,.0f} req/s while sampled): "
            f"py-spy record {' '.join(flags)} at {PROFILE_RATE} Hz for {seconds:g} s, "
            f"{found.total:,} samples ({label}); top 15 functions by own time"
        )
        parts.append(table(title, ["own", "samples", "function (file)"], rows))
        for frame, n in found.own.most_common(3):
            parts.append(f"{_short(frame)} called from: {_shares(found.callers[frame], n, 2)}")
        if found.threads:
            parts.append(f"by thread: {_shares(found.threads, found.total, 4)}")
        parts.append(f"own time by package: {_shares(found.packages, found.total, 12)}")
        parts.append("")
    return "\n".join(parts).rstrip()


def run(
    quick: bool = False,
    *,
    seconds: float = 4.0,
    runs: int = 3,
    tail: bool = False,
    tail_seconds: float = 120.0,
    tail_connections: Sequence[int] = (1,),
    profile_seconds: float | None = None,
) -> str:
    if quick:
        seconds, tail_seconds = min(seconds, 2.0), min(tail_seconds, 10.0)
    wrk = find_wrk()
    wrk_version = subprocess.run([str(wrk), "--version"], capture_output=True, text=True)
    lines = [
        f"runtime at {measured_commit()}; {os.cpu_count()} CPUs shared by wrk, the server and "
        f"(for Sentinel) its upstream; load average before: {load_average()}",
        f"servers: {versions()}",
        f"load generator: {wrk_version.stdout.splitlines()[0] if wrk_version.stdout else wrk}",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        script = write_wrk_script(root / "chat.lua", raw=tail)
        with servers(root, watch_gc=tail, h11_floor=not tail) as running:
            lines += [f"check: {check(server)}" for server in running.values()]
            stacks = {name: server_stack(server) for name, server in running.items()}
            lines.append("stacks: " + "; ".join(f"{n}: {st}" for n, st in stacks.items()))
            if len({st for name, st in stacks.items() if name != H11_ECHO}) > 1:
                lines.append("WARNING: the servers run different HTTP stacks; ratios mix them")
            if tail:
                text, verdicts = tail_runs(wrk, script, running, tail_seconds, tail_connections)
            else:
                text, verdicts = load_runs(wrk, script, running, seconds, runs)
            lines += ["", text, *verdicts, f"load average after: {load_average()}"]
            if profile_seconds:
                lines += ["", profile(wrk, script, running["default"], profile_seconds, root)]
    return "\n".join(lines)


def _levels(text: str) -> tuple[int, ...]:
    try:
        levels = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of connection counts: {text!r}") from None
    if not levels or min(levels) < 1:
        raise argparse.ArgumentTypeError(f"connection counts must be 1 or more: {text!r}")
    return levels


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 s runs (10 s with --tail)")
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds per run (4)")
    parser.add_argument("--runs", type=int, default=3, help="runs per server and level (3)")
    parser.add_argument("--tail", action="store_true", help="one client, --tail-seconds each")
    parser.add_argument("--tail-seconds", type=float, default=120.0, help="(120)")
    parser.add_argument(
        "--tail-connections",
        type=_levels,
        default=(1,),
        metavar="N[,N...]",
        help="connections per tail run, one wrk thread each (1; e.g. 1,32)",
    )
    parser.add_argument(
        "--profile",
        type=float,
        nargs="?",
        const=10.0,
        default=None,
        metavar="SECONDS",
        help="py-spy the default-policy server under 32 connections (10 s)",
    )
    args = parser.parse_args(argv)
    print(
        run(
            quick=args.quick,
            seconds=args.seconds,
            runs=args.runs,
            tail=args.tail,
            tail_seconds=args.tail_seconds,
            tail_connections=args.tail_connections,
            profile_seconds=args.profile,
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
