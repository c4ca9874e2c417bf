"""The encoder stage's band and thresholds, chosen on validation rows (no torch).

``sentinel judge train-encoder`` calls :func:`calibrate` on the graph it has just exported;
``sentinel judge calibrate-encoder`` calls it on a graph already written (the shipped one by
default) and rewrites only ``meta.json``'s band, thresholds and validation record, after
checking that the corpus is the one the graph was fine-tuned on.

Validation rows (never an evaluation set): the ``holdout`` rows of the linear model's sources
(harm-labelled), which set the shares the cascade may not exceed, and the benign ``holdout``
rows of the sources the linear model never trains on (``linear: false``: OR-Bench, CoCoNot's
contrast set and odd requests, our multilingual look-alikes), which the encoder did not see
either (it is fine-tuned on ``dev`` rows only) and which cap its refusals of look-alikes
(``encoder_band``). Each is read as the runtime reads a prompt: the linear model's strongest
reading (``assess.strongest_reading``, fitted on the linear sources' ``dev`` rows as for its
thresholds) and the int8 encoder's probability of that reading, one at a time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sentinel_runtime.evaluation.split import split_of
from sentinel_runtime.pipeline.understand.judge import assess
from sentinel_runtime.pipeline.understand.judge import encoder as encoder_stage
from sentinel_runtime.training import corpus, encoder_band, fit, sources, train

PLACEHOLDER = {"refuse": 0.5, "ambiguous": 0.3, "injection": 0.5}
Progress = Callable[[str], None]


def rows_digest(rows: Sequence[sources.TrainingRow]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps([row.text, row.source, row.harm], ensure_ascii=False).encode())
        digest.update(b"\n")
    return digest.hexdigest()


@dataclass(frozen=True)
class Validation:
    rows: tuple[sources.TrainingRow, ...]
    lookalike: tuple[str, ...]  # the source of a benign row the linear model never reads, or ""
    readings: tuple[assess.Readings, ...]
    thresholds: dict[str, float]  # the linear model's, from its own sources

    @property
    def linear(self) -> list[float]:
        return [reading.best.harm for reading in self.readings]


def validation(
    rows: Sequence[sources.TrainingRow], seed: int, progress: Progress = lambda _: None
) -> Validation:
    linear_rows = sources.for_linear(rows)
    holdout = [r for r in linear_rows if r.harm is not None and split_of(r.text) == "holdout"]
    lookalikes = [
        r
        for r in rows
        if not sources.SOURCES[r.source].linear and r.harm == 0 and split_of(r.text) == "holdout"
    ]
    settings = fit.FitConfig(seed=seed)
    protocol = train.thresholds_for(linear_rows, settings)
    thresholds = {key: protocol[key] for key in ("refuse", "ambiguous")}
    progress(
        f"linear thresholds {thresholds}; {len(holdout)} holdout rows and {len(lookalikes)} "
        "held-out look-alikes; fitting the linear model on its dev rows"
    )
    provisional = fit.fit(
        [r for r in linear_rows if split_of(r.text) == "dev"], settings, PLACEHOLDER, {}
    )
    chosen = [*holdout, *lookalikes]
    return Validation(
        rows=tuple(chosen),
        lookalike=tuple([""] * len(holdout) + [sources.group_of(r.source) for r in lookalikes]),
        readings=tuple(assess.strongest_reading(r.text, provisional) for r in chosen),
        thresholds=thresholds,
    )


def choose(
    judge: encoder_stage.EncoderJudge, found: Validation, progress: Progress = lambda _: None
) -> encoder_band.Choice:
    progress(f"scoring {len(found.rows)} validation rows with the int8 encoder")
    # Scored as a prompt is at run time: one at a time, with the runtime's thread count.
    second = judge.probabilities([reading.best_text for reading in found.readings]).tolist()
    choice = encoder_band.choose(
        found.linear,
        second,
        [int(r.harm == 1) for r in found.rows],
        linear_refuse=found.thresholds["refuse"],
        linear_ambiguous=found.thresholds["ambiguous"],
        lookalike=found.lookalike,
    )
    chosen = choice.chosen
    progress(
        f"band [{chosen.low}, {chosen.high}) reaches {chosen.reach:.1%} of holdout rows; "
        f"harmful refused {choice.linear_only['refused_harmful']:.1%} -> "
        f"{chosen.refused_harmful:.1%}; look-alikes refused "
        f"{choice.linear_only.get('refused_lookalike', 0.0):.1%} -> {chosen.refused_lookalike:.1%}"
    )
    return choice


def summary(found: Validation, choice: encoder_band.Choice) -> dict[str, Any]:
    band = (choice.chosen.low, choice.chosen.high)
    return {
        **encoder_band.summary(choice),
        "lookalike_rows": sum(bool(name) for name in found.lookalike),
        "reach_by_source": _reach_by_source(found.rows, found.linear, band),
    }


def apply(meta: dict[str, Any], choice: encoder_band.Choice) -> None:
    meta["band"] = {"low": choice.chosen.low, "high": choice.chosen.high}
    meta["thresholds"] = {"refuse": choice.chosen.refuse, "ambiguous": choice.chosen.ambiguous}


def _reach_by_source(
    rows: Sequence[sources.TrainingRow], linear: Sequence[float], band: tuple[float, float]
) -> dict[str, dict[str, float]]:
    table: dict[str, list[int]] = {}
    for row, p in zip(rows, linear, strict=True):
        entry = table.setdefault(f"{row.source} ({'harmful' if row.harm else 'benign'})", [0, 0])
        entry[0] += 1
        entry[1] += int(band[0] <= p < band[1])
    return {
        name: {"rows": n, "reach": round(inside / n, 4)}
        for name, (n, inside) in sorted(table.items())
    }


class CorpusChangedError(ValueError):
    """The corpus differs from the one the graph was fine-tuned on."""


def recalibrate(
    folder: Path,
    root: Path | None = None,
    *,
    progress: Progress = lambda _: None,
) -> dict[str, Any]:
    """Choose the band and thresholds of the graph in ``folder`` again; rewrite its
    ``meta.json`` and return it."""
    path = folder / encoder_stage.META
    meta = json.loads(path.read_text(encoding="utf-8"))
    training = meta.get("training", {})
    seed, sample = int(training.get("seed", train.SEED)), training.get("sample")
    progress("reading and deduplicating the training sources")
    built = corpus.build(root, seed=seed)
    rows = train.sample_rows(built.rows, sample, seed) if sample else list(built.rows)
    if training.get("rows_sha256") and rows_digest(rows) != training["rows_sha256"]:
        raise CorpusChangedError(
            "the training corpus differs from the one this encoder was fine-tuned on: "
            "retrain it (sentinel judge train-encoder)"
        )
    found = validation(rows, seed, progress)
    choice = choose(encoder_stage.EncoderJudge.load(folder), found, progress)
    apply(meta, choice)
    training["validation"] = summary(found, choice)
    training["calibration"] = {"command": "sentinel judge calibrate-encoder"}
    meta["training"] = training
    path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return meta
