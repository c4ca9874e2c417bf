"""``sentinel serve``'s app freezes the start-up heap and raises the cycle collector's
thresholds; in-process apps leave the collector alone."""

from __future__ import annotations

import gc

from fastapi.testclient import TestClient

from sentinel_runtime.api.app import GC_THRESHOLDS, create_app
from sentinel_runtime.settings import Settings


def test_the_served_app_freezes_what_start_up_built_and_collects_cycles_less_often() -> None:
    gc.unfreeze()
    thresholds = gc.get_threshold()
    try:
        with TestClient(create_app(Settings(OUTPUT_GUARDRAILS_ENABLED=False), freeze_heap=True)):
            assert gc.get_freeze_count() > 0
            assert gc.get_threshold() == GC_THRESHOLDS
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def test_an_in_process_app_leaves_the_collector_alone() -> None:
    gc.unfreeze()
    thresholds = gc.get_threshold()
    with TestClient(create_app(Settings(OUTPUT_GUARDRAILS_ENABLED=False))):
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == thresholds
