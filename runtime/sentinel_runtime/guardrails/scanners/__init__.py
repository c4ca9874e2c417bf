"""The scanner registry: policy ``type`` name -> :class:`ScannerType`, one entry per module.

Importing this package imports the core scanner modules but none of their heavy optional
backends (detect-secrets loads when a secrets scanner is built, llm-guard when named).
"""

from __future__ import annotations

from sentinel_runtime.guardrails.scanners import (
    ban_substrings,
    invisible_text,
    json,
    llm_guard,
    reading_time,
    regex,
    secrets,
    sensitive,
    token_limit,
)
from sentinel_runtime.guardrails.scanners.base import ScannerType

REGISTRY: dict[str, ScannerType] = {
    module.SCANNER.name: module.SCANNER
    for module in (
        regex,
        ban_substrings,
        json,
        reading_time,
        secrets,
        sensitive,
        invisible_text,
        token_limit,
        llm_guard,
    )
}

# The eight types of the output-guardrails contract (docs/contracts.md); llm_guard is our
# optional addition.
SEED_TYPES: tuple[str, ...] = (
    "regex",
    "ban_substrings",
    "json",
    "reading_time",
    "secrets",
    "sensitive",
    "invisible_text",
    "token_limit",
)
