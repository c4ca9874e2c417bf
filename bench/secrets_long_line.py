"""Secrets scanner cost on one long line against the same text broken into lines.

Until the fix, one candidate line ran every detect-secrets plugin and the allowlist filter
over its whole length, and the pregated regexes scanned it whole whenever it held "key"
once: a 19 KB single line with a secret took 15 ms where the same text in lines took 3.
Both texts hold the same sentences and findings (the single line joins the lines with
spaces), so the ratio single/multi is the cost of line length alone; target: at most
3 ms for 19 KB, and a ratio that stays flat as the length grows (linear cost).
"""

from __future__ import annotations

import os

from sentinel_runtime.guardrails.scanners import secrets as secrets_scanner
from stats import median, table, timings_ms
from texts import assistant_text

SIZES = (2_000, 5_000, 10_000, 19_000, 40_000)
# A default-plugin finding (AWS key) in a sentence that also says "key", which wakes the
# pregated cloud-key detectors.
SECRET_SENTENCE = "The staging key is AKIAIOSFODNN7EXAMPLE and must be rotated."


def texts(size: int, with_findings: bool) -> tuple[str, str]:
    """The same content of ``size`` characters as one line and as many lines."""
    lines = assistant_text(size, with_findings=False).split("\n")
    if with_findings:
        lines.insert(len(lines) // 2, SECRET_SENTENCE)
    multi = "\n".join(lines)[:size]
    return multi.replace("\n", " "), multi


def _iterations(size: int, quick: bool) -> int:
    n = max(30, 4_000_000 // size // 10)
    return max(10, n // 10) if quick else n


def run(quick: bool = False) -> str:
    scanner = secrets_scanner.build(secrets_scanner.SecretsParams(), rewrite=True)
    rows: list[list[str]] = []
    for with_findings in (True, False):
        for size in SIZES:
            single, multi = texts(size, with_findings)
            n = _iterations(size, quick)
            single_ms = median(timings_ms(lambda t=single: scanner.scan(t), n, warmup=5))
            multi_ms = median(timings_ms(lambda t=multi: scanner.scan(t), n, warmup=5))
            findings = len(scanner.engine.find(single))
            rows.append(
                [
                    f"{size} B",
                    "findings" if with_findings else "clean",
                    str(findings),
                    f"{single_ms:.3f}",
                    f"{multi_ms:.3f}",
                    f"{single_ms / multi_ms:.2f}x",
                    f"{single_ms / size * 1000:.3f}",
                ]
            )
    header = [
        "text",
        "content",
        "findings",
        "single line ms",
        "multi-line ms",
        "single/multi",
        "single ms per KB",
    ]
    title = (
        "Secrets scanner (default plugins) on one long line vs the same text in lines\n"
        "target: 19 KB single line with a finding <= 3 ms; single/multi flat across sizes"
    )
    return table(title, header, rows) + f"\n(host: {os.cpu_count()} cpus)"


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer iterations (smoke run)")
    print(run(quick=parser.parse_args().quick))
