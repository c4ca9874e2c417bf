"""Reload under load: steady chat traffic while the policy flips 20 times.

A real ``sentinel serve`` process (built-in generator) answers chat requests from two
client threads; the policy directory is updated the way the kubelet updates a ConfigMap.
For each flip we measure the time from the ``..data`` swap until ``/v1/guardrails/policy``
reports the new hash, and we check every answer was produced under one of the two
policies (redacted or blocked, never the raw text). The baseline is the same traffic
measured in the same run before any flip.
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
import time
from pathlib import Path

import httpx

from stats import median, p99, table
from support.configmap import ConfigMapDir
from support.runtime import start_runtime

REDACT = "scanners:\n  - {type: ban_substrings, action: redact, substrings: [alpha]}\n"
BLOCK = "blockMessage: blocked\n" + REDACT.replace("action: redact", "action: block")
PROMPT = "alpha and beta"
ALLOWED = {"[REDACTED] and beta", "blocked"}


class Load:
    def __init__(self, base_url: str, threads: int = 2) -> None:
        self.base_url = base_url
        self.latencies: list[float] = []
        self.failures = 0
        self.unscanned = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]

    def _run(self) -> None:
        with httpx.Client(timeout=10) as client:
            while not self._stop.is_set():
                started = time.perf_counter()
                try:
                    response = client.post(
                        f"{self.base_url}/v1/chat/completions",
                        json={"messages": [{"role": "user", "content": PROMPT}]},
                    )
                    ok = response.status_code == 200
                    content = response.json()["choices"][0]["message"]["content"] if ok else None
                except (httpx.HTTPError, ValueError, KeyError):
                    ok, content = False, None
                elapsed = (time.perf_counter() - started) * 1000
                with self._lock:
                    self.latencies.append(elapsed)
                    self.failures += not ok
                    self.unscanned += ok and content not in ALLOWED

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=15)


def _active_hash(base_url: str) -> str:
    return httpx.get(f"{base_url}/v1/guardrails/policy", timeout=5).json().get("sha256", "")


def run(flips: int = 20, steady_seconds: float = 3.0) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        configmap = ConfigMapDir(root / "guardrails")
        configmap.write(REDACT)
        runtime = start_runtime(
            root,
            {
                "OUTPUT_GUARDRAILS_ENABLED": "true",
                "OUTPUT_GUARDRAILS_POLICY_PATH": str(configmap.policy_path),
                "LOG_LEVEL": "WARNING",
            },
        )
        try:
            with Load(runtime.base_url) as baseline:
                time.sleep(steady_seconds)
            activation_ms: list[float] = []
            with Load(runtime.base_url) as during:
                for flip in range(flips):
                    content = BLOCK if flip % 2 == 0 else REDACT
                    wanted = hashlib.sha256(content.encode()).hexdigest()
                    configmap.write(content)
                    swapped = time.perf_counter()
                    while _active_hash(runtime.base_url) != wanted:
                        if time.perf_counter() - swapped > 10:
                            raise RuntimeError(f"flip {flip} never became active")
                        time.sleep(0.01)
                    activation_ms.append((time.perf_counter() - swapped) * 1000)
                    time.sleep(0.2)
        finally:
            runtime.stop()
    rows = [
        [
            "steady (baseline)",
            str(len(baseline.latencies)),
            str(baseline.failures),
            str(baseline.unscanned),
            f"{median(baseline.latencies):.2f}",
            f"{p99(baseline.latencies):.2f}",
            "1.00x",
        ],
        [
            f"{flips} policy flips",
            str(len(during.latencies)),
            str(during.failures),
            str(during.unscanned),
            f"{median(during.latencies):.2f}",
            f"{p99(during.latencies):.2f}",
            f"{median(during.latencies) / median(baseline.latencies):.2f}x",
        ],
    ]
    load_table = table(
        "Chat requests while the policy file flips (2 client threads, built-in generator)",
        ["phase", "requests", "failed", "unscanned", "median ms", "p99 ms", "median vs baseline"],
        rows,
    )
    swap_table = table(
        "Time from ConfigMap ..data swap to new policy active (debounce 1 s; target < 1.5 s)",
        ["flips", "median ms", "p99 ms", "max ms", "max / debounce"],
        [
            [
                str(len(activation_ms)),
                f"{median(activation_ms):.0f}",
                f"{p99(activation_ms):.0f}",
                f"{max(activation_ms):.0f}",
                f"{max(activation_ms) / 1000:.2f}x",
            ]
        ],
    )
    return load_table + "\n\n" + swap_table
