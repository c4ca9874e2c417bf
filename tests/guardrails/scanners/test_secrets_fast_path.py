"""``secrets`` scanner: the per-answer shortcuts give what the code before them gave.

Each shortcut is checked against a copy of the code it replaced (kept here, as it was), on
the secrets evaluation set, every string literal of the guardrails tests and generated
texts; then the whole scanner is run with every old piece patched back in, and its results
must not move."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scanner_corpus import corpus

from sentinel_runtime.guardrails.detectors import Detection, assignments, detector_set, private_keys
from sentinel_runtime.guardrails.scanners import secrets, secrets_gates
from sentinel_runtime.guardrails.scanners.secrets import SecretsParams
from sentinel_runtime.guardrails.scanners.secrets_gates import EAGER_ADDED, Gate, GateLiterals

ALL = tuple(sorted(secrets.builtin_plugins()))
ENGINES = [pytest.param(None, id="default-plugins"), pytest.param(ALL, id="all-plugins")]
# Pieces that open gates, alone or many times over, with line breaks of every kind.
PIECES = [
    ".",
    ":",
    "1:",
    "key",
    "KEY",
    "Key",
    "pass",
    "token",
    "AKIA",
    "AKC",
    "AP",
    "APB",
    "gh",
    "ghp_",
    "glpat-",
    "xox",
    "-us",
    "//",
    "sk-",
    "sk_live_",
    "SK",
    "AC",
    "%(",
    "[s]",
    "= ",
    '"',
    "'",
    "`",
    "eyJ",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "\n",
    "\r",
    "\r\n",
    "\u2028",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x85",
    "  ",
    "\t",
    "İ",
    "ß",
    "\u212a",
    "\u017f",
    "😀",
    "٣",
    "password = hunter2isgreat",
    "api_key: 'abcdEFGH1234ijkl'",
    "AKIAIOSFODNN7EXAMPLE",
]
TEXTS = st.lists(st.sampled_from(PIECES) | st.text(max_size=5), max_size=12).map("".join)
DENSE = [
    "." * 5000,
    "key:" * 2000,
    "AP gh // " * 800,
    "a.b:c " * 3000,
    ("PASS " * 300) + "AKIAIOSFODNN7EXAMPLE",
]
PROPERTY = settings(max_examples=300, deadline=None, database=None)


def texts() -> list[str]:
    return [*corpus(), *PIECES, *DENSE, ""]


# -- the code the shortcuts replaced, as it was ---------------------------------------------


def old_readlines(text: str) -> list[str]:
    return io.StringIO(text, newline=None).readlines()


def old_possible(literals: GateLiterals, text: str) -> list[int]:
    chosen = set(literals._always)
    for literal, gates in literals._plain:
        if literal in text:
            chosen.update(gates)
    if literals._folded:
        casefolded = text.casefold()
        for literal, gates in literals._folded:
            if literal in casefolded:
                chosen.update(gates)
    return sorted(chosen)


def old_eager_can_find(engine: secrets._DetectSecretsEngine):
    """EagerTriggers as built before: literal alternations and Telegram's ``\\d:``."""
    needs = {**secrets_gates.EAGER_NEEDS, "TelegramBotTokenDetector": re.compile(r"\d:")}
    names = [type(plugin).__name__ for plugin in engine.plugins]
    always = False
    plain: set[str] = set()
    folded: set[str] = set()
    regexes: list[re.Pattern[str]] = []
    for gate in engine.gates:
        name = names[gate.plugin]
        if name in secrets_gates.EAGER_SELF_CONTAINED:
            regexes.append(gate.regex)
            continue
        need = needs.get(name)
        if need is not None:
            if need not in regexes:
                regexes.append(need)
            continue
        literals = gate.any_of or gate.prefixes
        if not literals or any(set(lit) <= EAGER_ADDED for lit in literals):
            always = True
        (folded if gate.folded else plain).update(literals)

    def alternation(found: set[str]) -> re.Pattern[str] | None:
        ordered = sorted(found, key=len, reverse=True)
        return re.compile("|".join(map(re.escape, ordered))) if found else None

    plain_re, folded_re = alternation(plain), alternation(folded)

    def can_find(text: str) -> bool:
        if always or "%(" in text:
            return True
        if plain_re is not None and plain_re.search(text):
            return True
        if folded_re is not None and folded_re.search(text.casefold()):
            return True
        return any(pattern.search(text) for pattern in regexes)

    return can_find


def old_search_near_literals(self: Gate, line: str, haystack: str) -> bool | None:
    if self.reach is None or len(haystack) != len(line):
        return None
    starts: set[int] = set()
    for literal in self.any_of:
        at = haystack.find(literal)
        while at != -1:
            starts.update(range(max(0, at - self.reach), at + 1))
            if len(starts) * secrets_gates.WINDOW_START_COST > len(line):
                return None
            at = haystack.find(literal, at + 1)
    return any(self.regex.match(line, start) for start in sorted(starts))


