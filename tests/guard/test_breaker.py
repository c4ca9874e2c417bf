"""The guard endpoint's circuit breaker: opens after consecutive failures, one trial after
the pause, closes on its success, re-opens on its failure."""

from __future__ import annotations

from sentinel_runtime.guard.breaker import CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_opens_after_the_threshold_and_lets_one_trial_through_after_the_pause() -> None:
    clock = Clock()
    breaker = CircuitBreaker(failure_threshold=3, open_seconds=30, clock=clock)
    assert breaker.allow() and not breaker.failed()
    assert breaker.allow() and not breaker.failed()
    assert breaker.allow() and breaker.failed()  # the third failure in a row opens it
    assert breaker.state == "open" and not breaker.allow()
    clock.now += 29.9
    assert not breaker.allow()
    clock.now += 0.2
    assert breaker.state == "half_open"
    assert breaker.allow()  # the trial
    assert not breaker.allow()  # only one at a time
    assert breaker.succeeded()  # the trial's success closes it (and says so)
    assert breaker.state == "closed" and breaker.allow()


def test_a_failed_trial_opens_the_circuit_for_another_pause() -> None:
    clock = Clock()
    breaker = CircuitBreaker(failure_threshold=1, open_seconds=10, clock=clock)
    assert breaker.failed() and breaker.state == "open"
    clock.now += 10
    assert breaker.allow()
    assert breaker.failed()  # re-opened
    assert breaker.state == "open" and not breaker.allow()
    clock.now += 10
    assert breaker.allow()


def test_a_success_resets_the_count_of_failures() -> None:
    breaker = CircuitBreaker(failure_threshold=2, open_seconds=10, clock=Clock())
    assert not breaker.failed()
    assert not breaker.succeeded()  # closed already: nothing to report
    assert not breaker.failed()  # one failure again, not two in a row
    assert breaker.state == "closed"


def test_a_cancelled_trial_is_released_so_the_circuit_can_close() -> None:
    clock = Clock()
    breaker = CircuitBreaker(failure_threshold=1, open_seconds=10, clock=clock)
    breaker.failed()
    clock.now += 10
    assert breaker.allow()  # the trial, then the call was cancelled
    breaker.abandoned()
    assert breaker.allow()  # another trial may go
    assert breaker.succeeded() and breaker.state == "closed"
