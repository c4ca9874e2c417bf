"""Services built once per process in the app's lifespan and kept on ``app.state``."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from sentinel_runtime.demo import corpus
from sentinel_runtime.guardrails.policy import Diagnostic, Policy
from sentinel_runtime.guardrails.reloader import GuardrailsReloader
from sentinel_runtime.guardrails.state import GuardrailsState
from sentinel_runtime.index import backends as index_backends
from sentinel_runtime.index.embedders import build_embedder
from sentinel_runtime.index.manager import IndexManager
from sentinel_runtime.llm.embedded import DeltaStream, EmbeddedGenerator
from sentinel_runtime.llm.upstream import UpstreamGenerator
from sentinel_runtime.observability import events
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.pipeline import config as pipeline_config
from sentinel_runtime.pipeline import runner
from sentinel_runtime.pipeline.audit import AuditLog
from sentinel_runtime.settings import Settings

logger = logging.getLogger(__name__)


class Generator(Protocol):
    default_model: str

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]: ...
    def stream(self, body: dict[str, Any]) -> DeltaStream: ...
    async def models(self) -> dict[str, Any]: ...
    async def aclose(self) -> None: ...


@dataclass
class Services:
    settings: Settings
    guardrails: GuardrailsState
    generator: Generator
    indexes: IndexManager
    audit: AuditLog
    reloader: GuardrailsReloader | None = None

    @property
    def chat(self) -> runner.ChatFn | None:
        """The upstream LLM for the pipeline; None: the built-in generators."""
        generator = self.generator
        return generator.texts if isinstance(generator, UpstreamGenerator) else None

    async def aclose(self) -> None:
        if self.reloader is not None:
            self.reloader.stop()
        await self.generator.aclose()
        self.indexes.close()
        self.indexes.embedder.close()


def _generator(settings: Settings) -> Generator:
    if not settings.LLM_INFERENCE_URL:
        return EmbeddedGenerator()
    return UpstreamGenerator(
        chat_url=settings.chat_completions_url(),
        access_secret=settings.LLM_ACCESS_SECRET,
        model=settings.LLM_MODEL,
        timeout=settings.LLM_TIMEOUT_SECONDS,
    )


def _reloader(settings: Settings, state: GuardrailsState) -> GuardrailsReloader | None:
    reason = None
    if not settings.OUTPUT_GUARDRAILS_ENABLED:
        reason = "guardrails disabled"
    elif not settings.OUTPUT_GUARDRAILS_HOT_RELOAD_ENABLED:
        reason = "OUTPUT_GUARDRAILS_HOT_RELOAD_ENABLED is false"
    elif not settings.OUTPUT_GUARDRAILS_POLICY_PATH:
        reason = "no policy path: the shipped default policy is in use"
    if reason is not None:
        log_event(logger, events.HOT_RELOAD_DISABLED, reason=reason)
        return None
    reloader = GuardrailsReloader(state)
    reloader.start()
    return reloader


def _indexes(settings: Settings) -> IndexManager:
    # Opens the store VECTOR_DB_TYPE names (embedded files or a shared Milvus) and loads or
    # checks every index now: one this embedder cannot read, or no Milvus, stops the start.
    return IndexManager(
        build_embedder(settings),
        settings.persist_dir(),
        backend=index_backends.from_settings(settings),
    )


def _audit(settings: Settings) -> AuditLog:
    persist_dir = settings.persist_dir()
    return AuditLog(persist_dir / "audit" if persist_dir else None)


def _judge_sections(policy: Policy) -> tuple[Diagnostic, ...]:
    return pipeline_config.for_policy(policy).diagnostics


def build_services(settings: Settings) -> Services:
    state = GuardrailsState(
        enabled=settings.OUTPUT_GUARDRAILS_ENABLED,
        path=settings.OUTPUT_GUARDRAILS_POLICY_PATH,
        judge_sections=_judge_sections,
    )
    state.load_initial()
    runner.warm_up(pipeline_config.for_policy(state.engine.policy if state.engine else None))
    indexes = _indexes(settings)
    if settings.DEMO_CORPUS:
        corpus.load_demo(indexes)
    return Services(
        settings=settings,
        guardrails=state,
        generator=_generator(settings),
        indexes=indexes,
        audit=_audit(settings),
        reloader=_reloader(settings, state),
    )
