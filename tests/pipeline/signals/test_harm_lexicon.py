"""The harm lexicon's data files (``data/harm_*.yaml``) hold together: every rule names a
category ``harm`` scores, signal codes are unique, the kinds the request grammar's sets name
exist, and the trigger index reads every pattern (none is searched whole at every text).
What the lexicon answers is pinned by ``test_harm_equivalence``.
"""

from __future__ import annotations

from collections import Counter

import pytest

from sentinel_runtime.pipeline.signals import harm, harm_lexicon, harm_scan


def test_every_rule_names_a_category_harm_scores() -> None:
    rules = [*harm_lexicon.MENTIONS, *harm_lexicon.ACTS, *harm_lexicon.GOALS, *harm_lexicon.PAIRS]
    assert {rule.category for rule in rules} <= set(harm.BASE)


@pytest.mark.parametrize(
    "codes",
    [
        pytest.param([rule.code for rule in harm_lexicon.MENTIONS], id="topics"),
        pytest.param([rule.code for rule in harm_lexicon.ACTS], id="acts"),
        pytest.param(
            [rule.code for rule in (*harm_lexicon.GOALS, *harm_lexicon.PAIRS)], id="goals"
        ),
        pytest.param([kind for kind, _ in harm_lexicon.PROCEDURAL], id="procedural"),
        pytest.param([kind for kind, _ in harm_lexicon.AGGRAVATORS], id="aggravators"),
        pytest.param([defuser.kind for defuser in harm_lexicon.DEFUSERS], id="defusers"),
    ],
)
def test_signal_codes_are_unique(codes: list[str]) -> None:
    assert [code for code, times in Counter(codes).items() if times > 1] == []


def test_the_request_grammar_sets_name_kinds_that_exist() -> None:
    procedural = {kind for kind, _ in harm_lexicon.PROCEDURAL} | {"steps"}
    defusers = {defuser.kind for defuser in harm_lexicon.DEFUSERS}
    assert harm_lexicon.DETAIL_PROCEDURAL <= harm_lexicon.STRONG_PROCEDURAL <= procedural
    assert defusers >= harm_lexicon.PROTECTIVE_DEFUSERS | harm_lexicon.SETTING_DEFUSERS
    assert all(0 < defuser.weight < 1 for defuser in harm_lexicon.DEFUSERS)


def test_the_index_reads_every_pattern_of_the_lexicon() -> None:
    patterns = harm_lexicon.searched()
    index = harm_scan.Index(patterns)
    unread = [
        pattern.pattern[:60]
        for pattern in patterns
        if index.plans[id(pattern)].always or index.plans[id(pattern)].needs_nothing
    ]
    assert unread == []
