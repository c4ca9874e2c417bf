"""``sentinel serve``'s app freezes the start-up heap; in-process apps leave it alone."""

from __future__ import annotations

import gc

from fastapi.testclient import TestClient

from sentinel_runtime.api.app import create_app
from sentinel_runtime.settings import Settings


def test_the_served_app_freezes_what_start_up_built() -> None:
    gc.unfreeze()
    try:
        with TestClient(create_app(Settings(OUTPUT_GUARDRAILS_ENABLED=False), freeze_heap=True)):
            assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_an_in_process_app_leaves_the_collector_alone() -> None:
    gc.unfreeze()
    with TestClient(create_app(Settings(OUTPUT_GUARDRAILS_ENABLED=False))):
        assert gc.get_freeze_count() == 0
