"""CPU per call of each default-policy output scanner on short answers (issue 23's hot path):
``python bench/scanner_answer_cost.py [--quick]``.

For the ``regex`` scanner the joined pre-check (one alternation under one timeout, then the
patterns alone only when it finds something) is measured beside the per-pattern path it
skips (the same scanner with the pre-check removed), in the same run and interleaved round
by round, since the machine is shared. Secrets and sensitive are reported alone; so is the
whole engine (``GuardrailsEngine.scan``, the three scanners in a chain). Each figure is the
median over rounds of ``time.process_time`` per call, in microseconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time
from collections.abc import Callable

from sentinel_runtime.guardrails.engine import build_engine
from sentinel_runtime.guardrails.policy import read_policy_file
from sentinel_runtime.guardrails.state import default_policy_path
from stats import table
from texts import assistant_text

# The answer bench/http_load.py's upstream gives (82 characters of prose), copied: importing
# that module pulls in the CLI and the test servers.
HTTP_LOAD_ANSWER = (
    "The capital of France is Paris, on the Seine; about two million people live there."
)


def cpu_us(calls: dict[str, Callable[[], object]], per_round: int, rounds: int) -> dict[str, float]:
    """Median CPU microseconds per call of each function, the functions taking turns each
    round so drift on a shared machine reaches them alike."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for fn in calls.values():
        for _ in range(max(10, per_round // 10)):
            fn()
    for _ in range(rounds):
        for name, fn in calls.items():
            started = time.process_time()
            for _ in range(per_round):
                fn()
            samples[name].append((time.process_time() - started) / per_round * 1e6)
    return {name: statistics.median(values) for name, values in samples.items()}


def run(quick: bool = False) -> str:
    engine = build_engine(read_policy_file(default_policy_path()), default_policy_path())
    by_type = {active.spec.type: active.scanner for active in engine.scanners}
    regex_scanner = by_type["regex"]
    per_pattern = dataclasses.replace(regex_scanner, joined=None, alone=())
    texts = [
        (f"http_load answer ({len(HTTP_LOAD_ANSWER)} chars)", HTTP_LOAD_ANSWER),
        ("200 B, clean", assistant_text(200, with_findings=False)),
        ("200 B, findings", assistant_text(200, with_findings=True)),
        ("2 KB, clean", assistant_text(2_000, with_findings=False)),
    ]
    rows: list[list[str]] = []
    for label, text in texts:
        assert per_pattern.scan(text) == regex_scanner.scan(text), label
        per_round = max(20, (200 if quick else 2000) * 84 // max(84, len(text)))
        cost = cpu_us(
            {
                "joined": lambda t=text: regex_scanner.scan(t),
                "alone": lambda t=text: per_pattern.scan(t),
                "secrets": lambda t=text: by_type["secrets"].scan(t),
                "sensitive": lambda t=text: by_type["sensitive"].scan(t),
                "engine": lambda t=text: engine.scan(t),
            },
            per_round,
            rounds=5 if quick else 15,
        )
        three = cost["joined"] + cost["secrets"] + cost["sensitive"]
        rows.append(
            [
                label,
                f"{cost['joined']:.2f}",
                f"{cost['alone']:.2f}",
                f"{cost['alone'] / cost['joined']:.1f}x",
                f"{cost['secrets']:.2f}",
                f"{cost['sensitive']:.2f}",
                f"{three:.2f}",
                f"{cost['engine']:.2f}",
            ]
        )
    header = [
        "text",
        "regex us",
        "regex per-pattern us",
        "pre-check speed-up",
        "secrets us",
        "sensitive us",
        "3 scanners us",
        "engine.scan us",
    ]
    title = (
        "Default-policy output scanners, CPU microseconds per call (median of rounds)\n"
        "regex per-pattern = the same scanner without the joined pre-check, same run"
    )
    return table(title, header, rows) + f"\n(host: {os.cpu_count()} cpus)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer calls (smoke run)")
    print(run(quick=parser.parse_args().quick))


if __name__ == "__main__":
    main()
