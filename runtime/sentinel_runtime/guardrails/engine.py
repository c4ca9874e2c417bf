"""The scanner chain of one policy version: built once, then used by every request.

:func:`build_engine` turns a parsed :class:`Policy` into live scanners (a scanner whose
build raises is skipped and reported). :meth:`GuardrailsEngine.scan` runs the chain over
one text: each scanner sees the previous one's redacted output; a block hit stops the
chain; a redact hit the scanner could not rewrite escalates to block, so a hit is never
passed through. A scanner that raises is fail-closed (:class:`OutputGuardrailsError`)
unless its ``failMode`` is ``open``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from sentinel_runtime.guardrails.policy import Action, Policy, ScannerSpec, SkippedScanner
from sentinel_runtime.guardrails.scanners import REGISTRY
from sentinel_runtime.guardrails.scanners.base import Scanner, ScanResult
from sentinel_runtime.observability import events, metrics, tracing
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)

# Seed 003's exact text for the HTTP 500 body.
FAILURE_DETAIL = "Output guardrails failed while scanning the model response."


class OutputGuardrailsError(RuntimeError):
    """A fail-closed scanner raised: the response must not be returned."""

    def __init__(self, scanner_type: str, cause: BaseException) -> None:
        super().__init__(f"{scanner_type} scanner failed: {type(cause).__name__}")
        self.scanner_type = scanner_type


@dataclass(frozen=True)
class ScannerHit:
    index: int
    type: str
    action: Action
    score: float
    escalated: bool = False

    def describe(self) -> dict[str, object]:
        return {
            "index": self.index,
            "type": self.type,
            "action": self.action,
            "scores": {self.type: round(self.score, 4)},
            "escalated": self.escalated,
        }


@dataclass(frozen=True)
class ScannerFailure:
    index: int
    type: str
    error: str

    def describe(self) -> dict[str, object]:
        return {"index": self.index, "type": self.type, "error": self.error, "failMode": "open"}


@dataclass(frozen=True)
class ScanOutcome:
    text: str
    action: Action | None
    hits: tuple[ScannerHit, ...] = ()
    failures: tuple[ScannerFailure, ...] = ()

    @property
    def triggered(self) -> bool:
        return self.action is not None


@dataclass(frozen=True)
class ActiveScanner:
    spec: ScannerSpec
    scanner: Scanner


@dataclass(frozen=True)
class GuardrailsEngine:
    policy: Policy
    path: str
    scanners: tuple[ActiveScanner, ...]
    build_failures: tuple[SkippedScanner, ...] = ()
    loaded_at: float = field(default_factory=time.time)

    @property
    def skipped(self) -> tuple[SkippedScanner, ...]:
        return tuple(sorted(self.policy.skipped + self.build_failures, key=lambda s: s.index))

    @property
    def block_message(self) -> str:
        return self.policy.block_message

    def scan(self, text: str, *, response_id: str = "") -> ScanOutcome:
        started = time.perf_counter()
        with tracing.span("sentinel.output_scan", self._span_attributes) as span:
            try:
                outcome = self._scan(text, response_id, self.scanners, record=True)
            finally:
                elapsed = time.perf_counter() - started
                metrics.SCAN_DURATION.observe(elapsed, exemplar=tracing.exemplar())
            span.set(
                **{
                    "sentinel.scan.action": outcome.action or "allow",
                    "sentinel.scan.hits": len(outcome.hits),
                    "sentinel.scan.failures": len(outcome.failures),
                }
            )
            return outcome

    @property
    def _span_attributes(self) -> dict[str, object]:
        return {"sentinel.policy.hash": self.policy.sha256, "sentinel.scanners": len(self.scanners)}

    def trial(self, text: str, scanners: tuple[ActiveScanner, ...]) -> ScanOutcome:
        """Run ``scanners`` (a part of the chain, in chain order) over ``text`` without
        counting hits: streaming tries several cuts before it keeps one (:meth:`record`).
        A fail-closed error is final, so it is recorded and raised as in :meth:`scan`."""
        return self._scan(text, "", scanners, record=False)

    def record(self, outcome: ScanOutcome, *, response_id: str = "") -> None:
        """Count the hits and fail-open errors of an outcome :meth:`trial` produced."""
        for hit in outcome.hits:
            metrics.SCANNER_TRIGGERED.labels(hit.type, hit.action).inc()
        for failure in outcome.failures:
            spec = next(a.spec for a in self.scanners if a.spec.index == failure.index)
            self._scanner_failed(spec, response_id, error=failure.error)

    def _scanner_failed(self, spec: ScannerSpec, response_id: str, **details: object) -> None:
        """Count and log one scanner exception (its failMode says whether the answer goes)."""
        metrics.SCANNER_ERRORS.labels(spec.type, spec.fail_mode).inc()
        log_event(
            logger,
            events.FAILED,
            logging.ERROR,
            fail_open=spec.fail_mode == "open",
            response_id=response_id,
            type=spec.type,
            scanner_index=spec.index,
            policy_hash=self.policy.sha256,
            **details,
        )

    def _scan(
        self,
        text: str,
        response_id: str,
        scanners: tuple[ActiveScanner, ...],
        *,
        record: bool,
    ) -> ScanOutcome:
        current = text
        hits: list[ScannerHit] = []
        failures: list[ScannerFailure] = []
        for active in scanners:
            spec = active.spec
            try:
                # One span per scanner of a recorded scan (a stream's trial cuts are not).
                if record and tracing.enabled():
                    result = _traced(active, current)
                else:
                    result = active.scanner.scan(current)
            except Exception as exc:
                fail_open = spec.fail_mode == "open"
                if not fail_open or record:
                    self._scanner_failed(spec, response_id, exc_info=True)
                if not fail_open:
                    raise OutputGuardrailsError(spec.type, exc) from exc
                failures.append(ScannerFailure(spec.index, spec.type, type(exc).__name__))
                continue
            if result.valid:
                continue
            rewritten = result.text != current
            if spec.action == "block" or not rewritten:
                hit = ScannerHit(
                    spec.index, spec.type, "block", result.score, spec.action != "block"
                )
                hits.append(hit)
                if record:
                    metrics.SCANNER_TRIGGERED.labels(spec.type, "block").inc()
                return ScanOutcome(self.block_message, "block", tuple(hits), tuple(failures))
            hits.append(ScannerHit(spec.index, spec.type, "redact", result.score))
            if record:
                metrics.SCANNER_TRIGGERED.labels(spec.type, "redact").inc()
            current = result.text
        action: Action | None = "redact" if hits else None
        return ScanOutcome(current, action, tuple(hits), tuple(failures))


def _traced(active: ActiveScanner, text: str) -> ScanResult:
    spec = active.spec
    attributes = {"sentinel.scanner.type": spec.type, "sentinel.scanner.index": spec.index}
    with tracing.span(f"sentinel.scanner {spec.type}", attributes) as span:
        result = active.scanner.scan(text)
        span.set(**{"sentinel.scanner.valid": result.valid, "sentinel.scanner.score": result.score})
        return result


def build_engine(policy: Policy, path: str) -> GuardrailsEngine:
    """Build every scanner of ``policy`` once; record each build in metrics and logs."""
    active: list[ActiveScanner] = []
    failures: list[SkippedScanner] = []
    for spec in policy.scanners:
        definition = REGISTRY[spec.type]
        try:
            # Scanners under block never need to produce sanitized text.
            scanner = definition.build(spec.params, spec.action == "redact")
        except Exception as exc:
            metrics.SCANNER_BUILD.labels(spec.type, "failure").inc()
            log_event(
                logger,
                events.SCANNER_BUILD_FAILED,
                logging.ERROR,
                exc_info=True,
                type=spec.type,
                policy_hash=policy.sha256,
                path=path,
            )
            failures.append(SkippedScanner(spec.index, spec.type, f"build failed: {exc}"))
            continue
        metrics.SCANNER_BUILD.labels(spec.type, "success").inc()
        # The error series of an active scanner exists at zero from now on, so an alert on
        # increase() sees its first error (a series born at 1 shows no increase).
        metrics.SCANNER_ERRORS.labels(spec.type, spec.fail_mode)
        active.append(ActiveScanner(spec, scanner))
    return GuardrailsEngine(
        policy=policy, path=path, scanners=tuple(active), build_failures=tuple(failures)
    )
