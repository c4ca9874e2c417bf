"""The secrets scanner's work on one long line grows with the line, not with the plugins.

Counts, never times: which plugins analyse a long line, how many characters the pregated
regexes scan, and how often the allowlist filter runs. Findings stay detect-secrets' own
(``scan_file`` over the same text), and the two shortcuts that make long lines cheap are
checked against the real regexes and the real filter.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from detect_secrets.core.scan import scan_file
from detect_secrets.filters import allowlist
from detect_secrets.settings import get_filters, transient_settings
from detect_secrets.util.code_snippet import get_code_snippet
from hypothesis import given, settings
from hypothesis import strategies as st

from sentinel_runtime.guardrails.scanners import secrets, secrets_gates

PROSE = (
    "The deployment finished and the replicas report a healthy status. "
    "Rotate the certificate, store it in the vault, then restart the ingress. "
)
AWS = "AKIAIOSFODNN7EXAMPLE"
ALL = tuple(sorted(secrets.builtin_plugins()))


def long_line(size: int, *inserts: str) -> str:
    """Prose of about ``size`` characters on one line, ``inserts`` spread through it."""
    words = (PROSE * (size // len(PROSE) + 1))[:size].split(" ")
    step = max(1, len(words) // (len(inserts) + 1))
    for n, insert in enumerate(inserts, 1):
        words.insert(n * step + n - 1, insert)
    return " ".join(words)


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """(plugin class, line length) for every plugin ``analyze_line`` the engine runs."""
    calls: list[tuple[str, int]] = []
    for plugin in secrets.engine().plugins:

        def analyze_line(
            filename: str,
            line: str,
            line_number: int = 0,
            context: object = None,
            _original: Callable[..., object] = plugin.analyze_line,
            _name: str = type(plugin).__name__,
        ) -> object:
            calls.append((_name, len(line)))
            return _original(filename=filename, line=line, line_number=line_number, context=context)

        # detect-secrets injects arguments by these names (it reads them itself from methods)
        analyze_line.injectable_variables = {"filename", "line", "line_number", "context"}  # type: ignore[attr-defined]
        monkeypatch.setattr(plugin, "analyze_line", analyze_line)
    return calls


def test_only_plugins_whose_regexes_match_analyse_a_long_line(
    analysed: list[tuple[str, int]],
) -> None:
    line = long_line(20_000, f"staging key {AWS} here")
    assert {(f.secret_type, f.value) for f in secrets.engine().find(line)} == {
        ("AWS Access Key", AWS)
    }
    # Before: every default plugin (23) ran its regexes over all 20 KB.
    assert [name for name, _ in analysed] == ["AWSKeyDetector"]


class CountingPattern:
    """A compiled regex that adds up the characters its searches may read."""

    def __init__(self, pattern: re.Pattern[str], counter: list[int]) -> None:
        self.pattern, self.counter = pattern, counter
        self.flags = pattern.flags

    def search(self, string: str, pos: int = 0) -> re.Match[str] | None:
        self.counter[0] += len(string) - pos
        return self.pattern.search(string, pos)

    def match(self, string: str, pos: int = 0) -> re.Match[str] | None:
        self.counter[0] += 1  # one start; these regexes fail within a few characters
        return self.pattern.match(string, pos)

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        return self.pattern.finditer(string)


# detect-secrets' assignment regexes ("cloudant_password = ..."), the costliest per
# character: they open with a lookbehind, so every position of the line is tried.
ASSIGNMENT = r"(?:(?<=\W)|(?<=^))"


def pregated_work(line: str) -> int:
    """Characters the assignment regexes may read while the default engine scans ``line``."""
    engine = secrets.engine()
    counter = [0]
    gates = tuple(
        replace(g, regex=CountingPattern(g.regex, counter))
        if g.regex.pattern.startswith(ASSIGNMENT)
        else g
        for g in engine.gates
    )
    original = engine.gates
    engine.gates = gates
    try:
        engine.find(line)
    finally:
        engine.gates = original
    return counter[0]


@pytest.mark.parametrize("insert", ["the key", f"key {AWS}"], ids=["clean", "with-secret"])
def test_assignment_regexes_read_near_their_literal_not_the_whole_line(insert: str) -> None:
    # One "key" wakes the cloud-key detectors; before, each of their five regexes then read
    # the whole line (40 KB here, in both passes for the clean line).
    short, longer = long_line(2_000, insert), long_line(40_000, insert)
    assert short.count("key") == longer.count("key") == 1
    assert 0 < pregated_work(longer) <= pregated_work(short) + 10
    assert pregated_work(longer) < len(longer) // 100


@pytest.fixture
def allowlist_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Lengths of the lines the allowlist filter is asked about, through its real code."""
    calls: list[int] = []
    real = allowlist.is_line_allowlisted

    @functools.wraps(real)  # same name: the engine's filter pregate keys on it
    def is_line_allowlisted(filename: str, line: str, context: object) -> bool:
        calls.append(len(line))
        return real(filename, line, context)  # type: ignore[arg-type]

    monkeypatch.setattr(allowlist, "is_line_allowlisted", is_line_allowlisted)
    get_filters.cache_clear()  # detect-secrets imports its filters by name, once
    yield calls
    monkeypatch.undo()
    get_filters.cache_clear()


