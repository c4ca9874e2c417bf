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

import os
import time
from pathlib import Path

import harm_reference
from judge_speed import Args, datasets_root, english_groups, in_turn, speed_table
from sentinel_runtime.evaluation import datasets
from sentinel_runtime.pipeline.signals import harm
from texts import assistant_text


def _prompts(root: Path | None) -> list[str]:
    if root is None:
        return [assistant_text(size, with_findings=False, seed=size) for size in range(40, 400)]
    return [row.text for row in (*datasets.load_harmbench(root), *datasets.load_xstest(root))]


def _groups(root: Path | None) -> dict[str, list[Args]]:
    """Prompts, then the English chunks and long texts (the harm judge takes no query)."""
    english = {name: [(text,) for text, _ in pairs] for name, pairs in english_groups(root).items()}
    return {"prompts": [(text,) for text in _prompts(root)], **english}


def run(quick: bool = False) -> str:
    root = datasets_root("harmbench", "xstest")
    started = time.perf_counter()
    harm.assess_harm("A first call reads the lexicon's patterns into the trigger index.")
    first_call = (time.perf_counter() - started) * 1000
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
    # in_turn: text by text, the old judge's big patterns would evict the new one's from the
    # caches. Assessments are compared whole: harm_reference returns harm's HarmAssessment.
    speeds = speed_table(
        title,
        _groups(root),
        harm.assess_harm,
        harm_reference.assess_harm,
        quick=quick,
        schedule=in_turn,
    )
    return (
        speeds
        + f"\n(first call in this process, building the trigger index: {first_call:.0f} ms;"
        + f" host: {os.cpu_count()} cpus)"
    )


if __name__ == "__main__":
    print(run())
