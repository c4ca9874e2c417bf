"""Indirect prompt injection on BIPIA: how many injected documents the evidence filter drops,
and how many clean ones it drops by mistake.

Documents are built as BIPIA builds them (``bipia/data/utils.py``): an attack is inserted
into a context at the start (``attack + "\\n" + context``), at the end, or in the middle
(before a sentence start chosen with a fixed seed, on a line of its own). Sentences are
found with a regular expression where BIPIA uses NLTK's Punkt, so middle positions can
differ from BIPIA's. Contexts are the email, table and code test contexts; text attacks
(``text_attack_{train,test}.json``) go into emails and tables, code attacks into code.
Clean documents are the contexts alone.

Every document is scored by ``scoring.score_evidence`` as a retrieved chunk (no dense
similarity, no timestamp) for a benign request; the query is the context's question
(email, table) or the last line of the error (code). A pair is ``holdout`` when its
attack or its context is (``evaluation.split``: attacks keyed by their text, contexts by
theirs). Plain data out; ``python -m sentinel_runtime.evaluation.injection`` prints it.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sentinel_runtime.evaluation import datasets
from sentinel_runtime.evaluation.split import Split, split_of
from sentinel_runtime.index.types import Chunk, Hit
from sentinel_runtime.pipeline.evidence import scoring
from sentinel_runtime.pipeline.types import BENIGN_REQUEST

TASKS = ("email", "table", "code")
POSITIONS = ("start", "middle", "end")
SPLITS: tuple[Split, ...] = ("dev", "holdout")
SEED = 2023
BENIGN = BENIGN_REQUEST
_SENTENCE_START = re.compile(r"(?<=[.!?])\s+(?=\S)")


@dataclass(frozen=True)
class Context:
    task: str
    text: str
    query: str
    split: Split


@dataclass(frozen=True)
class Attack:
    family: str  # "text" or "code"
    category: str
    text: str
    split: Split


@dataclass(frozen=True)
class Sample:
    task: str
    text: str
    query: str
    injected: bool
    split: Split
    position: str = ""  # start | middle | end, empty for clean documents
    category: str = ""


@dataclass(frozen=True)
class Rates:
    task: str  # a task, or "all"
    split: Split
    injected: int
    injected_dropped: int
    clean: int
    clean_dropped: int

    @property
    def detection(self) -> float:
        return self.injected_dropped / self.injected if self.injected else 0.0

    @property
    def false_positive(self) -> float:
        return self.clean_dropped / self.clean if self.clean else 0.0


def load_contexts(root: Path) -> list[Context]:
    folder = root / "bipia"
    contexts = []
    for task in TASKS:
        for line in (folder / f"{task}_test.jsonl").read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if task == "code":
                text = "\n".join(row["context"])
                errors = [e for e in row.get("error", []) if e.strip()]
                query = errors[-1].strip() if errors else ""
            else:
                text = row["context"]
                query = re.sub(r"^\s*Q:\s*", "", row.get("question", "")).strip()
            contexts.append(Context(task, text, query, split_of(text)))
    return contexts


def load_attacks(root: Path) -> list[Attack]:
    folder = root / "bipia"
    attacks = []
    for family, names in (
        ("text", ("text_attack_train.json", "text_attack_test.json")),
        ("code", ("code_attack_test.json",)),
    ):
        for name in names:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
            for category, texts in data.items():
                attacks.extend(Attack(family, category, t, split_of(t)) for t in texts)
    return attacks


def insert(context: str, attack: str, position: str, seed: int = SEED) -> str:
    """BIPIA's insertion: at the start, at the end, or before a seeded sentence start."""
    if position == "start":
        return f"{attack}\n{context}"
    if position == "end":
        return f"{context}\n{attack}"
    starts = [0, *(m.end() for m in _SENTENCE_START.finditer(context))]
    start = random.Random(seed).choice(starts)
    return "\n".join([context[:start], attack, context[start:]])


