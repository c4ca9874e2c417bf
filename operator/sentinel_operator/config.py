"""Operator settings, read once from the environment."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


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

    def operator_namespace(self) -> str:
        if self.OPERATOR_NAMESPACE:
            return self.OPERATOR_NAMESPACE
        if SERVICE_ACCOUNT_NAMESPACE.exists():
            return SERVICE_ACCOUNT_NAMESPACE.read_text(encoding="utf-8").strip()
        raise RuntimeError(
            "OPERATOR_NAMESPACE is not set and no service-account namespace is mounted: "
            "set it to the namespace that holds the policy template"
        )
