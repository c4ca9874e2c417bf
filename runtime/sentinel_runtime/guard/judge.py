"""A guard model as a judge: the family's request, the call, the family's reading of the
reply, under a timeout and a circuit breaker, counted in metrics.

``GuardJudge.judge`` never raises for the guard's failures: it returns a ``GuardJudgement``
whose ``outcome`` says what happened (``timeout``, ``error``, ``malformed``,
``circuit_open``), and the pipeline applies ``guard.onError`` to it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time

from sentinel_runtime import settings
from sentinel_runtime.guard import families
from sentinel_runtime.guard.breaker import CircuitBreaker
from sentinel_runtime.guard.client import GuardCallError, GuardClient
from sentinel_runtime.guard.config import GuardConfig
from sentinel_runtime.guard.types import (
    Family,
    GuardFormatError,
    GuardInput,
    GuardJudgement,
    Outcome,
    Subject,
)
from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event

logger = logging.getLogger(__name__)


def family_for(config: GuardConfig) -> Family:
    if config.family == "custom":
        custom = config.custom
        assert custom is not None  # GuardConfig refuses custom without its section
        return families.custom(
            custom.template,
            custom.unsafe_pattern,
            custom.categories_pattern,
            safe_pattern=custom.safe_pattern,
            category_map=custom.categories,
        )
    return families.get(config.family)


class GuardJudge:
    """Judges prompts and answers with one guard model."""

    def __init__(
        self,
        config: GuardConfig,
        *,
        family: Family,
        client: GuardClient,
        breaker: CircuitBreaker,
    ) -> None:
        self.config = config
        self.family = family
        self.client = client
        self.breaker = breaker
        # A bounded label: the configured model name, else the family.
        self.label = config.model or config.family
        # Every series exists from the start, so increase() and rate() see the first event.
        for subject in ("prompt", "answer"):
            for verdict in ("safe", "unsafe"):
                metrics.GUARD_REQUESTS.labels(self.label, subject, verdict, "ok")
            for outcome in ("timeout", "error", "malformed", "circuit_open", "skipped"):
                metrics.GUARD_REQUESTS.labels(self.label, subject, "none", outcome)
        metrics.GUARD_CIRCUIT_OPEN.labels(self.label).set(1 if breaker.state == "open" else 0)

    def skipped(self, subject: Subject, detail: str) -> GuardJudgement:
        """A judgement for a turn the guard was not asked about (counted as skipped)."""
        metrics.GUARD_REQUESTS.labels(self.label, subject, "none", "skipped").inc()
        return GuardJudgement(subject, "skipped", self.config.family, self.label, detail=detail)

    async def judge(self, item: GuardInput) -> GuardJudgement:
        subject = item.subject
        if not self.breaker.allow():
            return self._failed(subject, "circuit_open", "circuit_open", None)
        try:
            request = self.family.build(item)
        except ValueError:  # the policy's custom template cannot hold this item
            return self._failed(subject, "error", "request_unbuildable", None)
        if self.config.extra_body:
            request = dataclasses.replace(
                request, params={**request.params, **self.config.extra_body}
            )
        started = time.perf_counter()
        try:
            reply = await asyncio.wait_for(
                self.client.call(request), timeout=self.config.timeout_seconds
            )
            verdict = self.family.parse(reply, item)
        except TimeoutError:
            return self._failed(subject, "timeout", "timeout", started)
        except GuardCallError as exc:
            return self._failed(subject, exc.outcome, exc.outcome, started)
        except GuardFormatError:
            return self._failed(subject, "malformed", "unreadable_reply", started)
        except BaseException:  # cancelled (the client left): no verdict, release the trial
            self.breaker.abandoned()
            raise
        elapsed = time.perf_counter() - started
        if self.breaker.succeeded():
            self._circuit(opened=False)
        judgement = GuardJudgement(
            subject, "ok", self.config.family, self.label, verdict, elapsed * 1000
        )
        metrics.GUARD_REQUESTS.labels(self.label, subject, judgement.verdict_label, "ok").inc()
        metrics.GUARD_DURATION.labels(self.label, subject).observe(elapsed)
        return judgement

    def _failed(
        self, subject: Subject, outcome: Outcome, detail: str, started: float | None
    ) -> GuardJudgement:
        """``started`` is None for a call that was never made (open circuit, a request the
        family cannot build): it has no latency and says nothing about the endpoint."""
        elapsed = 0.0 if started is None else time.perf_counter() - started
        if started is not None:
            metrics.GUARD_DURATION.labels(self.label, subject).observe(elapsed)
            if self.breaker.failed():
                self._circuit(opened=True)
        metrics.GUARD_REQUESTS.labels(self.label, subject, "none", outcome).inc()
        log_event(
            logger,
            events.GUARD_FAILED,
            logging.WARNING,
            model=self.label,
            subject=subject,
            outcome=outcome,
            on_error=self.config.on_error,
        )
        return GuardJudgement(
            subject, outcome, self.config.family, self.label, None, elapsed * 1000, detail
        )

    def _circuit(self, *, opened: bool) -> None:
        metrics.GUARD_CIRCUIT_OPEN.labels(self.label).set(1 if opened else 0)
        log_event(
            logger,
            events.GUARD_CIRCUIT_OPENED if opened else events.GUARD_CIRCUIT_CLOSED,
            logging.WARNING if opened else logging.INFO,
            model=self.label,
            open_seconds=self.config.open_seconds,
        )

    async def aclose(self) -> None:
        await self.client.aclose()


class GuardRegistry:
    """The judges of the policy versions seen so far: one client per server and model, one
    breaker per server, model and family (a policy reload keeps a dead endpoint's open
    circuit), built on first use."""

    def __init__(
        self, token: str, *, max_connections: int = settings.DEFAULT_LLM_MAX_CONNECTIONS
    ) -> None:
        self.token = token
        self.max_connections = max_connections  # per guard server, as LLM_MAX_CONNECTIONS
        self._judges: dict[str, GuardJudge] = {}
        self._breakers: dict[tuple[str, str, str], CircuitBreaker] = {}
        self._clients: dict[tuple[str, str, float], GuardClient] = {}

    def for_config(self, config: GuardConfig) -> GuardJudge | None:
        if not config.url:
            return None
        cache_key = config.model_dump_json()
        judge = self._judges.get(cache_key)
        if judge is None:
            breaker = self._breakers.setdefault(
                config.key,
                CircuitBreaker(
                    failure_threshold=config.failure_threshold, open_seconds=config.open_seconds
                ),
            )
            client_key = (config.url, config.model, config.timeout_seconds)
            client = self._clients.get(client_key)
            if client is None:
                client = GuardClient(
                    config.url,
                    model=config.model,
                    token=self.token,
                    timeout=config.timeout_seconds,
                    max_connections=self.max_connections,
                )
                self._clients[client_key] = client
            judge = GuardJudge(config, family=family_for(config), client=client, breaker=breaker)
            self._judges[cache_key] = judge
        return judge

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
