"""The training corpus: every source's rows, deduplicated against every evaluation set.

Evaluation sets (never trained on): StrongREJECT and XSTest (the judge's held-out
measurement), our own non-English requests (``evaluation/data/non_english.yaml``), BIPIA's
attacks and PoisonedRAG's questions (the evidence filter's). A
training row near any of their texts is removed and counted (``dedup.Overlap``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sentinel_runtime.evaluation import datasets, harmful, injection
from sentinel_runtime.training import dedup, sources, templates


@dataclass(frozen=True)
class Corpus:
    rows: tuple[sources.TrainingRow, ...]
    overlap: dedup.Overlap
    evaluation_texts: int


def evaluation_texts(root: Path) -> Iterator[tuple[str, str]]:
    for row in datasets.load_strongreject(root):
        yield "strongreject", row.text
    for row in datasets.load_xstest(root):
        yield "xstest", row.text
    for attack in injection.load_attacks(root):
        yield "bipia", attack.text
    for name in ("nq", "hotpotqa", "msmarco"):
        for target in datasets.load_poisonedrag(root, name):
            yield "poisonedrag", target.question
    for row in harmful.non_english_rows():
        yield "non-english", row.text


def lookalike_texts(root: Path) -> Iterator[tuple[str, str]]:
    """OR-Bench and CoCoNot: training sources of the encoder, evaluation sets of the linear
    judge."""
    for row in datasets.load_orbench(root):
        yield "orbench", row.text
    for row in datasets.load_coconot(root):
        yield "coconot", row.text


def build(root: Path | None = None, *, seed: int) -> Corpus:
    data_root = datasets.datasets_dir(root)
    public, jailbreaks = sources.load_public(data_root, seed)
    own = [
        *templates.rows(seed),
        *templates.rows(seed, templates.MULTILINGUAL, "templates-multilingual"),
    ]
    wrapped = templates.wrap(jailbreaks, own, seed)
    questions = templates.as_questions(public, seed)
    index = dedup.EvaluationIndex(evaluation_texts(data_root))
    # The linear judge never trains on OR-Bench and CoCoNot (sources.Source.linear), so they
    # measure it: its rows are deduplicated against them too, the encoder's are not.
    strict = dedup.EvaluationIndex([*evaluation_texts(data_root), *lookalike_texts(data_root)])
    everything = [*public, *questions, *own, *wrapped]
    linear, overlap = dedup.deduplicate(sources.for_linear(everything), strict)
    others, more = dedup.deduplicate(
        [r for r in everything if not sources.SOURCES[r.source].linear], index
    )
    overlap.removed.update(more.removed)
    overlap.repeats.update(more.repeats)
    return Corpus(tuple([*linear, *others]), overlap, len(strict))