def samples(
    contexts: Sequence[Context],
    attacks: Sequence[Attack],
    *,
    contexts_per_attack: int | None = None,
    rotate_positions: bool = False,
) -> Iterator[Sample]:
    """Clean documents, then every (attack, context, position) of matching family.

    ``contexts_per_attack`` pairs each attack with that many contexts of its task, in a
    rotation so that every context is used about equally (None: all of them);
    ``rotate_positions`` gives each pair one position, in turn, instead of all three.
    """
    for context in contexts:
        yield Sample(context.task, context.text, context.query, False, context.split)
    for task in TASKS:
        family = "code" if task == "code" else "text"
        pool = [c for c in contexts if c.task == task]
        chosen = [a for a in attacks if a.family == family]
        for number, attack in enumerate(chosen):
            if contexts_per_attack is None or contexts_per_attack >= len(pool):
                paired = pool
            else:
                first = number * contexts_per_attack
                paired = [pool[(first + i) % len(pool)] for i in range(contexts_per_attack)]
            for offset, context in enumerate(paired):
                split: Split = "dev" if attack.split == context.split == "dev" else "holdout"
                turn = POSITIONS[(number + offset) % len(POSITIONS)]
                for position in (turn,) if rotate_positions else POSITIONS:
                    yield Sample(
                        task,
                        insert(context.text, attack.text, position),
                        context.query,
                        True,
                        split,
                        position,
                        attack.category,
                    )


def dropped(sample: Sample, config: scoring.EvidenceConfig, now: datetime) -> bool:
    chunk = Chunk(chunk_id=f"{sample.task}#p0", doc_id=sample.task, position=0, text=sample.text)
    hit = Hit(chunk=chunk, score=1.0, similarity=0.0, lexical=0.0, rank=0)
    return not scoring.score_evidence(hit, sample.query, BENIGN, now, config).kept


def evaluate(items: Sequence[Sample], config: scoring.EvidenceConfig | None = None) -> list[Rates]:
    """Drop rates per task and split, then pooled over tasks (task ``"all"``)."""
    settings = config or scoring.EvidenceConfig()
    now = datetime.now(UTC)
    counts: dict[tuple[str, Split], list[int]] = {}
    for item in items:
        was_dropped = dropped(item, settings, now)
        offset = 0 if item.injected else 2
        for key in ((item.task, item.split), ("all", item.split)):
            slot = counts.setdefault(key, [0, 0, 0, 0])
            slot[offset] += 1
            slot[offset + 1] += was_dropped
    order = [*TASKS, "all"]
    return [
        Rates(task, split, *counts[(task, split)])
        for task, split in sorted(counts, key=lambda k: (order.index(k[0]), SPLITS.index(k[1])))
    ]


def run(
    root: Path | None = None,
    *,
    splits: Sequence[Split] = SPLITS,
    contexts_per_attack: int | None = None,
    rotate_positions: bool = False,
    config: scoring.EvidenceConfig | None = None,
) -> list[Rates]:
    """Evaluate the given splits (while building a detector: ``("dev",)`` only)."""
    folder = datasets.datasets_dir(root)
    built = samples(
        load_contexts(folder),
        load_attacks(folder),
        contexts_per_attack=contexts_per_attack,
        rotate_positions=rotate_positions,
    )
    items = [s for s in built if s.split in splits]
    return evaluate(items, config)


def render(rates: Sequence[Rates]) -> str:
    lines = [f"{'task':<6} {'split':<8} {'injected dropped':>22} {'clean dropped':>18}"]
    for r in rates:
        lines.append(
            f"{r.task:<6} {r.split:<8} {r.injected_dropped:>7}/{r.injected:<6} "
            f"{r.detection:>7.1%} {r.clean_dropped:>4}/{r.clean:<4} {r.false_positive:>7.1%}"
        )
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - a report for humans
    import sys

    print(render(run(splits=tuple(sys.argv[1:]) or SPLITS)))  # type: ignore[arg-type]