def test_the_allowlist_filter_runs_once_per_line_not_once_per_secret(
    allowlist_calls: list[int],
) -> None:
    keys = [f"AKIA{n:016d}" for n in range(30)]
    line = long_line(10_000, "#pragma once", *keys)  # "pragma" in the line: the filter runs
    assert {f.value for f in secrets.engine().find(line)} == set(keys)
    assert allowlist_calls == [len(line)]  # before: 31 times, once more per secret


def test_the_allowlist_filter_is_skipped_without_the_word_pragma(
    allowlist_calls: list[int], tmp_path: Path
) -> None:
    line = long_line(10_000, AWS)
    assert {f.value for f in secrets.engine().find(line)} == {AWS}
    assert allowlist_calls == []
    # With the pragma it runs (the line pass drops the key; the eager pass, which rewrites
    # the line as an INI value, finds it again, as detect-secrets' own file scan does).
    line += "  # pragma: allowlist secret"
    found = {(f.secret_type, f.value) for f in secrets.engine().find(line)}
    assert found == file_verdict(line, secrets.default_plugins(), tmp_path)
    assert allowlist_calls


COMMENTS = ["#", "//", "/*", "*/", "'", "--", "<!--", "-->", ""]
WORDS = ["pragma", "pragma:", "PRAGMA", "pragm", "allowlist", "whitelist", "nextline"]
WORDS += ["secret", "-", " ", "\t", ":", "x = 1"]


@settings(max_examples=400, deadline=None, database=None)
@given(
    parts=st.lists(st.sampled_from(COMMENTS + WORDS), max_size=8),
    previous=st.lists(st.sampled_from(COMMENTS + WORDS), max_size=8),
)
def test_allowlist_filter_needs_the_pregate_literal(parts: list[str], previous: list[str]) -> None:
    (literal,) = secrets_gates.FILTER_PREGATES.values()
    line, before = " ".join(parts), " ".join(previous)
    context = get_code_snippet([before, line], 2)
    if allowlist.is_line_allowlisted(secrets.VIRTUAL_FILENAME, line, context):
        assert literal in line or literal in before


def test_the_filter_pregate_names_a_real_filter() -> None:
    names = {f"{f.__module__}.{f.__qualname__}" for f in get_filters()}
    assert set(secrets_gates.FILTER_PREGATES) <= names


