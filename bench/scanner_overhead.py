"""Scanner overhead of the default policy per assistant response, against baselines run
in the same process on the same texts:

* ``detect-secrets via temp file``: llm-guard's way of running detect-secrets (write the
  text to a temporary file, scan it under transient settings), with the plugins our
  secrets scanner uses; verdicts must agree with ours.
* ``llm-guard``: its Regex and Secrets scanners with the default policy's settings, when
  the ``llm-guard`` extra is installed (skipped otherwise, and said so).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

from sentinel_runtime.guardrails.engine import build_engine
from sentinel_runtime.guardrails.policy import read_policy_file
from sentinel_runtime.guardrails.scanners import secrets as secrets_scanner
from sentinel_runtime.guardrails.state import default_policy_path
from stats import median, p99, table, timings_ms
from texts import assistant_text

SIZES = (200, 2_000, 20_000)
PLANTED_SECRETS = ("AKIAIOSFODNN7EXAMPLE",)


def _iterations(size: int, quick: bool) -> int:
    base = {200: 2000, 2_000: 1000, 20_000: 150}[size]
    return max(20, base // 10) if quick else base


def _tempfile_detect_secrets(plugin_names: tuple[str, ...]):
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import transient_settings

    plugins = [{"name": name} for name in plugin_names]

    def scan(text: str) -> set[tuple[str, str]]:
        handle = tempfile.NamedTemporaryFile("w", delete=False)  # noqa: SIM115
        try:
            handle.write(text)
            handle.close()
            collection = SecretsCollection()
            with transient_settings({"plugins_used": plugins}):
                collection.scan_file(handle.name)
            return {
                (secret.type, secret.secret_value or "")
                for secrets in collection.data.values()
                for secret in secrets
            }
        finally:
            os.unlink(handle.name)

    return scan


def _llm_guard_scanners(patterns: list[str]):
    if importlib.util.find_spec("llm_guard") is None:
        return None
    from llm_guard.input_scanners import Secrets
    from llm_guard.output_scanners import Regex
    from llm_guard.util import configure_logger

    configure_logger("ERROR", stream=sys.stderr)  # its per-scan log lines would flood the table

    regex = Regex(patterns=patterns, is_blocked=True, redact=True)
    secrets = Secrets(redact_mode="partial")
    # llm-guard registers its own plugins in detect-secrets' process-wide plugin registry;
    # it must do so before anything else fills that registry's cache.
    secrets.scan("warm-up")

    def scan(text: str) -> tuple[bool, str]:
        redacted, regex_valid, _ = regex.scan("", text)
        sanitized, secrets_valid, _ = secrets.scan(redacted)
        return regex_valid and secrets_valid, sanitized

    return scan


def run(quick: bool = False) -> str:
    policy = read_policy_file(default_policy_path())
    regex_spec = policy.scanners[0]
    llm_guard = _llm_guard_scanners(list(regex_spec.params.patterns))
    engine = build_engine(policy, default_policy_path())
    ours_secrets = secrets_scanner.engine()
    baseline_secrets = _tempfile_detect_secrets(ours_secrets.plugin_names)
    rows: list[list[str]] = []
    for size in SIZES:
        for with_findings in (False, True):
            text = assistant_text(size, with_findings=with_findings)
            n = _iterations(size, quick)
            ours = timings_ms(lambda t=text: engine.scan(t), n)
            ours_find = {(f.secret_type, f.value) for f in ours_secrets.find(text)}
            base_n = max(10, n // 20)
            base = timings_ms(lambda t=text: baseline_secrets(t), base_n, warmup=3)
            agree = "yes" if ours_find == baseline_secrets(text) else "NO"
            row = [
                f"{size} B",
                "findings" if with_findings else "clean",
                f"{median(ours):.3f}",
                f"{p99(ours):.3f}",
                f"{median(base):.3f}",
                f"{median(base) / median(ours):.1f}x",
                agree,
            ]
            if llm_guard is not None:
                lg = timings_ms(lambda t=text: llm_guard(t), base_n, warmup=3)
                outcome = engine.scan(text)
                ours_flagged = bool({"regex", "secrets"} & {h.type for h in outcome.hits})
                lg_valid, lg_text = llm_guard(text)
                same = ours_flagged == (not lg_valid)
                left = [f for f in PLANTED_SECRETS if f in lg_text]
                row += [
                    f"{median(lg):.3f}",
                    f"{median(lg) / median(ours):.1f}x",
                    "yes" if same else "NO",
                    ", ".join(left) or "none",
                ]
            rows.append(row)
    header = [
        "text",
        "content",
        "ours median ms",
        "ours p99 ms",
        "ds tempfile ms",
        "speed-up",
        "same secrets",
    ]
    if llm_guard is not None:
        header += ["llm-guard ms", "vs llm-guard", "same verdict", "llm-guard leaves"]
    note = (
        "llm-guard: not installed (pip install '.[llm-guard]' to add it side by side)"
        if llm_guard is None
        else "llm-guard: Regex + Secrets output scanners with the default policy's settings"
    )
    title = (
        "Output guardrails overhead per response, default policy (regex + secrets + sensitive)\n"
        "ours = whole default policy; ds tempfile = detect-secrets via a temporary file alone\n"
        + note
    )
    return table(title, header, rows) + f"\n(host: {os.cpu_count()} cpus; {Path.cwd()})"
