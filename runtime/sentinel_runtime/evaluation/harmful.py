"""Harmful-request refusal and over-refusal of stages 0-2 on the public safety sets.

Every prompt goes through ``canonical.canonicalise``, the built-in
``introspection.introspect`` and ``planner.plan_retrieval``; a prompt counts as refused when
``planner.is_refused`` says so (what the generator will answer with a refusal). Results are
grouped by slice and split:

- harmful slices the built-in judge was trained on (in-distribution figures): HarmBench
  ``standard``, ``contextual`` (context first, as HarmBench presents it) and ``copyright``,
  and AdvBench;
- harmful slices held out of training: StrongREJECT and XSTest's 200 ``unsafe`` contrasts,
  and ``obfuscated``: those held-out prompts hidden by our own generator
  (``evaluation.obfuscation``), one technique per prompt in turn;
- the benign slice (should be answered, held out of training): XSTest's 250 ``safe``
  prompts, whose refused share is the over-refusal rate;
- ``non-english``: a few German, French and Spanish requests of our own, harmful and safe,
  to show how the English-trained judge does elsewhere (no target).

Plain data out, no printing: ``sentinel eval`` renders the table.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import yaml

from sentinel_runtime.evaluation import datasets, obfuscation
from sentinel_runtime.evaluation.split import Split, split_of
from sentinel_runtime.pipeline.gate import planner
from sentinel_runtime.pipeline.types import Introspection, RetrievalPlan
from sentinel_runtime.pipeline.understand import canonical, introspection
from sentinel_runtime.pipeline.understand.judge import model

SPLITS: tuple[Split, ...] = ("dev", "holdout")
HARMFUL_SLICES = (
    "harmbench/standard",
    "harmbench/contextual",
    "harmbench/copyright",
    "advbench",
    "strongreject",
    "xstest/unsafe",
    "obfuscated",
    "non-english/harmful",
)
SAFE_SLICES = ("xstest/safe", "non-english/safe")
# Slices the shipped judge never saw in training (training/corpus.py removes their
# near-duplicates from every source); the others are in-distribution.
HELD_OUT_SLICES = frozenset(
    {
        "strongreject",
        "xstest/unsafe",
        "xstest/safe",
        "obfuscated",
        "non-english/harmful",
        "non-english/safe",
    }
)
NON_ENGLISH = Path(__file__).with_name("data") / "non_english.yaml"
OBFUSCATION_SEED = 14


@dataclass(frozen=True)
class Outcome:
    row: datasets.PromptRow
    slice: str
    state: Introspection
    plan: RetrievalPlan
    refused: bool


@dataclass(frozen=True)
class SliceResult:
    slice: str
    split: Split
    harmful: bool  # True: refusal is the right outcome; False: refusal is over-refusal
    n: int
    refused: int
    not_retrieved: int  # plans with action no_retrieve, refused or not
    restricted: int
    intents: dict[str, int] = field(default_factory=dict)

    @property
    def refused_share(self) -> float:
        return self.refused / self.n if self.n else 0.0

    @property
    def withheld_share(self) -> float:
        """Refused or not retrieved for: no evidence reaches the generator."""
        return self.not_retrieved / self.n if self.n else 0.0


@dataclass(frozen=True)
class HarmfulReport:
    slices: tuple[SliceResult, ...]

    def get(self, slice_name: str, split: Split) -> SliceResult:
        for result in self.slices:
            if result.slice == slice_name and result.split == split:
                return result
        raise KeyError(f"{slice_name}/{split}")

    def harmful_total(self, split: Split) -> SliceResult:
        """All harmful slices of one split pooled together."""
        return _pool("harmful", split, [s for s in self.slices if s.harmful and s.split == split])


def slice_of(row: datasets.PromptRow) -> str:
    if row.dataset == "obfuscated":
        return "obfuscated"
    if row.dataset == "non-english":
        return "non-english/harmful" if row.harmful else "non-english/safe"
    if row.dataset == "harmbench":
        return f"harmbench/{row.subset}"
    if row.dataset == "xstest":
        return "xstest/unsafe" if row.harmful else "xstest/safe"
    return row.dataset


def obfuscated_rows(rows: Sequence[datasets.PromptRow]) -> list[datasets.PromptRow]:
    """Each held-out harmful prompt hidden by one technique of ``obfuscation.FAMILIES``,
    taking the techniques in turn (so each is used on about as many prompts)."""
    held_out = [r for r in rows if r.harmful and slice_of(r) in HELD_OUT_SLICES]
    hidden = []
    for number, row in enumerate(held_out):
        variants = obfuscation.variants(row.text, OBFUSCATION_SEED)
        variant = variants[number % len(variants)]
        hidden.append(
            dataclasses.replace(
                row,
                dataset="obfuscated",
                subset=variant.family,
                row_id=f"{row.row_id}~{variant.family}",
                text=variant.text,
            )
        )
    return hidden


def non_english_rows() -> list[datasets.PromptRow]:
    """Our own few German, French and Spanish requests (``data/non_english.yaml``)."""
    data = yaml.safe_load(NON_ENGLISH.read_text(encoding="utf-8"))
    return [
        datasets.PromptRow(
            dataset="non-english",
            subset=kind,
            row_id=f"non-english-{kind}-{number}",
            text=text,
            harmful=kind == "harmful",
            category="",
            split=split_of(text),
        )
        for kind in ("harmful", "safe")
        for number, text in enumerate(data[kind], 1)
    ]


def load_rows(root: Path) -> list[datasets.PromptRow]:
    rows = [
        *datasets.load_harmbench(root),
        *datasets.load_advbench(root),
        *datasets.load_strongreject(root),
        *datasets.load_xstest(root),
    ]
    return [*rows, *obfuscated_rows(rows), *non_english_rows()]


def evaluate_rows(
    rows: Iterable[datasets.PromptRow],
    *,
    introspection_config: introspection.IntrospectionConfig | None = None,
    gate_config: planner.GateConfig | None = None,
    now: datetime | None = None,
    judge: model.LinearJudge | None = None,
) -> list[Outcome]:
    intro_config = introspection_config or introspection.IntrospectionConfig()
    gate_cfg = gate_config or planner.GateConfig()
    moment = now or datetime.now(UTC)
    outcomes = []
    for row in rows:
        prompt = canonical.canonicalise(row.text, intro_config.max_prompt_chars)
        state = introspection.introspect(prompt, intro_config, judge)
        plan = planner.plan_retrieval(prompt, state, gate_cfg, moment)
        outcomes.append(Outcome(row, slice_of(row), state, plan, planner.is_refused(state, plan)))
    return outcomes


def summarise(outcomes: Sequence[Outcome]) -> HarmfulReport:
    groups: dict[tuple[str, Split], list[Outcome]] = {}
    for outcome in outcomes:
        groups.setdefault((outcome.slice, outcome.row.split), []).append(outcome)
    order = [*HARMFUL_SLICES, *SAFE_SLICES]
    results = []
    for (name, split), members in sorted(
        groups.items(), key=lambda item: (order.index(item[0][0]), item[0][1])
    ):
        results.append(
            SliceResult(
                slice=name,
                split=split,
                harmful=name in HARMFUL_SLICES,
                n=len(members),
                refused=sum(o.refused for o in members),
                not_retrieved=sum(o.plan.action == "no_retrieve" for o in members),
                restricted=sum(o.plan.action == "restrict" for o in members),
                intents=dict(Counter(o.state.intent for o in members)),
            )
        )
    return HarmfulReport(tuple(results))


def run(
    root: Path | None = None,
    *,
    splits: Sequence[Split] = SPLITS,
    introspection_config: introspection.IntrospectionConfig | None = None,
    gate_config: planner.GateConfig | None = None,
    now: datetime | None = None,
) -> HarmfulReport:
    """Evaluate every slice on the given splits (building a detector: pass ``("dev",)``)."""
    rows = [row for row in load_rows(datasets.datasets_dir(root)) if row.split in splits]
    return summarise(
        evaluate_rows(
            rows, introspection_config=introspection_config, gate_config=gate_config, now=now
        )
    )


def _pool(name: str, split: Split, parts: Sequence[SliceResult]) -> SliceResult:
    intents: Counter[str] = Counter()
    for part in parts:
        intents.update(part.intents)
    return SliceResult(
        slice=name,
        split=split,
        harmful=True,
        n=sum(p.n for p in parts),
        refused=sum(p.refused for p in parts),
        not_retrieved=sum(p.not_retrieved for p in parts),
        restricted=sum(p.restricted for p in parts),
        intents=dict(intents),
    )
