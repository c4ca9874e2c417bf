"""Source-disjoint measurement of the judge: what it does on data it was not fitted on.

Four measures, side by side in one table so that overfitting shows:

- ``in_distribution``: fitted on the training sources' ``dev`` rows, scored on their
  ``holdout`` rows (the optimistic figure);
- ``leave_source_out``: for each training source, fitted without it, scored on it;
- ``leave_family_out``: for each jailbreak family, fitted without pyrit's wrappers of
  that family, scored on held-out harmful prompts (StrongREJECT, XSTest unsafe) inside
  our own wrappers of that family (``evaluation.attacks``), beside the full model;
- ``held_out``: the full model on the evaluation sets it never saw;
- ``leave_source_out_cascade`` (``sentinel judge crossval --encoder``): for each source with
  harmful rows, the linear judge and an encoder both trained without it, the cascade scored on
  it beside the linear judge alone.

A harmful or benign row counts as refused when the pipeline's own stages refuse it
(canonicalise, introspect with the model under test, gate); an injection row counts as
flagged when the model's injection head fires.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from sentinel_runtime.evaluation import attacks, datasets, harmful
from sentinel_runtime.evaluation.split import split_of
from sentinel_runtime.pipeline.gate import planner
from sentinel_runtime.pipeline.understand import canonical, introspection
from sentinel_runtime.pipeline.understand.judge import assess
from sentinel_runtime.pipeline.understand.judge.encoder import EncoderJudge
from sentinel_runtime.pipeline.understand.judge.model import LinearJudge
from sentinel_runtime.training import fit, sources, train
from sentinel_runtime.training.sources import TrainingRow

Trainer = Callable[[Sequence[TrainingRow]], LinearJudge]
FAMILIES = (
    "role_play",
    "forced_prefix",
    "narrative_camouflage",
    "instruction_override",
    "refusal_suppression",
)
_NOW = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Measure:
    measure: str  # in_distribution | leave_source_out | leave_family_out | held_out
    subject: str  # a source, a family, or an evaluation slice
    slice: str  # harmful (refused is right) | benign (refused is wrong) | injection (flagged)
    n: int
    positive: int

    @property
    def share(self) -> float:
        return self.positive / self.n if self.n else 0.0


def default_trainer(config: fit.FitConfig | None = None) -> Trainer:
    settings = config or fit.FitConfig()

    def trainer(rows: Sequence[TrainingRow]) -> LinearJudge:
        return fit.fit(rows, settings, train.thresholds_for(rows, settings), {})

    return trainer


def refused(judge: LinearJudge, text: str, cascade: EncoderJudge | None = None) -> bool:
    """Refused by the pipeline's stages with ``judge`` (and, given, the encoder ``cascade``
    on its band) in place of the shipped models, at the default policy's line."""
    config = introspection.IntrospectionConfig()
    prompt = canonical.canonicalise(text, config.max_prompt_chars)
    reading = assess.assess_request(prompt.text, judge, cascade)
    state = introspection.decide(prompt, reading, config)
    return planner.is_refused(
        state, planner.plan_retrieval(prompt, state, planner.GateConfig(), _NOW)
    )


def _score(
    judge: LinearJudge,
    rows: Iterable[TrainingRow],
    measure: str,
    subject: str,
    cascade: EncoderJudge | None = None,
) -> list[Measure]:
    counts: dict[str, list[int]] = {}
    for row in rows:
        if row.harm is not None:
            name = "harmful" if row.harm == 1 else "benign"
            entry = counts.setdefault(name, [0, 0])
            entry[0] += 1
            entry[1] += refused(judge, row.text, cascade)
        if cascade is not None:
            continue  # the encoder has no injection head
        if row.injection == 1:
            entry = counts.setdefault("injection", [0, 0])
            entry[0] += 1
            entry[1] += assess.assess_request(row.text, judge).injection
    return [Measure(measure, subject, name, n, k) for name, (n, k) in sorted(counts.items())]


def in_distribution(rows: Sequence[TrainingRow], trainer: Trainer) -> list[Measure]:
    judge = trainer([r for r in rows if split_of(r.text) == "dev"])
    holdout = [r for r in rows if split_of(r.text) == "holdout"]
    found = []
    for source in sorted({r.source for r in holdout}):
        found.extend(
            _score(judge, [r for r in holdout if r.source == source], "in_distribution", source)
        )
    return found


