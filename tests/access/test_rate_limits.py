"""Per-key token buckets over a clock the test moves: requests per minute taken on admission,
tokens per minute charged after the answer (a bucket may go into debt), and limits that change
under a key (a keys-file edit)."""

from __future__ import annotations

import pytest

from sentinel_runtime.access.keys import Principal
from sentinel_runtime.access.limits import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_rpm_admits_a_minutes_worth_then_refills_continuously(clock: Clock) -> None:
    limiter = RateLimiter(clock)
    key = Principal("a", rpm=3)
    assert [limiter.admit(key) for _ in range(3)] == [None, None, None]
    refused = limiter.admit(key)
    assert refused is not None and refused.limit == "rpm"
    assert refused.retry_after == pytest.approx(20.0)  # 3 a minute: one every 20 s
    assert refused.retry_after_seconds == 20
    clock.now += 19.9
    assert limiter.admit(key) is not None
    clock.now += 0.2
    assert limiter.admit(key) is None
    clock.now += 3600  # never more than a minute's worth
    assert [limiter.admit(key) is None for _ in range(4)] == [True, True, True, False]


def test_keys_have_their_own_buckets(clock: Clock) -> None:
    limiter = RateLimiter(clock)
    a, b = Principal("a", rpm=1), Principal("b", rpm=1)
    assert limiter.admit(a) is None and limiter.admit(a) is not None
    assert limiter.admit(b) is None


def test_no_limits_means_always_admitted(clock: Clock) -> None:
    limiter = RateLimiter(clock)
    unlimited = Principal("u")
    assert all(limiter.admit(unlimited) is None for _ in range(1000))
    limiter.charge(unlimited, 10**9)
    assert limiter.admit(unlimited) is None


def test_tpm_is_charged_after_and_a_key_in_debt_waits_until_it_is_repaid(clock: Clock) -> None:
    limiter = RateLimiter(clock)
    key = Principal("t", tpm=600)  # 10 tokens a second
    assert limiter.admit(key) is None
    limiter.charge(key, 500)
    assert limiter.admit(key) is None  # 100 left: still admitted
    limiter.charge(key, 400)  # 300 in debt
    refused = limiter.admit(key)
    assert refused is not None and refused.limit == "tpm"
    assert refused.retry_after == pytest.approx(30.1)  # 300 tokens at 10/s, then one more
    assert refused.retry_after_seconds == 31
    clock.now += 31
    assert limiter.admit(key) is None


def test_a_refused_request_takes_nothing(clock: Clock) -> None:
    limiter = RateLimiter(clock)
    key = Principal("both", rpm=2, tpm=60)
    assert limiter.admit(key) is None
    limiter.charge(key, 120)  # in debt for 60 s
    for _ in range(5):
        assert limiter.admit(key).limit == "tpm"  # type: ignore[union-attr]
    clock.now += 61
    assert limiter.admit(key) is None  # the request bucket was not drained meanwhile
    assert limiter.admit(key) is None


def test_new_limits_take_effect_without_refilling_the_bucket(clock: Clock) -> None:
    limiter = RateLimiter(clock)
    assert all(limiter.admit(Principal("a", rpm=10)) is None for _ in range(9))
    # The edit raises the limit: what is left (1) stays, it does not jump to 100.
    raised = Principal("a", rpm=100)
    assert limiter.admit(raised) is None
    assert limiter.admit(raised) is not None
    # And lowering it caps what is left.
    clock.now += 60
    lowered = Principal("a", rpm=1)
    assert limiter.admit(lowered) is None and limiter.admit(lowered) is not None
