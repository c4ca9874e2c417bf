"""Harm judge latency per text: ``harm.assess_harm`` beside ``harm_reference`` (the judge
before the trigger-word index: same lexicon, every pattern searched over the whole text),
both timed in the same run on the same texts:

* prompts: every HarmBench and XSTest prompt (``evaluation.datasets`` loaders);
* 500-character chunks of ordinary English, cut at a space as a retriever indexes them:
  BIPIA email, table and code contexts, Presidio sentences, the demo corpus;
* 2,000-character texts of the same English.

Targets: chunks median <= 0.3 ms and p99 <= 1.5 ms; prompts >= 3x faster at the median.
Both judges' verdicts are compared on every text. Without ``shared/datasets`` only the demo
corpus and generated assistant text are used, and the title says so.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import harm_reference
from sentinel_runtime.evaluation import datasets
from sentinel_runtime.pipeline import harm
from stats import median, p99, table
from texts import assistant_text

DEMO_CORPUS = Path(harm.__file__).resolve().parents[1] / "demo" / "corpus.jsonl"
CHUNK = 500
LONG = 2_000


def _pieces(text: str, size: int) -> list[str]:
    """Pieces of about ``size`` characters, cut at a space."""
    pieces = []
    text = text.strip()
    while len(text) > size:
        cut = text.rfind(" ", size // 2, size)
        cut = size if cut < 0 else cut
        pieces.append(text[:cut])
        text = text[cut:].lstrip()
    return [*pieces, text] if len(text) > size // 2 else pieces


def _english(root: Path | None) -> list[str]:
    """Documents of ordinary English: the demo corpus, and the data sets when present."""
    lines = DEMO_CORPUS.read_text(encoding="utf-8").splitlines()
    documents = [json.loads(line)["text"] for line in lines if line.strip()]
    if root is None:
        return [*documents, assistant_text(20_000, with_findings=False)]
    for name in ("email_test", "table_test", "code_test"):
        for line in (root / "bipia" / f"{name}.jsonl").read_text("utf-8").splitlines():
            context = json.loads(line)["context"]
            documents.append("\n".join(context) if isinstance(context, list) else context)
    rows = json.loads((root / "presidio" / "synth_dataset_v2.json").read_text("utf-8"))
    documents.append(" ".join(row["full_text"] for row in rows))
    return documents


def _prompts(root: Path | None) -> list[str]:
    if root is None:
        return [assistant_text(size, with_findings=False, seed=size) for size in range(40, 400)]
    return [row.text for row in (*datasets.load_harmbench(root), *datasets.load_xstest(root))]


def _time(judge: Callable[[str], object], text: str) -> float:
    started = time.perf_counter()
    judge(text)
    return (time.perf_counter() - started) * 1000


def _measure(texts: list[str], rounds: int) -> tuple[list[float], list[float], int]:
    """Per-text times of both judges, each over all texts in turn (run one after the other
    text by text, the old judge's big patterns would evict the new one's from the caches),
    the first to go alternating by round so drift on a shared machine hits both alike; and
    how many texts got a different verdict."""
    times: dict[Callable[[str], object], list[float]] = {
        harm.assess_harm: [],
        harm_reference.assess_harm: [],
    }
    for round_ in range(rounds):
        order = list(times) if round_ % 2 == 0 else list(times)[::-1]
        for judge in order:
            times[judge] += [_time(judge, text) for text in texts]
    differ = sum(harm.assess_harm(text) != harm_reference.assess_harm(text) for text in texts)
    return times[harm.assess_harm], times[harm_reference.assess_harm], differ


def run(quick: bool = False) -> str:
    root = datasets.datasets_dir()
    root = root if (root / "bipia").is_dir() and datasets.available(root) else None
    started = time.perf_counter()
    harm.assess_harm("A first call reads the lexicon's patterns into the trigger index.")
    first_call = (time.perf_counter() - started) * 1000
    english = " ".join(document.strip() for document in _english(root))
    groups = {
        "prompts": _prompts(root),
        f"{CHUNK}-char chunks": [p for doc in _english(root) for p in _pieces(doc, CHUNK)],
        f"{LONG}-char texts": _pieces(english, LONG),
    }
    rows = []
    for name, texts in groups.items():
        sample = texts[:: max(1, len(texts) // 150)] if quick else texts
        new, old, differ = _measure(sample, rounds=1 if quick else 3)
        rows.append(
            [
                name,
                str(len(sample)),
                f"{median([len(text) for text in sample]):.0f}",
                f"{median(new):.3f}",
                f"{p99(new):.3f}",
                f"{median(old):.3f}",
                f"{p99(old):.3f}",
                f"{median(old) / median(new):.1f}x",
                f"{p99(old) / p99(new):.1f}x",
                "yes" if differ == 0 else f"NO ({differ} differ)",
            ]
        )
    header = [
        "texts",
        "n",
        "chars",
        "new median ms",
        "new p99 ms",
        "old median ms",
        "old p99 ms",
        "median ratio",
        "p99 ratio",
        "same verdicts",
    ]
    source = (
        "HarmBench + XSTest prompts; BIPIA contexts, Presidio sentences, demo corpus"
        if root is not None
        else "shared/datasets not found: demo corpus and generated assistant text only"
    )
    title = (
        "Harm judge per text: harm.assess_harm (new) vs harm_reference (old: whole-text "
        "search of every pattern)\n"
        f"{source}\n"
        "targets: chunks median <= 0.3 ms, p99 <= 1.5 ms; prompts >= 3x faster at the median"
    )
    return (
        table(title, header, rows)
        + f"\n(first call in this process, building the trigger index: {first_call:.0f} ms;"
        + f" host: {os.cpu_count()} cpus)"
    )


if __name__ == "__main__":
    print(run())
