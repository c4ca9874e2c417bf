"""The training corpus: every source's rows, deduplicated against every evaluation set.

Evaluation sets (never trained on): StrongREJECT and XSTest (the judge's held-out
measurement), BIPIA's attacks and PoisonedRAG's questions (the evidence filter's). A
training row near any of their texts is removed and counted (``dedup.Overlap``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sentinel_runtime.evaluation import datasets, injection
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


def build(root: Path | None = None, *, seed: int) -> Corpus:
    data_root = datasets.datasets_dir(root)
    public, jailbreaks = sources.load_public(data_root, seed)
    own = templates.rows(seed)
    wrapped = templates.wrap(jailbreaks, own, seed)
    questions = templates.as_questions(public, seed)
    index = dedup.EvaluationIndex(evaluation_texts(data_root))
    rows, overlap = dedup.deduplicate([*public, *questions, *own, *wrapped], index)
    return Corpus(tuple(rows), overlap, len(index))
