"""Operator settings, read once from the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


# The operator's own OTel variables that the runtimes it creates inherit (docs/tracing.md):
# every OTEL_* but the service name (each side has its own) and the exporter headers (they
# often hold a vendor's API key, which would then sit in plain text in every Deployment: send
# to a collector in the cluster, which holds the key), and the runtime's capture setting.
TRACING_NOT_INHERITED = frozenset(
    {
        "OTEL_SERVICE_NAME",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    }
)
TRACING_INHERITED_SETTINGS = ("SENTINEL_TRACE_CAPTURE_CONTENT",)


def runtime_tracing_env(environ: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """The tracing variables of the operator's environment that its runtimes inherit."""
    env = os.environ if environ is None else environ
    return tuple(
        sorted(
            (name, value)
            for name, value in env.items()
            if (name.startswith("OTEL_") and name not in TRACING_NOT_INHERITED)
            or name in TRACING_INHERITED_SETTINGS
        )
    )


class OperatorSettings(BaseSettings):
    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore", frozen=True)

    OPERATOR_NAMESPACE: str = Field(
        default="",
        description="Namespace holding the policy template; in a pod, its own namespace.",
    )
    RUNTIME_IMAGE: str = Field(
        default="ghcr.io/sentinel-rag/sentinel:0.1.0",
        description="Runtime image for engines whose spec sets none.",
    )
    RESYNC_SECONDS: float = Field(
        default=60.0,
        gt=0,
        description="How often engines waiting on what no watch reports (a missing "
        "accessSecret or policy template, a repair that failed) are reconciled again; drift "
        "of owned objects is repaired at once by watching them.",
    )

    def runtime_tracing_env(self) -> tuple[tuple[str, str], ...]:
        """Read at each call: the operator's environment does not change while it runs."""
        return runtime_tracing_env()

    def operator_namespace(self) -> str:
        if self.OPERATOR_NAMESPACE:
            return self.OPERATOR_NAMESPACE
        if SERVICE_ACCOUNT_NAMESPACE.exists():
            return SERVICE_ACCOUNT_NAMESPACE.read_text(encoding="utf-8").strip()
        raise RuntimeError(
            "OPERATOR_NAMESPACE is not set and no service-account namespace is mounted: "
            "set it to the namespace that holds the policy template"
        )
