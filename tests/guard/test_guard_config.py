"""The guard section: parsed with the policy's other sections, the environment's GUARD_*
values under the policy's own keys, and refused with a diagnostic when it is wrong."""

from __future__ import annotations

import pytest

from sentinel_runtime.guard import config as guard_config
from sentinel_runtime.observability import events
from sentinel_runtime.pipeline import config as pipeline_config
from sentinel_runtime.settings import Settings

ENV = {"GUARD_URL": "http://guard:8000/v1", "GUARD_FAMILY": "qwen3guard"}


def test_no_section_and_no_environment_means_no_guard() -> None:
    parsed = pipeline_config.parse_sections({})
    assert parsed.guard.url == "" and parsed.guard.mode == "off"
    assert not parsed.guard.judges_answers


def test_the_environment_alone_turns_the_guard_on_for_the_uncertain_band() -> None:
    defaults = guard_config.environment_defaults(ENV)
    parsed = pipeline_config.parse_sections({}, defaults)
    assert parsed.guard.url == "http://guard:8000/v1"
    assert parsed.guard.family == "qwen3guard" and parsed.guard.mode == "uncertain"
    assert parsed.diagnostics == ()


def test_the_policy_wins_over_the_environment_key_by_key() -> None:
    defaults = guard_config.environment_defaults({**ENV, "GUARD_MODE": "always"})
    section = {"mode": "off", "answers": True, "band": {"low": 0.1, "high": 0.5}}
    parsed = pipeline_config.parse_sections({"guard": section}, defaults)
    guard = parsed.guard
    assert guard.mode == "off" and guard.answers and guard.band.high == 0.5
    assert guard.url == "http://guard:8000/v1" and guard.family == "qwen3guard"


def test_camel_case_keys_and_a_custom_family() -> None:
    section = {
        "url": "http://g:1/v1",
        "family": "custom",
        "onError": "refuse",
        "timeoutSeconds": 2,
        "custom": {
            "template": "Is this unsafe? {prompt}",
            "unsafePattern": "^unsafe",
            "safePattern": "^safe",
        },
    }
    guard = pipeline_config.parse_sections({"guard": section}).guard
    assert guard.on_error == "refuse" and guard.timeout_seconds == 2
    assert guard.custom is not None and guard.custom.unsafe_pattern == "^unsafe"
    assert guard.mode == "uncertain"  # a url without a mode


@pytest.mark.parametrize(
    ("section", "says"),
    [
        ({"url": "guard:8000"}, "http(s) URL"),
        ({"url": "http://g/v1", "family": "nosuch"}, "family"),
        ({"url": "http://g/v1", "mode": "sometimes"}, "mode"),
        ({"url": "http://g/v1", "family": "custom"}, "custom section"),
        ({"url": "http://g/v1", "band": {"low": 0.9, "high": 0.2}}, "band.low"),
        ({"url": "http://g/v1", "timeoutSeconds": 0}, "timeout_seconds"),
        (
            {
                "url": "http://g/v1",
                "family": "custom",
                "custom": {"template": "{prompt}", "unsafePattern": "(unclosed"},
            },
            "not a regular expression",
        ),
        (
            {
                "url": "http://g/v1",
                "family": "custom",
                "custom": {
                    "template": "{prompt}",
                    "unsafePattern": "unsafe",
                    "categories": {"Violent": "violense"},
                },
            },
            "violense: not one of Sentinel's risk categories",
        ),
    ],
)
def test_an_invalid_section_is_reported_and_the_environment_defaults_stay(
    section: dict[str, object], says: str
) -> None:
    parsed = pipeline_config.parse_sections(
        {"guard": section}, guard_config.environment_defaults(ENV)
    )
    invalid = [d for d in parsed.diagnostics if d.event == events.POLICY_INVALID_SECTION]
    assert len(invalid) == 1 and says in invalid[0].fields["error"]
    assert parsed.guard.url == ENV["GUARD_URL"]  # the environment's guard, not none at all


def test_the_access_token_is_never_read_from_the_policy() -> None:
    section = {"url": "http://g/v1", "accessSecret": "tok-from-configmap"}
    parsed = pipeline_config.parse_sections({"guard": section})
    unknown = [d.fields for d in parsed.diagnostics if d.event == events.POLICY_UNKNOWN_FIELD]
    assert {"field": "access_secret", "scope": "guard"} in unknown
    assert "tok-from-configmap" not in parsed.guard.model_dump_json()


def test_settings_hand_the_guard_variables_over_and_keep_the_token_apart() -> None:
    settings = Settings(**ENV, GUARD_ACCESS_SECRET="tok", GUARD_TIMEOUT_SECONDS="3")
    defaults = guard_config.environment_defaults(settings.guard_environment())
    assert defaults["timeout_seconds"] == "3" and "access_secret" not in defaults
    assert pipeline_config.parse_sections({}, defaults).guard.timeout_seconds == 3.0


def test_for_policy_caches_per_policy_and_environment() -> None:
    first = pipeline_config.for_policy(None, guard_config.environment_defaults(ENV))
    again = pipeline_config.for_policy(None, guard_config.environment_defaults(ENV))
    assert first is again and first.guard.url == ENV["GUARD_URL"]
    assert pipeline_config.for_policy(None) is pipeline_config.DEFAULT
