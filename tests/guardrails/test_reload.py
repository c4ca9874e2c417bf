"""Hot reload against a real directory updated the way the kubelet updates a ConfigMap."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from sentinel_runtime.guardrails.reloader import FileReloader
from sentinel_runtime.guardrails.state import GuardrailsState
from support.configmap import ConfigMapDir

REDACT = "scanners:\n  - type: ban_substrings\n    action: redact\n    substrings: [alpha]\n"
BLOCK = "scanners:\n  - type: ban_substrings\n    action: block\n    substrings: [alpha]\n"


def reloads(result: str) -> float:
    return REGISTRY.get_sample_value("guardrails_policy_reload_total", {"result": result}) or 0.0


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> float:
    """Seconds until ``predicate`` held; fails the test on timeout."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(0.01)
    pytest.fail(f"condition not met within {timeout} s")


@pytest.fixture
def watched(configmap: ConfigMapDir) -> Iterator[tuple[GuardrailsState, ConfigMapDir]]:
    configmap.write(REDACT)
    state = GuardrailsState(enabled=True, path=str(configmap.policy_path))
    state.load_initial()
    reloader = FileReloader(state)
    reloader.start()
    time.sleep(0.2)  # let the observer attach
    yield state, configmap
    reloader.stop()


def action_for(state: GuardrailsState, text: str = "alpha beta") -> str | None:
    assert state.engine is not None
    return state.engine.scan(text).action


def test_symlink_swap_switches_policy_within_debounce(watched) -> None:
    state, configmap = watched
    old_hash = state.engine.policy.sha256
    before = reloads("success")
    assert action_for(state) == "redact"

    configmap.write(BLOCK)
    elapsed = wait_for(lambda: action_for(state) == "block")

    assert 0.9 <= elapsed < 1.5  # debounced by 1 s, active well before 1.5 s
    assert reloads("success") == before + 1
    assert state.engine.policy.sha256 != old_hash


def test_burst_of_writes_is_debounced_into_one_reload(watched) -> None:
    state, configmap = watched
    before = reloads("success") + reloads("noop") + reloads("failure")
    for content in (BLOCK, REDACT, BLOCK, REDACT, BLOCK):
        configmap.write(content)
        time.sleep(0.1)
    wait_for(lambda: action_for(state) == "block")
    time.sleep(1.3)
    after = reloads("success") + reloads("noop") + reloads("failure")
    assert after - before == 1


def test_identical_content_is_a_noop(watched) -> None:
    state, configmap = watched
    engine = state.engine
    before = reloads("noop")
    configmap.write(REDACT)
    wait_for(lambda: reloads("noop") == before + 1)
    assert state.engine is engine  # not even rebuilt


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param("scanners: [unclosed", id="malformed-yaml"),
        pytest.param("- just\n- a list\n", id="not-a-mapping"),
        pytest.param(b"scanners: \xff\xfe\n", id="not-utf8"),
        pytest.param(b"#" * (1024 * 1024 + 1), id="over-1MiB"),
    ],
)
def test_failed_reload_keeps_the_previous_policy(watched, broken: str | bytes) -> None:
    state, configmap = watched
    engine = state.engine
    before = reloads("failure")
    configmap.write(broken)
    wait_for(lambda: reloads("failure") == before + 1)
    assert state.engine is engine
    assert action_for(state) == "redact"
    assert state.ready


def test_deleted_policy_keeps_the_previous_policy(watched) -> None:
    state, configmap = watched
    engine = state.engine
    before = reloads("failure")
    configmap.policy_path.unlink()
    wait_for(lambda: reloads("failure") == before + 1)
    assert state.engine is engine


def test_reloader_waits_for_a_directory_that_does_not_exist_yet(tmp_path: Path) -> None:
    configmap_root = tmp_path / "later"
    state = GuardrailsState(enabled=True, path=str(configmap_root / "guardrails.yaml"))
    state.load_initial()
    assert not state.ready and state.error is not None and state.error.status == "missing"
    reloader = FileReloader(state)
    reloader.start()
    try:
        ConfigMapDir(configmap_root).write(BLOCK)
        wait_for(lambda: state.ready, timeout=5)
        assert action_for(state) == "block"
    finally:
        reloader.stop()


def test_lost_events_are_caught_by_the_poll_after_quiet_periods(configmap: ConfigMapDir) -> None:
    # With no inotify events at all, the poll alone finds the change, however long it came
    # after start (regression: the thread ended at the first poll that found no change).
    configmap.write(REDACT)
    state = GuardrailsState(enabled=True, path=str(configmap.policy_path))
    state.load_initial()
    reloader = FileReloader(state, poll=0.2)
    reloader._watch = lambda: False  # type: ignore[method-assign]  # simulate no inotify
    reloader.start()
    try:
        time.sleep(1.0)  # five quiet polls
        assert reloader._thread.is_alive()
        configmap.write(BLOCK)
        wait_for(lambda: action_for(state) == "block", timeout=5)
    finally:
        reloader.stop()


def test_what_the_layers_above_derive_swaps_in_with_the_engine(configmap: ConfigMapDir) -> None:
    # The companion stands for the rulebase the governance layer derives from the same file:
    # a request reads one Activation, so it never pairs one version's scanners with
    # another's rules.
    configmap.write(REDACT)
    seen: list[str] = []

    def derive(policy) -> str:
        seen.append(policy.sha256)
        return "rules of " + policy.sha256

    state = GuardrailsState(enabled=True, path=str(configmap.policy_path), on_activate=derive)
    state.load_initial()
    first = state.activation
    assert first is not None and first.companion == "rules of " + first.engine.policy.sha256
    configmap.write(BLOCK)
    assert state.reload() == "success"
    second = state.activation
    assert second is not None and second.engine is not first.engine
    assert second.companion == "rules of " + second.engine.policy.sha256
    assert state.engine is second.engine and seen == [
        first.engine.policy.sha256,
        second.engine.policy.sha256,
    ]
