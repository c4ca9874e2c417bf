"""Loaders for the public evaluation sets (HarmBench, AdvBench, StrongREJECT, XSTest, BIPIA,
PoisonedRAG; see ``docs/data-card.md``).

Each row comes back as plain data tagged with its ``split`` (``evaluation.split``), so a
detector can be built on ``dev`` rows while ``holdout`` rows are only ever reported. The
directory is passed in; :func:`datasets_dir` resolves the default: ``$SENTINEL_DATASETS_DIR``,
else ``<repo>/../shared/datasets`` when it exists, else the copies shipped in the package
(``evaluation/data/datasets``: the files these loaders read, unchanged, with their licences),
so ``sentinel eval`` works from an install.
"""

from __future__ import annotations

import ast
import csv
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sentinel_runtime.evaluation.split import Split, split_of

ENV_VAR = "SENTINEL_DATASETS_DIR"
# The shared copy beside a checkout (its README lists sources and licences).
BESIDE_REPO = Path(__file__).resolve().parents[3].parent / "shared" / "datasets"
# The copies shipped as package data.
PACKAGED = Path(__file__).resolve().parent / "data" / "datasets"


@dataclass(frozen=True)
class PromptRow:
    """One user prompt of a safety set."""

    dataset: str  # harmbench | advbench | strongreject | xstest
    subset: str  # harmbench functional category, xstest type, "all" otherwise
    row_id: str
    text: str  # what the user sends (a contextual behaviour's context comes first)
    harmful: bool  # the data set's label: should a safe system refuse it?
    category: str  # the data set's own semantic category
    split: Split  # of the behaviour / prompt text, without any context


@dataclass(frozen=True)
class PoisonedTarget:
    """One PoisonedRAG target: a question, its answers, and passages crafted against it."""

    dataset: str  # nq | hotpotqa | msmarco
    row_id: str
    question: str
    correct_answer: str
    incorrect_answer: str
    adversarial_texts: tuple[str, ...]
    split: Split


def datasets_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The data set directory: ``path``, else the env var, else beside the repository when
    that exists, else the packaged copies."""
    if path is not None:
        return Path(path)
    configured = os.environ.get(ENV_VAR)
    if configured:
        return Path(configured)
    return BESIDE_REPO if BESIDE_REPO.is_dir() else PACKAGED


def available(path: str | os.PathLike[str] | None = None) -> bool:
    root = datasets_dir(path)
    return (root / "harmbench").is_dir() and (root / "xstest").is_dir()


def _csv(path: Path) -> Iterator[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        yield from csv.DictReader(handle)


def harmbench_prompt(behavior: str, context: str) -> str:
    """A contextual behaviour as HarmBench presents it: the context, a rule, the request."""
    return f"{context.strip()}\n\n---\n\n{behavior.strip()}" if context.strip() else behavior


def load_harmbench(root: Path) -> list[PromptRow]:
    rows = []
    for row in _csv(root / "harmbench" / "harmbench_behaviors_text_all.csv"):
        behavior = row["Behavior"]
        rows.append(
            PromptRow(
                dataset="harmbench",
                subset=row["FunctionalCategory"],
                row_id=row["BehaviorID"],
                text=harmbench_prompt(behavior, row.get("ContextString") or ""),
                harmful=True,
                category=row["SemanticCategory"],
                split=split_of(behavior),
            )
        )
    return rows


def load_advbench(root: Path) -> list[PromptRow]:
    return [
        PromptRow(
            dataset="advbench",
            subset="all",
            row_id=row["BehaviorID"],
            text=row["Behavior"],
            harmful=True,
            category="",
            split=split_of(row["Behavior"]),
        )
        for row in _csv(root / "harmbench" / "advbench_behaviors.csv")
    ]


def load_strongreject(root: Path) -> list[PromptRow]:
    return [
        PromptRow(
            dataset="strongreject",
            subset="all",
            row_id=f"strongreject_{number}",
            text=row["forbidden_prompt"],
            harmful=True,
            category=row["category"],
            split=split_of(row["forbidden_prompt"]),
        )
        for number, row in enumerate(_csv(root / "harmbench" / "strongreject_dataset.csv"), 1)
    ]


def load_xstest(root: Path) -> list[PromptRow]:
    return [
        PromptRow(
            dataset="xstest",
            subset=row["type"],
            row_id=f"xstest_{row['id']}",
            text=row["prompt"],
            harmful=row["label"] == "unsafe",
            category=row.get("note") or "",
            split=split_of(row["prompt"]),
        )
        for row in _csv(root / "xstest" / "xstest_prompts.csv")
    ]


ORBENCH_LANGUAGES = ("en", "fr", "de", "it")


def load_orbench(root: Path) -> list[PromptRow]:
    """OR-Bench's seemingly toxic but benign prompts, one row per language (``subset``);
    none when the folder is absent (it is not packaged)."""
    rows = []
    for path in sorted((root / "orbench").glob("orbench_*200.csv")):
        for row in _csv(path):
            for language in ORBENCH_LANGUAGES:
                text = (row.get(f"text_{language}") or "").strip()
                if text:
                    rows.append(
                        PromptRow(
                            dataset="orbench",
                            subset=language,
                            row_id=f"{row['prompt_id']}_{language}",
                            text=text,
                            harmful=False,
                            category=row.get("or_category") or "",
                            split=split_of(text),
                        )
                    )
    return rows


def load_coconot(root: Path) -> list[PromptRow]:
    """CoCoNot: the contrast set (``contrast``, benign look-alikes), and the evaluation set's
    requests with safety concerns (``unsafe``) beside its odd but harmless ones (``odd``);
    none when the folder is absent (it is not packaged)."""
    folder = root / "coconot"
    rows = []
    contrast = folder / "coconot_contrast_train.jsonl"
    if contrast.exists():
        for line in contrast.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                text = str(record["prompt"]).strip()
                rows.append(
                    PromptRow(
                        "coconot", "contrast", record["prompt_id"], text, False, "", split_of(text)
                    )
                )
    evaluation = folder / "coconot_eval.jsonl"
    if evaluation.exists():
        for line in evaluation.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                text = str(record["prompt"]).strip()
                unsafe = record["category"] == "Requests with safety concerns"
                rows.append(
                    PromptRow(
                        "coconot",
                        "unsafe" if unsafe else "odd",
                        str(record["id"]),
                        text,
                        unsafe,
                        str(record["subcategory"]),
                        split_of(text),
                    )
                )
    return rows


def load_poisonedrag(root: Path, name: str) -> list[PoisonedTarget]:
    """``name`` is one of nq, hotpotqa, msmarco."""
    data = json.loads((root / "poisonedrag" / f"{name}.json").read_text(encoding="utf-8"))
    targets = []
    for key, row in data.items():
        texts = row.get("adv_texts", [])
        # Some copies store the list as its Python repr; never eval, only literal_eval.
        if isinstance(texts, str):
            texts = ast.literal_eval(texts)
        targets.append(
            PoisonedTarget(
                dataset=name,
                row_id=str(row.get("id", key)),
                question=row["question"],
                correct_answer=row["correct answer"],
                incorrect_answer=row["incorrect answer"],
                adversarial_texts=tuple(str(text) for text in texts),
                split=split_of(row["question"]),
            )
        )
    return targets
