"""Services built once per process in the app's lifespan and kept on ``app.state``."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sentinel_runtime.answer.admission import AdmissionController
from sentinel_runtime.answer.context_window import ContextWindow
from sentinel_runtime.demo import corpus
from sentinel_runtime.governance import rulebase as governance_rulebase
from sentinel_runtime.governance.service import Governance, RulebaseSnapshot
from sentinel_runtime.guard import config as guard_config
from sentinel_runtime.guard.judge import GuardRegistry
from sentinel_runtime.guardrails.policy import Diagnostic, Policy
from sentinel_runtime.guardrails.reloader import FileReloader
from sentinel_runtime.guardrails.state import GuardrailsState
from sentinel_runtime.index import backends as index_backends
from sentinel_runtime.index.embedders import build_embedder
from sentinel_runtime.index.manager import IndexManager
from sentinel_runtime.llm.calls import GenerateFn
from sentinel_runtime.llm.echo import EchoGenerator
from sentinel_runtime.llm.streams import DeltaStream
from sentinel_runtime.llm.upstream import UpstreamGenerator
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.pipeline import config as pipeline_config
from sentinel_runtime.pipeline import runner
from sentinel_runtime.pipeline.audit import AuditLog
from sentinel_runtime.pipeline.evidence.screen import EvidenceScreen
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
    governance: Governance
    admission: AdmissionController
    reloader: FileReloader | None = None
    guards: GuardRegistry = field(default_factory=lambda: GuardRegistry(""))
    # The guard section's keys the environment sets (GUARD_*), under each policy's own.
    guard_defaults: dict[str, Any] = field(default_factory=dict)
    # The upstream model's context window (LLM_CONTEXT_WINDOW, else its /v1/models).
    window: ContextWindow = field(init=False)

    def __post_init__(self) -> None:
        upstream = self.generator if isinstance(self.generator, UpstreamGenerator) else None
        self.window = ContextWindow(
            self.settings.LLM_CONTEXT_WINDOW, upstream, self.settings.LLM_MODEL
        )

    @property
    def chat(self) -> runner.ChatFn | None:
        """The upstream LLM for LLM introspection; None: the built-in judge."""
        generator = self.generator
        return generator.texts if isinstance(generator, UpstreamGenerator) else None

    @property
    def generate(self) -> GenerateFn | None:
        """The upstream LLM for grounded answers; None: the built-in extractive generator."""
        generator = self.generator
        return generator.generate if isinstance(generator, UpstreamGenerator) else None

    async def aclose(self) -> None:
        if self.reloader is not None:
            self.reloader.stop()
        await self.generator.aclose()
        await self.governance.aclose()
        await self.guards.aclose()
        self.indexes.close()
        self.indexes.embedder.close()


def _generator(settings: Settings) -> Generator:
    if not settings.LLM_INFERENCE_URL:
        return EchoGenerator()
    return UpstreamGenerator(
        chat_url=settings.chat_completions_url(),
        access_secret=settings.LLM_ACCESS_SECRET,
        model=settings.LLM_MODEL,
        timeout=settings.LLM_TIMEOUT_SECONDS,
        max_connections=settings.upstream_connections(),
    )


def _reloader(settings: Settings, state: GuardrailsState) -> FileReloader | None:
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
    reloader = FileReloader(state)
    reloader.start()
    return reloader


def _indexes(settings: Settings) -> IndexManager:
    # Opens the store VECTOR_DB_TYPE names (embedded files or a shared Milvus) and loads or
    # checks every index now: one this embedder cannot read, or no Milvus, stops the start.
    return IndexManager(
        build_embedder(settings),
        settings.persist_dir(),
        backend=index_backends.from_settings(settings),
        screen=EvidenceScreen(),
    )


def _audit(settings: Settings) -> AuditLog:
    persist_dir = settings.persist_dir()
    return AuditLog(persist_dir / "audit" if persist_dir else None)


def _judge_sections(policy: Policy) -> tuple[Diagnostic, ...]:
    # Parse the tools section now too (cached per policy hash), so the swap only picks it up.
    # A bad one is reported when this policy version becomes active.
    with contextlib.suppress(governance_rulebase.RulebaseError):
        governance_rulebase.for_policy(policy, policy.source)
    parsed = pipeline_config.for_policy(policy)
    runner.warm_examples(parsed)  # embedded before the swap, not on the next turn
    return parsed.diagnostics


def follow_policy(governance: Governance, path: str) -> Callable[[Policy], RulebaseSnapshot]:
    """The hook that loads each activated policy version's rulebase into ``governance`` as
    the scanners swap, and returns what is then in force (swapped in with the engine); a bad
    tools section keeps the previous rulebase and is logged and counted once per version."""

    def follow(policy: Policy) -> RulebaseSnapshot:
        load(policy)
        return governance.snapshot()

    def load(policy: Policy) -> None:
        previous = governance.policy_hash or None
        try:
            rulebase = governance.load(policy, policy.source)
        except Exception:  # a parser bug must not stop the reloader: keep what is active
            log_event(
                logger,
                events.GOVERNANCE_RULEBASE_INVALID,
                logging.ERROR,
                exc_info=True,
                path=path,
                policy_hash=policy.sha256,
                active_policy_hash=previous,
                fallback_action="keep_previous_rulebase",
            )
            metrics.GOVERNANCE_RULEBASE_LOADS.labels("invalid").inc()
            return
        error = governance.error
        if error is not None:
            metrics.GOVERNANCE_RULEBASE_LOADS.labels("invalid").inc()
            metrics.GOVERNANCE_RULEBASE_REJECTED.set(1)
            log_event(
                logger,
                events.GOVERNANCE_RULEBASE_INVALID,
                logging.ERROR,
                path=path,
                policy_hash=policy.sha256,
                active_policy_hash=previous,
                fallback_action="keep_previous_rulebase" if rulebase else "no_rulebase",
                problems=[str(issue) for issue in error.issues],
                line=error.line,
                column=error.column,
            )
            return
        metrics.GOVERNANCE_RULEBASE_REJECTED.set(0)
        metrics.GOVERNANCE_RULEBASE_LOADS.labels("success" if rulebase else "none").inc()
        if rulebase is not None:
            log_event(
                logger,
                events.GOVERNANCE_RULEBASE_LOADED,
                path=path,
                policy_hash=policy.sha256,
                rulebase_id=rulebase.id,
                strict=rulebase.strict,
                tools=sorted(rulebase.functions),
                contexts=sorted(rulebase.contexts),
            )

    return follow


def build_services(settings: Settings) -> Services:
    # Sessions exist once the application opens them (POST /v1/governance/sessions).
    governance = Governance(create_sessions=False)
    state = GuardrailsState(
        enabled=settings.OUTPUT_GUARDRAILS_ENABLED,
        path=settings.OUTPUT_GUARDRAILS_POLICY_PATH,
        judge_sections=_judge_sections,
    )
    state.on_activate = follow_policy(governance, state.path)
    state.load_initial()
    runner.warm_up(pipeline_config.for_policy(state.engine.policy if state.engine else None))
    # A GUARD_* value the guard section cannot take is a start-up error, not a silent default.
    guard_config.GuardConfig.model_validate(
        guard_config.environment_defaults(settings.guard_environment())
    )
    indexes = _indexes(settings)
    if settings.DEMO_CORPUS:
        corpus.load_demo(indexes)
    return Services(
        settings=settings,
        guardrails=state,
        generator=_generator(settings),
        indexes=indexes,
        audit=_audit(settings),
        governance=governance,
        admission=AdmissionController(
            max_in_flight=settings.MAX_INFLIGHT_TURNS,
            max_queue_seconds=settings.MAX_QUEUE_SECONDS,
        ),
        reloader=_reloader(settings, state),
        guards=GuardRegistry(
            settings.GUARD_ACCESS_SECRET, max_connections=settings.upstream_connections()
        ),
        guard_defaults=guard_config.environment_defaults(settings.guard_environment()),
    )
