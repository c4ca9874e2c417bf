"""What OpenTelemetry tracing costs the chat hot path: req/s with tracing off, on with 10 %
of new traces sampled, and on with all of them, against the same upstream, in one run.

``python bench/tracing_cost.py [--seconds 4] [--runs 3]``, or ``python bench/run.py --only
tracing_cost``.

Reuses ``http_load``'s pieces: the echo upstream (a bare ASGI app, so the fake model is never
the bottleneck), ``sentinel serve`` processes with the shipped default policy, ``wrk`` with
the same request (``POST /v1/chat/completions``, one short user message, no index, not
streamed) and the same CPU accounting. Three Sentinels share the upstream:

* ``off``: no ``OTEL_*`` variable, so no tracer (the no-op path: one check per stage);
* ``10 %``: ``OTEL_TRACES_SAMPLER=parentbased_traceidratio``, ``OTEL_TRACES_SAMPLER_ARG=0.1``;
* ``100 %``: ``OTEL_TRACES_SAMPLER=always_on``;

the two traced ones export over OTLP/HTTP (the SDK's batch processor, default settings) to a
real receiver in this process (``tests/support/otlp_receiver.py``: decodes every request, as
a collector would). Servers alternate, ``--runs`` runs of ``--seconds`` each, at 1 connection
and at 32; each server is checked first with one request (200 and the upstream's answer; for
the traced ones, that its request id is a trace id). ``spans/req`` is what the receiver got
per request a server answered: about 10 at 100 % (a server span, the stage spans, the model
call and the scanners), about 1 at 10 %; counted over the whole run, both levels, by each
server's ``OTEL_SERVICE_NAME``. Fewer means the batch processor's queue (2,048 spans) overflowed and
dropped spans, which is the SDK's designed behaviour under a load it cannot export.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import httpx  # noqa: E402

import http_load  # noqa: E402  (puts tests/ on the path too)
from stats import table  # noqa: E402
from support.otlp_receiver import OtlpReceiver  # noqa: E402
from support.runtime import start_runtime, stop_process  # noqa: E402

EXPORT_SETTLE_SECONDS = 7.0  # beyond the batch processor's 5 s schedule delay
SAMPLING = {
    "off": None,
    "10 %": ("parentbased_traceidratio", "0.1"),
    "100 %": ("always_on", ""),
}


def _start(root: Path, name: str, upstream: http_load.Server, receiver: OtlpReceiver):
    directory = root / service_name(name)
    directory.mkdir()
    env = {
        "LLM_INFERENCE_URL": f"{upstream.base_url}/v1/chat/completions",
        "LLM_MODEL": http_load.MODEL,
        "OUTPUT_GUARDRAILS_ENABLED": "true",
        "LOG_LEVEL": "WARNING",
    }
    sampling = SAMPLING[name]
    if sampling is not None:
        sampler, argument = sampling
        env |= {
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
            "OTEL_TRACES_SAMPLER": sampler,
            "OTEL_SERVICE_NAME": service_name(name),
        }
        if argument:
            env["OTEL_TRACES_SAMPLER_ARG"] = argument
    runtime = start_runtime(directory, env)
    return http_load.Server(name, runtime.process, runtime.base_url, runtime.log_path, upstream)


def check(server: http_load.Server) -> str:
    response = httpx.post(server.url, json=http_load.REQUEST_BODY, timeout=30)
    response.raise_for_status()
    body = response.json()
    if body["choices"][0]["message"]["content"] != http_load.ANSWER:
        raise RuntimeError(f"{server.name}: unexpected answer {body!r}")
    request_id = body["sentinel"]["requestId"]
    traced = len(request_id) == 32 and not request_id.startswith("req-")
    if traced != (SAMPLING[server.name] is not None):
        raise RuntimeError(f"{server.name}: request id {request_id!r}")
    return f"{server.name}: 200, the upstream's answer, requestId {request_id}"


@contextmanager
def servers(root: Path, receiver: OtlpReceiver) -> Iterator[dict[str, http_load.Server]]:
    with ExitStack() as stack:
        started: list[http_load.Server] = []
        stack.callback(lambda: [stop_process(s.process) for s in reversed(started)])
        upstream = http_load._start_echo(root, "upstream")
        started.append(upstream)
        for name in SAMPLING:
            started.append(_start(root, name, upstream, receiver))
        yield {s.name: s for s in started if s.name != "upstream"}


def run(quick: bool = False, *, seconds: float = 4.0, runs: int = 3) -> str:
    if quick:
        seconds = min(seconds, 2.0)
    wrk = http_load.find_wrk()
    lines = [
        f"runtime at {http_load.measured_commit()}; {os.cpu_count()} CPUs shared by wrk, the "
        f"server, its upstream and the receiver; load average before: {http_load.load_average()}",
        f"servers: {http_load.versions()}; {http_load._installed('opentelemetry-sdk')}",
    ]
    receiver = OtlpReceiver().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            script = http_load.write_wrk_script(root / "chat.lua")
            with servers(root, receiver) as running:
                lines += [f"check: {check(server)}" for server in running.values()]
                lines += ["", _measure(wrk, script, running, receiver, seconds=seconds, runs=runs)]
    finally:
        receiver.stop()
    lines.append(f"load average after: {http_load.load_average()}")
    return "\n".join(lines)


def service_name(name: str) -> str:
    return "sentinel-" + name.replace(" %", "pct")


def spans_of(receiver: OtlpReceiver, name: str) -> int:
    return sum(
        1 for s in list(receiver.spans) if s.resource.get("service.name") == service_name(name)
    )


def _measure(
    wrk: Path,
    script: Path,
    running: dict[str, http_load.Server],
    receiver: OtlpReceiver,
    *,
    seconds: float,
    runs: int,
) -> str:
    rows: list[list[str]] = []
    levels: dict[int, dict[str, http_load.Series]] = {}
    sent = dict.fromkeys(running, 1)  # the check's request
    for connections, threads in http_load.CONNECTION_LEVELS:
        level = functools.partial(
            http_load.run_wrk, wrk, script, connections=connections, threads=threads
        )
        for name, server in running.items():
            sent[name] += level(server, seconds=http_load.WARMUP_SECONDS).requests
        series = levels[connections] = {name: http_load.Series() for name in running}
        for _ in range(runs):  # alternated, so drift on the shared machine hits all alike
            for name, server in running.items():
                series[name].runs.append(level(server, seconds=seconds))
                sent[name] += series[name].runs[-1].requests
    time.sleep(EXPORT_SETTLE_SECONDS)  # the batch processors export what they still hold
    for connections, threads in http_load.CONNECTION_LEVELS:
        series = levels[connections]
        off = series["off"].rps
        for name, got in series.items():
            cpu = got.cpu_ms("server_cpu_s")
            received = spans_of(receiver, name) / sent[name] if SAMPLING[name] else 0.0
            rows.append(
                [
                    f"{connections} ({threads} thr)",
                    name,
                    f"{got.rps:,.0f}",
                    " / ".join(f"{r.rps:,.0f}" for r in got.runs),
                    http_load._ratio(got.rps, off),
                    f"{got.med(lambda r: r.ms(50.0)):.2f}",
                    f"{got.med(lambda r: r.ms(99.0)):.2f}",
                    f"{cpu:.3f}",
                    http_load._ratio(series["off"].cpu_ms("server_cpu_s"), cpu),
                    f"{received:.2f}",
                    f"{statistics.median(r.other_cores for r in got.runs):.2f}",
                    http_load.describe_failures(got.runs),
                ]
            )
    header = [
        "connections",
        "tracing",
        "req/s (median)",
        "req/s per run",
        "of off",
        "wrk p50 ms",
        "wrk p99 ms",
        "server CPU ms/req",
        "off CPU / this CPU",
        "spans/req received (whole run)",
        "others' cores",
        "failed",
    ]
    title = (
        f"POST /v1/chat/completions, default policy, no index, not streamed: {runs} "
        f"alternating runs of {seconds:g} s per server (wrk)"
    )
    return table(title, header, rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 s runs")
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds per run (4)")
    parser.add_argument("--runs", type=int, default=3, help="runs per server and level (3)")
    args = parser.parse_args(argv)
    print(run(quick=args.quick, seconds=args.seconds, runs=args.runs), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
