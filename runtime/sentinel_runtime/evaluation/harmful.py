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
- ``non-english``: German, French, Italian and Spanish requests of our own, harmful and
  safe, held out of training (``by_language`` splits them per language).

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
    "coconot/unsafe",
)
SAFE_SLICES = (
    "xstest/safe",
    "non-english/safe",
    "orbench/en",
    "orbench/fr",
    "orbench/de",
    "orbench/it",
    "coconot/contrast",
    "coconot/odd",
)
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
        # Held out of the linear judge (training/sources.py: linear=False); the encoder
        # reads them in training, so they do not measure it.
        "coconot/unsafe",
        "coconot/contrast",
        "coconot/odd",
        "orbench/en",
        "orbench/fr",
        "orbench/de",
        "orbench/it",
    }
)
# The held-out harmful prompts the obfuscated variants are made of.
OBFUSCATED_FROM = frozenset({"strongreject", "xstest/unsafe"})
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
    # Language -> kind -> (refused, n) of the non-English rows, both splits together.
    languages: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)

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
    if row.dataset in ("orbench", "coconot"):
        return f"{row.dataset}/{row.subset}"
    return row.dataset


def obfuscated_rows(rows: Sequence[datasets.PromptRow]) -> list[datasets.PromptRow]:
    """Each held-out harmful prompt hidden by one technique of ``obfuscation.FAMILIES``,
    taking the techniques in turn (so each is used on about as many prompts)."""
    held_out = [r for r in rows if r.harmful and slice_of(r) in OBFUSCATED_FROM]
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
    """Our own German, French, Italian and Spanish requests (``data/non_english.yaml``);
    ``subset`` is the language."""
    data = yaml.safe_load(NON_ENGLISH.read_text(encoding="utf-8"))
    return [
        datasets.PromptRow(
            dataset="non-english",
            subset=language,
            row_id=f"non-english-{kind}-{language}-{number}",
            text=text,
            harmful=kind == "harmful",
            category="",
            split=split_of(text),
        )
        for kind in ("harmful", "safe")
        for language, texts in data[kind].items()
        for number, text in enumerate(texts, 1)
    ]


def by_language(outcomes: Iterable[Outcome]) -> dict[str, dict[str, tuple[int, int]]]:
    """Language -> kind (``harmful``, ``safe``) -> (refused, n) over the non-English rows."""
    found: dict[str, dict[str, list[int]]] = {}
    for outcome in outcomes:
        if outcome.row.dataset != "non-english":
            continue
        kind = "harmful" if outcome.row.harmful else "safe"
        counts = found.setdefault(outcome.row.subset, {}).setdefault(kind, [0, 0])
        counts[0] += int(outcome.refused)
        counts[1] += 1
    return {
        language: {kind: (c[0], c[1]) for kind, c in kinds.items()}
        for language, kinds in sorted(found.items())
    }


def load_rows(root: Path) -> list[datasets.PromptRow]:
    rows = [
        *datasets.load_harmbench(root),
        *datasets.load_advbench(root),
        *datasets.load_strongreject(root),
        *datasets.load_xstest(root),
    ]
    lookalikes = [*datasets.load_orbench(root), *datasets.load_coconot(root)]
    return [*rows, *obfuscated_rows(rows), *non_english_rows(), *lookalikes]


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
    outcomes = evaluate_rows(
        rows, introspection_config=introspection_config, gate_config=gate_config, now=now
    )
    return dataclasses.replace(summarise(outcomes), languages=by_language(outcomes))


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