def old_private_keys(text: str) -> Iterator[Detection]:
    blocks: list[tuple[int, int]] = []
    for begin in private_keys.BEGIN.finditer(text):
        if blocks and begin.start() < blocks[-1][1]:
            continue
        end = private_keys.END.search(
            text, begin.end(), min(len(text), begin.end() + private_keys.MAX_BLOCK)
        )
        stop = (
            end.end()
            if end is not None
            else private_keys._trimmed(text, private_keys.BODY_AFTER.match(text, begin.end()))
        )
        blocks.append((begin.start(), stop))
        yield Detection(private_keys.NAME, begin.start(), stop)
    for end in private_keys.END.finditer(text):
        if any(start <= end.start() < stop for start, stop in blocks):
            continue
        start = private_keys._body_before(text, end.start())
        if start < end.start():
            yield Detection(private_keys.NAME, start, end.end())


# -- each shortcut against the code it replaced ---------------------------------------------


def test_file_lines_are_the_file_scans_lines_on_the_corpus() -> None:
    for text in texts():
        assert secrets.file_lines(text) == old_readlines(text), text


@PROPERTY
@given(text=TEXTS)
def test_file_lines_are_the_file_scans_lines_on_generated_texts(text: str) -> None:
    assert secrets.file_lines(text) == old_readlines(text)


@pytest.mark.parametrize("names", ENGINES)
def test_gates_opened_are_those_of_one_check_per_literal(names: tuple[str, ...] | None) -> None:
    literals = secrets.engine(names).gate_literals
    for text in texts():
        assert literals.possible(text) == old_possible(literals, text), text


@pytest.mark.parametrize("names", ENGINES)
@PROPERTY
@given(text=TEXTS, times=st.sampled_from([1, 2, 50, 400]))
def test_gates_opened_on_generated_texts(
    names: tuple[str, ...] | None, text: str, times: int
) -> None:
    literals = secrets.engine(names).gate_literals
    # Repeated, a text runs past the automaton's hit budget and is looked up literal by literal.
    assert literals.possible(text * times) == old_possible(literals, text * times)


@pytest.mark.parametrize("names", ENGINES)
def test_eager_triggers_are_the_old_alternations(names: tuple[str, ...] | None) -> None:
    engine = secrets.engine(names)
    old = old_eager_can_find(engine)
    outcomes = set()
    for text in texts():
        new = engine.eager_triggers.can_find(text)
        assert new == old(text), text
        outcomes.add(new)
    assert outcomes == {True, False} or names == ALL  # all plugins: KeywordDetector is always


@pytest.mark.parametrize("names", ENGINES)
@PROPERTY
@given(text=TEXTS)
def test_eager_triggers_on_generated_texts(names: tuple[str, ...] | None, text: str) -> None:
    engine = secrets.engine(names)
    assert engine.eager_triggers.can_find(text) == old_eager_can_find(engine)(text)


@PROPERTY
@given(text=TEXTS)
def test_ascii_lowering_is_the_table_lowering(text: str) -> None:
    assert assignments._ascii_lower(text) == text.translate(assignments._ASCII_LOWER)


def test_ascii_lowering_on_the_corpus() -> None:
    for text in texts():
        assert assignments._ascii_lower(text) == text.translate(assignments._ASCII_LOWER)


def test_private_keys_skip_no_block() -> None:
    found = 0
    for text in [*texts(), "-----END RSA PRIVATE KEY-----", "ab\n-----END PRIVATE KEY-----"]:
        new = list(private_keys.find(text))
        assert new == list(old_private_keys(text)), text
        found += bool(new)
    assert found >= 10


# -- the whole scanner, with every old piece patched back in --------------------------------


def scanners(names: tuple[str, ...] | None) -> list[secrets.SecretsScanner]:
    plugins = {"plugins": list(names)} if names else {}
    return [
        secrets.build(SecretsParams.model_validate({"redact_mode": mode, **plugins}), rewrite)
        for mode, rewrite in (("partial", True), ("all", False))
    ]


def outcomes(names: tuple[str, ...] | None, samples: list[str]) -> list[object]:
    results: list[object] = []
    for scanner in scanners(names):
        for text in samples:
            results.append((scanner.scan(text), sorted(map(repr, scanner.detections(text)))))
    return results


@pytest.mark.parametrize("names", ENGINES)
def test_the_scanner_gives_what_the_old_pieces_give(
    names: tuple[str, ...] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = texts()
    new = outcomes(names, samples)
    engine = secrets.engine(names)
    old_can_find = old_eager_can_find(engine)
    with monkeypatch.context() as patch:
        patch.setattr(secrets, "file_lines", old_readlines)
        patch.setattr(GateLiterals, "possible", old_possible)
        patch.setattr(type(engine), "_eager_pass_can_find", lambda self, text: old_can_find(text))
        patch.setattr(Gate, "search_near_literals", old_search_near_literals)
        patch.setattr(assignments, "_ascii_lower", lambda t: t.translate(assignments._ASCII_LOWER))
        patch.setattr(private_keys, "find", old_private_keys)
        detector_set.cache_clear()  # the families hold private_keys.find: rebuilt patched
        try:
            old = outcomes(names, samples)
        finally:
            detector_set.cache_clear()
    assert len(new) == len(old)
    for text, a, b in zip(samples * 2, new, old, strict=True):
        assert a == b, text
    assert sum(not result[0].valid for result in new) > 1000  # not a corpus of clean texts