def leave_source_out(
    rows: Sequence[TrainingRow], trainer: Trainer, progress: Callable[[str], None]
) -> list[Measure]:
    found = []
    for group in sorted({sources.group_of(r.source) for r in rows}):
        progress(f"leave-one-source-out: fitting without {group}")
        judge = trainer([r for r in rows if sources.group_of(r.source) != group])
        # A group's sources (OR-Bench's languages) are scored apart, fitted without them all.
        for source in sorted({r.source for r in rows if sources.group_of(r.source) == group}):
            members = [r for r in rows if r.source == source]
            found.extend(_score(judge, members, "leave_source_out", source))
    return found


def leave_source_out_cascade(
    rows: Sequence[TrainingRow],
    trainer: Trainer,
    encoder_without: Callable[[str], EncoderJudge],
    progress: Callable[[str], None],
) -> list[Measure]:
    """For each source group with harmful rows: the linear judge fitted without it, alone and
    with an encoder trained and calibrated without it (``encoder_without(group)``), scored on
    it side by side (``leave_source_out`` and ``leave_source_out_cascade``)."""
    found = []
    harmful_groups = sorted({sources.group_of(r.source) for r in rows if r.harm == 1})
    for group in harmful_groups:
        progress(f"leave-one-source-out with the encoder: training without {group}")
        judge = trainer([r for r in rows if sources.group_of(r.source) != group])
        cascade = encoder_without(group)
        for source in sorted({r.source for r in rows if sources.group_of(r.source) == group}):
            members = [r for r in rows if r.source == source and r.harm is not None]
            found.extend(_score(judge, members, "leave_source_out", source))
            found.extend(_score(judge, members, "leave_source_out_cascade", source, cascade))
    return [m for m in found if m.slice != "injection"]


def held_out_payloads(root: Path) -> list[str]:
    return [
        row.text
        for row in [*datasets.load_strongreject(root), *datasets.load_xstest(root)]
        if row.harmful
    ]


def _refused_count(judge: LinearJudge, texts: Sequence[str]) -> int:
    return sum(refused(judge, text) for text in texts)


def leave_family_out(
    rows: Sequence[TrainingRow],
    trainer: Trainer,
    full: LinearJudge,
    payloads: Sequence[str],
    progress: Callable[[str], None],
) -> list[Measure]:
    found = []
    for family in FAMILIES:
        progress(f"leave-one-family-out: fitting without {family} wrappers")
        judge = trainer(
            [r for r in rows if not (r.source == "pyrit/jailbreak" and r.family == family)]
        )
        texts = [attacks.wrapped(p, family, seed=i) for i, p in enumerate(payloads)]
        found.append(
            Measure("leave_family_out", family, "harmful", len(texts), _refused_count(judge, texts))
        )
        found.append(
            Measure("with_family", family, "harmful", len(texts), _refused_count(full, texts))
        )
    return found


def held_out(full: LinearJudge, root: Path) -> list[Measure]:
    outcomes = harmful.evaluate_rows(
        [*datasets.load_strongreject(root), *datasets.load_xstest(root)], judge=full, now=_NOW
    )
    found = []
    for name in ("strongreject", "xstest/unsafe", "xstest/safe"):
        members = [o for o in outcomes if o.slice == name]
        kind = "benign" if name == "xstest/safe" else "harmful"
        found.append(Measure("held_out", name, kind, len(members), sum(o.refused for o in members)))
    return found


def run(
    rows: Sequence[TrainingRow],
    full: LinearJudge,
    root: Path,
    *,
    trainer: Trainer | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> list[Measure]:
    fitter = trainer or default_trainer()
    progress("in-distribution: fitting on the dev split")
    found = in_distribution(rows, fitter)
    found.extend(leave_source_out(rows, fitter, progress))
    found.extend(leave_family_out(rows, fitter, full, held_out_payloads(root), progress))
    found.extend(held_out(full, root))
    return found


def as_json(measures: Sequence[Measure]) -> list[dict[str, object]]:
    return [{**asdict(m), "share": round(m.share, 4)} for m in measures]


def render(measures: Sequence[Measure]) -> str:
    lines = [
        "| measure | subject | slice | n | refused / flagged |",
        "|---|---|---|---:|---:|",
    ]
    for m in measures:
        lines.append(f"| {m.measure} | {m.subject} | {m.slice} | {m.n} | {m.share:.1%} |")
    return "\n".join(lines)
