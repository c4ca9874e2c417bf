"""The runtime's guardrails state: disabled, an active engine, or a loud error.

One :class:`GuardrailsState` per process. Requests read ``state.engine`` once and use that
engine to the end, so a reload never changes the policy under a request in flight; the
swap itself is one attribute assignment. Loading and reloading record the metrics and log
events of the output-guardrails contract (docs/contracts.md); a failed reload keeps the
previous engine, and the state remembers it for the API: the last reload attempt
(``last_attempt``) and the last failure (``last_failure``: the failed file's hash, the error,
when), shown by ``GET /v1/guardrails/policy`` and ``/ready``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Literal

from sentinel_runtime.guardrails import policy as policy_mod
from sentinel_runtime.guardrails.engine import GuardrailsEngine, build_engine
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)

ReloadResult = Literal["success", "failure", "noop"]
FALLBACK_ACTION = "keep_previous_policy"


def default_policy_path() -> str:
    """The shipped default policy (KAITO v0.12's template), used when no path is configured."""
    return str(resources.files("sentinel_runtime.guardrails") / "default_policy.yaml")


@dataclass(frozen=True)
class LoadFailure:
    status: str
    message: str


@dataclass(frozen=True)
class ReloadAttempt:
    """One reload of the policy file: when (Unix seconds), its result, and the hash of the
    policy active afterwards."""

    at: float
    result: ReloadResult
    active_hash: str

    def describe(self) -> dict[str, object]:
        return {"at": self.at, "result": self.result, "activePolicyHash": self.active_hash}


@dataclass(frozen=True)
class PolicyFailure:
    """A policy file that could not be used: the hash of its bytes (None when it could not
    be read), the contract's load status, the error, and when (Unix seconds)."""

    at: float
    policy_hash: str | None
    status: str
    message: str

    def describe(self) -> dict[str, object]:
        return {
            "at": self.at,
            "policyHash": self.policy_hash,
            "status": self.status,
            "message": self.message,
        }


def _file_hash(path: str) -> str | None:
    """The hash of the file as it is now (the failed policy's, for the API)."""
    try:
        with open(path, "rb") as handle:
            return policy_mod.digest(handle.read(policy_mod.MAX_POLICY_BYTES + 1))
    except OSError:
        return None


@dataclass(frozen=True)
class Activation:
    """A policy version as it became active: its engine, and what the layers above derived
    from the same policy at the same moment (``on_activate``'s result: the rulebase in force).
    A request reads one Activation, so its scanners and its rulebase are one version's."""

    engine: GuardrailsEngine
    companion: object = None


class GuardrailsState:
    def __init__(
        self,
        *,
        enabled: bool,
        path: str,
        judge_sections: Callable[[policy_mod.Policy], Sequence[policy_mod.Diagnostic]]
        | None = None,
        on_activate: Callable[[policy_mod.Policy], object] | None = None,
    ) -> None:
        self.enabled = enabled
        # The pipeline's sections are parsed by a layer above this one; it hands in its judge
        # so one load logs every diagnostic and warms that parse before the swap.
        self.judge_sections = judge_sections
        # Told of each policy version as it becomes active (under the reload lock, before the
        # swap): the governance layer loads its rulebase and returns what is in force, which
        # is swapped in with the engine as one Activation.
        self.on_activate = on_activate
        # An empty path means "the in-memory defaults" (docs/contracts.md, "Output
        # guardrails"): our shipped policy.
        self.path = path or default_policy_path()
        self.activation: Activation | None = None
        self.error: LoadFailure | None = None
        self.last_attempt: ReloadAttempt | None = None  # the latest hot reload
        self.last_failure: PolicyFailure | None = None  # the latest unusable file, ever
        self._lock = threading.Lock()

    @property
    def engine(self) -> GuardrailsEngine | None:
        activation = self.activation
        return activation.engine if activation is not None else None

    @property
    def ready(self) -> bool:
        """Whether chat requests can be served: guardrails off, or a policy is active."""
        return not self.enabled or self.engine is not None

    @property
    def reload_failed(self) -> bool:
        """Whether the latest reload failed: the file on disk is not the policy serving."""
        attempt = self.last_attempt
        return attempt is not None and attempt.result == "failure"

    def describe_reloads(self) -> dict[str, object]:
        """The last reload attempt and the last failure, for the API."""
        attempt, failure = self.last_attempt, self.last_failure
        return {
            "lastAttempt": attempt.describe() if attempt is not None else None,
            "lastFailure": failure.describe() if failure is not None else None,
        }

    def load_initial(self) -> None:
        """Load the policy once at start-up; with guardrails disabled, load nothing."""
        if not self.enabled:
            metrics.POLICY_READY.set(1)
            metrics.ACTIVE_POLICY.info(
                {"path": "", "sha256": "", "enabled": "false", "scanner_count": "0"}
            )
            return
        with self._lock:
            parsed = self._read()
            if parsed is None:
                metrics.POLICY_READY.set(0)
                return
            engine = self._build(parsed)
            self._activate(engine)
            log_event(
                logger,
                events.POLICY_LOADED,
                path=self.path,
                policy_hash=engine.policy.sha256,
                scanners=[a.spec.type for a in engine.scanners],
                skipped=[s.describe() for s in engine.skipped],
            )

    def reload(self) -> ReloadResult:
        """Re-read the policy file; never raises, never leaves a half-built engine active."""
        with self._lock:
            current = self.engine
            current_hash = current.policy.sha256 if current else ""
            parsed = self._read()
            if parsed is not None and parsed.sha256 == current_hash:
                metrics.POLICY_RELOAD.labels("noop").inc()
                log_event(logger, events.RELOAD_NOOP, path=self.path, policy_hash=current_hash)
                self.last_attempt = ReloadAttempt(time.time(), "noop", current_hash)
                return "noop"
            if parsed is None:
                self.last_attempt = ReloadAttempt(time.time(), "failure", current_hash)
                metrics.POLICY_RELOAD.labels("failure").inc()
                log_event(
                    logger,
                    events.RELOAD_FAILED,
                    logging.WARNING,
                    path=self.path,
                    current_policy_hash=current_hash,
                    fallback_action=FALLBACK_ACTION,
                )
                return "failure"
            engine = self._build(parsed)
            self._activate(engine)
            self.last_attempt = ReloadAttempt(time.time(), "success", engine.policy.sha256)
            metrics.POLICY_RELOAD.labels("success").inc()
            log_event(
                logger,
                events.RELOAD_SUCCEEDED,
                path=self.path,
                old_policy_hash=current_hash,
                new_policy_hash=engine.policy.sha256,
                enabled=self.enabled,
                scanners=[a.spec.type for a in engine.scanners],
            )
            return "success"

    def _read(self) -> policy_mod.Policy | None:
        try:
            parsed = policy_mod.read_policy_file(self.path)
        except policy_mod.PolicyError as exc:
            metrics.POLICY_LOAD.labels(exc.status).inc()
            event = {
                "missing": events.POLICY_MISSING,
                "invalid": events.POLICY_INVALID,
                "load_failed": events.POLICY_LOAD_FAILED,
            }[exc.status]
            log_event(logger, event, logging.ERROR, path=self.path, error=str(exc))
            self.last_failure = PolicyFailure(
                time.time(), _file_hash(self.path), exc.status, str(exc)
            )
            if self.engine is None:
                self.error = LoadFailure(exc.status, str(exc))
            return None
        metrics.POLICY_LOAD.labels("success").inc()
        return parsed

    def _build(self, parsed: policy_mod.Policy) -> GuardrailsEngine:
        extra = tuple(self.judge_sections(parsed)) if self.judge_sections else ()
        for diagnostic in (*parsed.diagnostics, *extra):
            log_event(
                logger, diagnostic.event, diagnostic.level, path=self.path, **diagnostic.fields
            )
        for skipped in parsed.skipped:
            known = skipped.type in policy_mod.REGISTRY
            metrics.SCANNER_BUILD.labels(
                skipped.type if known else "unknown", "invalid_config" if known else "unknown_type"
            ).inc()
        return build_engine(parsed, self.path)

    def _activate(self, engine: GuardrailsEngine) -> None:
        companion = self.on_activate(engine.policy) if self.on_activate is not None else None
        self.activation = Activation(engine, companion)  # the swap: one assignment
        self.error = None
        metrics.POLICY_READY.set(1)
        metrics.POLICY_LOADED_TIMESTAMP.set(time.time())
        metrics.ACTIVE_POLICY.info(
            {
                "path": self.path,
                "sha256": engine.policy.sha256,
                "enabled": "true",
                "scanner_count": str(len(engine.scanners)),
            }
        )
