"""answer.admission on its own: slots, the FIFO queue, its bounds, and what it sheds."""

from __future__ import annotations

import asyncio
import time

import pytest

from sentinel_runtime.answer.admission import AdmissionController, ShedError

ROUTE = "/v1/chat/completions"


def run(coroutine):
    return asyncio.run(coroutine)


def test_turns_up_to_the_limit_start_at_once_and_the_next_one_waits_its_turn() -> None:
    async def scenario() -> None:
        controller = AdmissionController(max_in_flight=2, max_queue_seconds=5)
        first, second = await controller.admit(ROUTE), await controller.admit(ROUTE)
        assert controller.saturation().describe() == {
            "inFlight": 2,
            "queued": 0,
            "maxInFlight": 2,
            "maxQueued": 2,
            "saturated": True,
        }
        third = asyncio.create_task(controller.admit(ROUTE))
        await asyncio.sleep(0.05)
        assert not third.done() and controller.saturation().queued == 1
        first.release()
        slot = await asyncio.wait_for(third, 1)  # handed the released slot
        assert controller.saturation().in_flight == 2 and controller.saturation().queued == 0
        for held in (second, slot):
            held.release()
        assert controller.saturation().in_flight == 0

    run(scenario())


def test_waiters_are_served_first_in_first_out() -> None:
    async def scenario() -> list[int]:
        # The queue holds as many turns as may run: three slots, three places.
        controller = AdmissionController(max_in_flight=3, max_queue_seconds=5)
        held = [await controller.admit(ROUTE) for _ in range(3)]
        order: list[int] = []

        async def wait(number: int) -> None:
            slot = await controller.admit(ROUTE)
            order.append(number)
            slot.release()

        tasks = []
        for number in range(3):
            tasks.append(asyncio.create_task(wait(number)))
            await asyncio.sleep(0.01)
        held[0].release()  # each waiter passes its slot on as it finishes
        await asyncio.gather(*tasks)
        for slot in held[1:]:
            slot.release()
        assert controller.saturation().in_flight == 0
        return order

    assert run(scenario()) == [0, 1, 2]


def test_a_full_queue_sheds_at_once_and_a_wait_past_the_limit_sheds_after_it() -> None:
    async def scenario() -> None:
        controller = AdmissionController(max_in_flight=1, max_queue_seconds=0.3)
        await controller.admit(ROUTE)
        waiting = asyncio.create_task(controller.admit(ROUTE))  # the one queue place
        await asyncio.sleep(0.01)
        started = time.monotonic()
        with pytest.raises(ShedError) as full:
            await controller.admit(ROUTE)
        assert full.value.reason == "queue_full" and time.monotonic() - started < 0.05
        assert full.value.retry_after == 1
        with pytest.raises(ShedError) as timed_out:
            await waiting
        assert timed_out.value.reason == "queue_timeout"
        assert 0.25 <= time.monotonic() - started < 1.0
        assert controller.saturation().queued == 0 and controller.saturation().in_flight == 1

    run(scenario())


def test_without_a_wait_there_is_no_queue() -> None:
    async def scenario() -> None:
        controller = AdmissionController(max_in_flight=1, max_queue_seconds=0)
        await controller.admit(ROUTE)
        assert controller.max_queued == 0
        with pytest.raises(ShedError, match="at capacity") as shed:
            await controller.admit(ROUTE)
        assert shed.value.reason == "queue_full"

    run(scenario())


def test_a_waiter_cancelled_leaves_the_queue_and_takes_no_slot() -> None:
    async def scenario() -> None:
        controller = AdmissionController(max_in_flight=1, max_queue_seconds=5)
        held = await controller.admit(ROUTE)
        waiting = asyncio.create_task(controller.admit(ROUTE))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert controller.saturation().queued == 0
        held.release()
        held.release()  # a second release gives nothing back twice
        assert controller.saturation().in_flight == 0
        again = await asyncio.wait_for(controller.admit(ROUTE), 0.1)
        assert controller.saturation().in_flight == 1
        again.release()

    run(scenario())


def test_retry_after_is_at_least_the_wait_in_whole_seconds() -> None:
    assert AdmissionController(max_in_flight=1, max_queue_seconds=2.5).retry_after == 3
    assert AdmissionController(max_in_flight=1, max_queue_seconds=0.2).retry_after == 1


@pytest.mark.parametrize(
    ("max_in_flight", "max_queue_seconds"),
    [pytest.param(0, 1.0, id="no-slots"), pytest.param(1, -1.0, id="negative-wait")],
)
def test_impossible_bounds_are_refused(max_in_flight: int, max_queue_seconds: float) -> None:
    with pytest.raises(ValueError):
        AdmissionController(max_in_flight=max_in_flight, max_queue_seconds=max_queue_seconds)