@pytest.mark.parametrize(
    ("pattern", "literals", "reach"),
    [
        pytest.param(r"(?:(?<=\W)|(?<=^))(?:\[|)(?:cl|clou)(?:key|pass)", ("key", "pass"), 5),
        pytest.param(r"\d{8,10}:[A-Z]{3}", (":",), 10),
        pytest.param(r"[\w]+:key", ("key",), None),  # unbounded before the literal
        pytest.param(r"(?i)piKEY", ("pi",), None),  # "i" folded: dotless i matches
    ],
)
def test_literal_reach(pattern: str, literals: tuple[str, ...], reach: int | None) -> None:
    regex = re.compile(pattern)
    folded = bool(regex.flags & re.IGNORECASE)  # as the engine's gates: folded when IGNORECASE
    assert secrets_gates.literal_reach(regex, literals, folded) == reach


SHAPES = [
    "cloudant_password = 'qmwnebrvtcyxuzialskdjfhg'",
    "cl-api-key: " + "0123456789abcdef" * 4,
    "ibm_cloud_iam_key = 'abcdefghijABCDEFGHIJ0123456789_-abcdefghijkl'",
    "ibm_cos_hmac_secret_access_key = '" + "0123456789abcdef" * 3 + "'",
    "softlayer_api_key = " + "0123456789abcdef" * 4,
    "https://api.softlayer.com/soap/v3.1/" + "0123456789abcdef" * 4,
    "1234567890:AAEhBOweik6ad9r_QXMENQjcrGbqCr4K-sQ",
    "0123456789abcdef0123456789abcdef-us12",
    "xoxb-123456789012-1234567890123-AbCdEfGh",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    ' AKCp8jQ8abcdefghij"',
]
REACHED = [g for g in secrets.engine(ALL).gates if getattr(g, "reach", None) is not None]


def test_most_pregated_regexes_get_a_reach() -> None:
    assert len(REACHED) >= 12


@pytest.mark.parametrize("gate", REACHED, ids=[g.regex.pattern[:24] for g in REACHED])
@settings(max_examples=60, deadline=None, database=None)
@given(
    shape=st.sampled_from(SHAPES),
    cut=st.integers(0, 6),
    case=st.sampled_from([str, str.upper, str.swapcase]),
    glue=st.sampled_from([" ", "", '"', "=", "\u017f", "\u212a"]),
    padding=st.integers(0, 3000),
)
def test_search_near_literals_agrees_with_a_full_search(
    gate: secrets_gates.Gate,
    *,
    shape: str,
    cut: int,
    case: Callable[[str], str],
    glue: str,
    padding: int,
) -> None:
    line = long_line(padding) + glue + case(shape[cut:]) + glue + long_line(padding // 2)
    haystack = line.casefold() if gate.folded else line
    verdict = gate.search_near_literals(line, haystack)
    assert verdict in (None, bool(gate.regex.search(line)))


def file_verdict(text: str, names: tuple[str, ...], directory: Path) -> set[tuple[str, str]]:
    path = directory / secrets.VIRTUAL_FILENAME
    path.write_text(text, encoding="utf-8", newline="")
    with transient_settings({"plugins_used": [{"name": name} for name in names]}):
        return {(s.type, s.secret_value or "") for s in scan_file(str(path))}


@pytest.mark.parametrize("names", [None, ALL], ids=["default-plugins", "all-plugins"])
@pytest.mark.parametrize(
    "inserts",
    [
        pytest.param((f"key {AWS}",), id="aws"),
        pytest.param(("cloudant_password = 'qmwnebrvtcyxuzialskdjfhg'",), id="cloudant"),
        pytest.param(("softlayer_api_key = " + "0123456789abcdef" * 4,), id="softlayer"),
        pytest.param((AWS, 'password = "hunter2isgreat"', "1234567890:" + "A" * 35), id="mix"),
        pytest.param((AWS, "# pragma: allowlist secret"), id="allowlisted"),
        pytest.param((), id="clean"),
    ],
)
def test_long_line_findings_are_detect_secrets_own(
    names: tuple[str, ...] | None, inserts: tuple[str, ...], tmp_path: Path
) -> None:
    plugin_names = names or secrets.default_plugins()
    line = long_line(8_000, *inserts)
    found = {(f.secret_type, f.value) for f in secrets.engine(plugin_names).find(line)}
    assert found == file_verdict(line, plugin_names, tmp_path)
