"""Overload: admission control sheds at once instead of letting clients time out (issue 34).

``python bench/overload.py [--seconds 20] [--connections 800] [--soak SECONDS]``, or
``python bench/run.py --only overload``.

One run, two ``sentinel serve`` processes with the shipped default policy and admission at
its defaults (``MAX_INFLIGHT_TURNS``, ``MAX_QUEUE_SECONDS``, ``LLM_MAX_CONNECTIONS`` unset),
identical but for their upstream:

* (a) **CPU-bound rate**: 32 connections against the fast upstream of ``http_load`` (its echo
  app, answering at once): what one runtime process serves when the model is never the limit;
  measured before and after (b), the rate being the mean of the two, so that a shared machine
  slowing down or speeding up during the run moves both sides of the ratio;
* (b) **overload**: ``--connections`` (800) for ``--seconds`` (20) against an upstream that
  takes 1 s per answer and serves any number at once (the same echo app behind an
  ``asyncio.sleep``), with a 10 s client timeout: served req/s and its ratio to (a), client
  timeouts, every non-2xx by status and whether it carried ``Retry-After``, p50/p99 of the
  served requests, and the runtime's RSS before and after;
* ``--soak SECONDS`` (for example 180): (b) held that long, the RSS sampled every 5 s, then
  one request at a time for 15 s after the load stops: how long until a request takes its
  idle time again (within 25 % of the median of 5 idle requests before the load).

Targets (issue 34): 0 client timeouts; every non-2xx is 429 or 503 with ``Retry-After``;
served req/s >= 0.8x the CPU-bound rate; RSS growth <= 64 MB; p99 of the served <= 3x the
upstream's latency; in the soak, RSS flat and latency back to idle within seconds.

The load generator is a Python asyncio client (aiohttp on uvloop) in its own process, one
coroutine per connection, each sending its next request when the last one ends (closed loop,
as wrk; ``Retry-After`` is not honoured, the harshest client). Not wrk: at 800 connections
wrk's Lua hooks cannot tell which request a response answers, so served latencies cannot be
separated from shed ones, and wrk never gives up on a request, it only counts late answers;
this client abandons a request at 10 s and closes its connection, as a real client would,
and records every request's status, ``Retry-After`` and latency. The client's CPU is
reported: the machine has 2 cores for the runtime, its upstream and the client.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO / "tests") not in sys.path:  # run directly: bench helpers, test support servers
    sys.path[:0] = [str(HERE), str(REPO / "tests")]

import httpx  # noqa: E402

import http_load  # noqa: E402
from stats import table  # noqa: E402
from support.runtime import free_port, start_runtime, stop_process, wait_until_answering  # noqa: E402

UPSTREAM_SECONDS = 1.0
CLIENT_TIMEOUT = 10.0
BASELINE_CONNECTIONS = 32
BASELINE_SECONDS = 10.0
WARMUP_SECONDS = 2.0
RSS_SAMPLE_SECONDS = 5.0
RECOVERY_PROBE_SECONDS = 15.0
IDLE_TOLERANCE = 1.25
SHED_STATUSES = frozenset({429, 503})
SERVED_OVER_CPU_TARGET = 0.8
RSS_GROWTH_TARGET_MB = 64.0
P99_OVER_UPSTREAM_TARGET = 3.0


# --- the slow upstream: http_load's echo app, each answer after UPSTREAM_SECONDS --------------


def slow_echo_app(delay: float) -> Callable:
    async def app(scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            await asyncio.sleep(delay)
        await http_load.echo_app(scope, receive, send)

    return app


def serve_slow_echo(port: int, delay: float) -> None:
    """The echo app under ``uvicorn.run`` as ``sentinel serve`` calls it, answering each POST
    after ``delay`` seconds; any number at once (no concurrency limit, backlog 4096)."""
    import uvicorn

    http, loop = http_load.runtime_cli.server_stack()
    uvicorn.run(
        slow_echo_app(delay),
        host="127.0.0.1",
        port=port,
        http=http,
        loop=loop,
        log_config=None,
        access_log=False,
        backlog=4096,
    )


def start_slow_upstream(root: Path, delay: float) -> http_load.Server:
    port = free_port()
    log_path = root / f"slow-upstream-{port}.log"
    code = (
        f"import sys; sys.path[:0] = [{str(HERE)!r}, {str(REPO / 'tests')!r}]; "
        f"import overload; overload.serve_slow_echo({port}, {delay!r})"
    )
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-c", code], stdout=log, stderr=subprocess.STDOUT, cwd=root
        )
    server = http_load.Server("slow-upstream", process, f"http://127.0.0.1:{port}", log_path)
    wait_until_answering(process, f"{server.base_url}/v1/models", server.name, log_path)
    return server


def start_sentinel(root: Path, name: str, upstream: http_load.Server) -> http_load.Server:
    """``sentinel serve`` with the default policy and every admission setting at its default."""
    directory = root / name
    directory.mkdir()
    env = {
        "LLM_INFERENCE_URL": f"{upstream.base_url}/v1/chat/completions",
        "LLM_MODEL": http_load.MODEL,
        "OUTPUT_GUARDRAILS_ENABLED": "true",
        "LOG_LEVEL": "WARNING",
    }
    # Started through http_load's gc hook, so each run can say what garbage collection took.
    gc_log = directory / "gc.log"
    env["SENTINEL_BENCH_GC_LOG"] = str(gc_log)
    runtime = start_runtime(directory, env, command=(sys.executable, "-c", http_load.GC_WATCH))
    return http_load.Server(
        name, runtime.process, runtime.base_url, runtime.log_path, upstream, gc_log
    )


@contextmanager
def servers(root: Path) -> Iterator[dict[str, http_load.Server]]:
    with ExitStack() as stack:
        started: list[http_load.Server] = []
        stack.callback(lambda: [stop_process(s.process) for s in reversed(started)])
        fast = http_load.start_echo(root, "upstream")
        started.append(fast)
        slow = start_slow_upstream(root, UPSTREAM_SECONDS)
        started.append(slow)
        started.append(start_sentinel(root, "fast", fast))
        started.append(start_sentinel(root, "slow", slow))
        yield {s.name: s for s in started}


# --- the client (a process of its own: python bench/overload.py client ...) -------------------


@dataclass
class Outcome:
    """What the client saw, as it writes it to its JSON file."""

    seconds: float
    statuses: dict[int, int] = field(default_factory=dict)  # completed within the window
    retry_after: dict[int, int] = field(default_factory=dict)  # of those, with Retry-After
    all_statuses: dict[int, int] = field(default_factory=dict)  # the drain after it too
    all_retry_after: dict[int, int] = field(default_factory=dict)
    timeouts: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    served_ms: list[float] = field(default_factory=list)  # 2xx completed within the window
    cpu_seconds: float = 0.0

    @property
    def served(self) -> int:
        return sum(n for status, n in self.statuses.items() if 200 <= status < 300)

    @property
    def served_rps(self) -> float:
        return self.served / self.seconds

    def percentile(self, p: float) -> float:
        ordered = sorted(self.served_ms)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]

    def non_2xx(self) -> dict[int, tuple[int, int]]:
        """Status -> (count, with Retry-After), the drain after the window included."""
        return {
            status: (n, self.all_retry_after.get(status, 0))
            for status, n in sorted(self.all_statuses.items())
            if not 200 <= status < 300
        }

    @classmethod
    def read(cls, path: Path) -> Outcome:
        data = json.loads(path.read_text())
        for key in ("statuses", "retry_after", "all_statuses", "all_retry_after"):
            data[key] = {int(k): v for k, v in data[key].items()}
        return cls(**data)


async def _load(url: str, connections: int, seconds: float, timeout: float) -> Outcome:
    import aiohttp

    body = json.dumps(http_load.REQUEST_BODY).encode()
    headers = {"Content-Type": "application/json"}
    counted: Counter[int] = Counter()
    with_retry: Counter[int] = Counter()
    every: Counter[int] = Counter()
    every_retry: Counter[int] = Counter()
    errors: Counter[str] = Counter()
    served: list[float] = []
    timeouts = 0
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    session = aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=timeout)
    )
    started = time.monotonic()
    ends = started + seconds

    async def one() -> None:
        nonlocal timeouts
        sent = time.monotonic()
        try:
            async with session.post(url, data=body, headers=headers) as response:
                await response.read()
                status, retry = response.status, "Retry-After" in response.headers
        except TimeoutError:
            timeouts += 1
            return
        except aiohttp.ClientError as exc:
            errors[type(exc).__name__] += 1
            return
        done = time.monotonic()
        every[status] += 1
        every_retry[status] += retry
        if done <= ends:
            counted[status] += 1
            with_retry[status] += retry
            if 200 <= status < 300:
                served.append((done - sent) * 1000)

    async def connection() -> None:
        while time.monotonic() < ends:
            await one()

    try:
        await asyncio.gather(*(connection() for _ in range(connections)))
    finally:
        await session.close()
    return Outcome(
        seconds=seconds,
        statuses=dict(counted),
        retry_after=dict(with_retry),
        all_statuses=dict(every),
        all_retry_after=dict(every_retry),
        timeouts=timeouts,
        errors=dict(errors),
        served_ms=served,
        cpu_seconds=time.process_time(),
    )


def client_main(url: str, connections: int, seconds: float, timeout: float, out: Path) -> None:
    import resource

    import uvloop

    # Each connection is a socket: 800 of them need more than the usual 1024 descriptors
    # once the runtime's own are counted elsewhere; raise the soft limit to the hard one.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 65536)), hard))
    outcome = uvloop.run(_load(url, connections, seconds, timeout))
    out.write_text(json.dumps(outcome.__dict__))


@dataclass
class Client:
    process: subprocess.Popen
    out: Path
    seconds: float

    def finish(self) -> Outcome:
        self.process.wait(timeout=self.seconds + CLIENT_TIMEOUT + 60)
        if self.process.returncode != 0:
            raise RuntimeError(f"the load client exited with {self.process.returncode}")
        return Outcome.read(self.out)


def run_client(server: http_load.Server, connections: int, seconds: float, root: Path) -> Client:
    out = root / f"client-{server.name}-{connections}-{time.monotonic_ns()}.json"
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "client",
        server.url,
        str(connections),
        f"{seconds:g}",
        f"{CLIENT_TIMEOUT:g}",
        str(out),
    ]
    return Client(subprocess.Popen(command), out, seconds)


def load(server: http_load.Server, connections: int, seconds: float, root: Path) -> Outcome:
    return run_client(server, connections, seconds, root).finish()


# --- measuring ---------------------------------------------------------------------------------


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def one_request_ms(server: http_load.Server) -> tuple[int, float]:
    started = time.perf_counter()
    response = httpx.post(server.url, json=http_load.REQUEST_BODY, timeout=CLIENT_TIMEOUT)
    return response.status_code, (time.perf_counter() - started) * 1000


def idle_ms(server: http_load.Server, count: int = 5) -> float:
    return statistics.median(one_request_ms(server)[1] for _ in range(count))


def check(server: http_load.Server) -> str:
    response = httpx.post(server.url, json=http_load.REQUEST_BODY, timeout=30)
    content = response.json()["choices"][0]["message"]["content"]
    if response.status_code != 200 or content != http_load.ANSWER:
        raise RuntimeError(f"{server.name}: HTTP {response.status_code}: {response.text[:300]}")
    ready = httpx.get(f"{server.base_url}/ready", timeout=10).json()
    return f"{server.name}: 200, the upstream's answer; admission {ready['admission']}"


def _verdict(label: str, met: bool, detail: str) -> str:
    return f"{label}: {detail} ({'met' if met else 'MISSED'})"


def overload_report(
    baselines: Sequence[tuple[Outcome, Usage]],
    overload: Outcome,
    *,
    connections: int,
    rss: tuple[float, float],
    usage: Usage,
) -> tuple[str, list[str]]:
    """``baselines``: (a) measured before and after (b); the CPU-bound rate is their mean, so
    a machine that slows or speeds up during the run moves both sides of the ratio."""
    rss_before, rss_after = rss
    non_2xx = overload.non_2xx()
    shed_text = ", ".join(
        f"{status}: {n} ({retry} with Retry-After)" for status, (n, retry) in non_2xx.items()
    )
    rate = statistics.mean(outcome.served_rps for outcome, _ in baselines)
    ratio = overload.served_rps / rate if rate else 0.0
    p99 = overload.percentile(99)
    rows = [
        [
            f"(a) {BASELINE_CONNECTIONS} conn, fast upstream, {when}",
            f"{baseline.served_rps:,.0f}",
            f"{baseline.served_rps / rate:.2f}x" if rate else "-",
            f"{baseline.percentile(50):.1f}",
            f"{baseline.percentile(99):.1f}",
            str(baseline.timeouts),
            ", ".join(f"{s}: {n} ({r} RA)" for s, (n, r) in baseline.non_2xx().items()) or "0",
            "-",
            *_cpu(baseline, baseline_usage),
        ]
        for when, (baseline, baseline_usage) in zip(
            ("before (b)", "after (b)"), baselines, strict=False
        )
    ]
    rows += [
        [
            f"(b) {connections} conn, {UPSTREAM_SECONDS:g} s upstream",
            f"{overload.served_rps:,.0f}",
            f"{ratio:.2f}x",
            f"{overload.percentile(50):.0f}",
            f"{p99:.0f}",
            str(overload.timeouts),
            shed_text or "0",
            f"{rss_before:.0f} -> {rss_after:.0f}",
            *_cpu(overload, usage),
        ],
    ]
    header = [
        "run",
        "served req/s",
        "of (a), mean of both",
        "served p50 ms",
        "served p99 ms",
        "client timeouts",
        "non-2xx (with Retry-After)",
        "RSS MB",
        "runtime cores",
        "runtime CPU wait",
        "runtime CPU ms/served",
        "in flight / queued",
        "GC gen 0/1/2 % of time",
        "upstream cores",
        "client cores",
    ]
    shed_ok = all(status in SHED_STATUSES and retry == n for status, (n, retry) in non_2xx.items())
    verdicts = [
        _verdict("client timeouts", overload.timeouts == 0, f"{overload.timeouts}, target 0"),
        _verdict(
            "every non-2xx is 429/503 with Retry-After",
            shed_ok and not overload.errors,
            shed_text + (f"; socket errors {overload.errors}" if overload.errors else ""),
        ),
        _verdict(
            "served throughput",
            ratio >= SERVED_OVER_CPU_TARGET,
            f"{ratio:.2f}x the CPU-bound rate ({rate:,.0f} req/s, (a) before and after), "
            f"target >= {SERVED_OVER_CPU_TARGET}x",
        ),
        _verdict(
            "RSS growth",
            rss_after - rss_before <= RSS_GROWTH_TARGET_MB,
            f"{rss_after - rss_before:+.1f} MB, target <= {RSS_GROWTH_TARGET_MB:g} MB",
        ),
        _verdict(
            "p99 of the served",
            p99 <= P99_OVER_UPSTREAM_TARGET * UPSTREAM_SECONDS * 1000,
            f"{p99 / (UPSTREAM_SECONDS * 1000):.2f}x the upstream's {UPSTREAM_SECONDS:g} s, "
            f"target <= {P99_OVER_UPSTREAM_TARGET:g}x",
        ),
        "runtime CPU ms/served: all the runtime's CPU (shed requests included) over the "
        "requests it served; cores: CPU seconds per second of the run; CPU wait: seconds per "
        "second its threads were runnable but had no CPU (/proc schedstat); in flight / "
        "queued: means of /ready's admission, sampled once a second; GC: the share of the run "
        "the runtime spent in collections of each generation",
        "(b) in flight/queued, sampled: "
        + " ".join(f"{n}/{q}" for n, q in zip(usage.in_flight, usage.queued, strict=True)),
    ]
    title = (
        f"POST /v1/chat/completions, default policy, admission at its defaults; (b) "
        f"{overload.seconds:g} s, 10 s client timeout, Retry-After not honoured"
    )
    return table(title, header, rows), verdicts


def _cpu(outcome: Outcome, usage: Usage) -> list[str]:
    served, seconds = outcome.served or 1, outcome.seconds

    def mean(values: list[int]) -> str:
        return f"{statistics.mean(values):.0f}" if values else "-"

    return [
        f"{usage.runtime_cpu_s / seconds:.2f}",
        f"{usage.runtime_wait_s / seconds:.2f}",
        f"{usage.runtime_cpu_s / served * 1000:.2f}",
        f"{mean(usage.in_flight)} / {mean(usage.queued)}",
        " / ".join(f"{sum(usage.gc.get(g, [])) / seconds / 10:.1f}" for g in (0, 1, 2)),
        f"{usage.upstream_cpu_s / seconds:.2f}",
        f"{outcome.cpu_seconds / seconds:.2f}",
    ]


@dataclass
class Usage:
    """What the runtime and its upstream did during one load run."""

    runtime_cpu_s: float
    upstream_cpu_s: float
    runtime_wait_s: float  # the runtime's threads runnable but waiting for a CPU
    gc: dict[int, list[float]] = field(default_factory=dict)  # generation -> pauses (ms)
    # /ready's admission about once a second (a /ready waits its turn in a busy event loop
    # too; the first samples fall before the client process has started its connections).
    in_flight: list[int] = field(default_factory=list)
    queued: list[int] = field(default_factory=list)


def measured(
    server: http_load.Server, connections: int, seconds: float, root: Path
) -> tuple[Outcome, Usage]:
    """One load run, the CPU the runtime and its upstream spent meanwhile, and the runtime's
    turns in flight and queued sampled from /ready."""
    assert server.upstream is not None
    pids = (server.process.pid, server.upstream.process.pid)
    before = [http_load.cpu_seconds(pid) for pid in pids]
    wait_before = http_load.run_queue_wait_seconds(pids[0])
    usage = Usage(0.0, 0.0, 0.0)
    client = run_client(server, connections, seconds, root)
    started = time.monotonic()
    time.sleep(1.0)
    began = started
    while client.process.poll() is None and time.monotonic() - started < seconds - 0.5:
        admission = httpx.get(f"{server.base_url}/ready", timeout=10).json()["admission"]
        usage.in_flight.append(admission["inFlight"])
        usage.queued.append(admission["queued"])
        time.sleep(1.0)
    outcome = client.finish()
    after = [http_load.cpu_seconds(pid) for pid in pids]
    usage.runtime_cpu_s, usage.upstream_cpu_s = after[0] - before[0], after[1] - before[1]
    usage.runtime_wait_s = http_load.run_queue_wait_seconds(pids[0]) - wait_before
    usage.gc = server.collections(began, time.monotonic())
    return outcome, usage


def soak(server: http_load.Server, connections: int, seconds: float, root: Path) -> list[str]:
    """The overload held ``seconds``, RSS sampled meanwhile; then how fast latency recovers."""
    idle = idle_ms(server)
    samples: list[tuple[float, float]] = []
    client = run_client(server, connections, seconds, root)
    started = time.monotonic()
    while client.process.poll() is None and time.monotonic() - started < seconds:
        samples.append((time.monotonic() - started, rss_mb(server.process.pid)))
        time.sleep(RSS_SAMPLE_SECONDS)
    stopped = started + seconds
    time.sleep(max(0.0, stopped - time.monotonic()))
    probes: list[tuple[float, int, float]] = []
    probing = threading.Thread(target=_probe, args=(server, stopped, probes), daemon=True)
    probing.start()
    outcome = client.finish()
    probing.join()
    back = next(
        (at for at, status, ms in probes if status == 200 and ms <= idle * IDLE_TOLERANCE), None
    )
    rss = [mb for _, mb in samples]
    half = len(rss) // 2
    lines = [
        f"soak: {connections} connections for {seconds:g} s: served {outcome.served_rps:,.0f} "
        f"req/s, p50 {outcome.percentile(50):.0f} ms, p99 {outcome.percentile(99):.0f} ms, "
        f"client timeouts {outcome.timeouts}, non-2xx {outcome.non_2xx()}",
        "soak RSS MB every 5 s: " + " ".join(f"{mb:.0f}" for mb in rss),
        f"soak RSS: first half max {max(rss[:half] or rss):.1f} MB, second half max "
        f"{max(rss[half:] or rss):.1f} MB, growth over the second half "
        f"{(rss[-1] - rss[half]) if rss[half:] else 0:+.1f} MB",
        f"idle latency before: {idle:.0f} ms; after the load stopped: "
        + " ".join(f"{at:.1f}s:{status}/{ms:.0f}" for at, status, ms in probes[:12]),
        _verdict(
            "latency back to idle",
            back is not None,
            f"first request within {IDLE_TOLERANCE:g}x idle at {back:.1f} s after the load stopped"
            if back is not None
            else f"not within {RECOVERY_PROBE_SECONDS:g} s",
        ),
    ]
    return lines


def _probe(server: http_load.Server, stopped: float, found: list[tuple[float, int, float]]) -> None:
    while time.monotonic() - stopped < RECOVERY_PROBE_SECONDS:
        status, ms = one_request_ms(server)
        found.append((time.monotonic() - stopped, status, ms))


def run(
    quick: bool = False,
    *,
    seconds: float = 20.0,
    connections: int = 800,
    soak_seconds: float | None = None,
) -> str:
    if quick:
        seconds = min(seconds, 8.0)
    lines = [
        f"runtime at {http_load.measured_commit()}; 2 CPUs shared by the runtime, its upstream "
        f"and the client (and other work on this machine); load average before: "
        f"{http_load.load_average()}",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with servers(root) as running:
            fast, slow = running["fast"], running["slow"]
            lines += [f"check: {check(fast)}", f"check: {check(slow)}"]
            load(fast, BASELINE_CONNECTIONS, WARMUP_SECONDS, root)
            baseline, usage_a = measured(fast, BASELINE_CONNECTIONS, BASELINE_SECONDS, root)
            load(slow, BASELINE_CONNECTIONS, WARMUP_SECONDS, root)
            rss_before = rss_mb(slow.process.pid)
            overload, usage_b = measured(slow, connections, seconds, root)
            rss_after = rss_mb(slow.process.pid)
            after = measured(fast, BASELINE_CONNECTIONS, BASELINE_SECONDS, root)
            text, verdicts = overload_report(
                [(baseline, usage_a), after],
                overload,
                connections=connections,
                rss=(rss_before, rss_after),
                usage=usage_b,
            )
            lines += ["", text, *verdicts]
            if soak_seconds:
                lines += ["", *soak(slow, connections, soak_seconds, root)]
    lines.append(f"load average after: {http_load.load_average()}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["client"]:
        url, connections, seconds, timeout, out = argv[1:]
        client_main(url, int(connections), float(seconds), float(timeout), Path(out))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="8 s of overload")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of overload (20)")
    parser.add_argument("--connections", type=int, default=800, help="overload clients (800)")
    parser.add_argument("--soak", type=float, default=None, metavar="SECONDS", help="e.g. 180")
    args = parser.parse_args(argv)
    print(
        run(
            quick=args.quick,
            seconds=args.seconds,
            connections=args.connections,
            soak_seconds=args.soak,
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
