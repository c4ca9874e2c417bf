"""``llm_guard`` scanner: one of llm-guard's model-based output scanners (optional extra).

``pip install '.[llm-guard]'`` provides the package; nothing here imports it until a policy
names such a scanner, so the core never pays for torch. Example::

    - type: llm_guard
      scanner: Toxicity
      params: {threshold: 0.7}

Scanners that judge the output against the prompt are refused: the output scanner
contract sees only the assistant text.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any

from pydantic import Field, field_validator

from sentinel_runtime.guardrails.scanners.base import ScannerParams, ScannerType, ScanResult

PROMPT_DEPENDENT = frozenset({"Relevance", "FactualConsistency", "LanguageSame"})


class LlmGuardParams(ScannerParams):
    scanner: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("scanner")
    @classmethod
    def _known_shape(cls, name: str) -> str:
        if not name.isidentifier():
            raise ValueError(f"scanner {name!r} is not an llm-guard class name")
        if name in PROMPT_DEPENDENT:
            raise ValueError(f"llm-guard {name} compares output with the prompt; not supported")
        return name


@dataclass(frozen=True)
class LlmGuardScanner:
    delegate: Any
    rewrite: bool

    def scan(self, text: str) -> ScanResult:
        sanitized, valid, score = self.delegate.scan("", text)
        if valid:
            return ScanResult.clean(text)
        return ScanResult(sanitized if self.rewrite else text, False, float(score))


def build(params: LlmGuardParams, rewrite: bool) -> LlmGuardScanner:
    try:
        module = importlib.import_module("llm_guard.output_scanners")
    except ImportError as exc:
        raise RuntimeError(
            "llm-guard is not installed: pip install 'sentinel-rag[llm-guard]'"
        ) from exc
    cls = getattr(module, params.scanner, None)
    if cls is None:
        raise RuntimeError(f"llm_guard.output_scanners has no scanner {params.scanner!r}")
    kwargs = dict(params.params)
    if "redact" in inspect.signature(cls).parameters:
        kwargs.setdefault("redact", rewrite)
    return LlmGuardScanner(delegate=cls(**kwargs), rewrite=rewrite)


SCANNER = ScannerType(
    name="llm_guard",
    params=LlmGuardParams,
    build=build,
    summary="an llm-guard output scanner by class name (optional extra)",
)
