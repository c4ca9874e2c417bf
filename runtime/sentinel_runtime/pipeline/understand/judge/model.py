"""The built-in judge's linear model: load shipped arrays, score a text.

A model is plain arrays in one ``.npz`` file (never a pickle): ``idf`` (one weight per
feature bucket), ``weights`` (bucket x head), ``bias`` (per head) and ``meta``, a JSON
string naming the heads, the risk categories, the decision thresholds and how the model
was trained (sources with checksums, seed). Heads are independent logistic outputs:
``harm`` (a request for harmful help), ``injection`` (an attempt to override the
assistant's instructions or jailbreak it) and one ``category:<name>`` head per risk
category (a softmax among them, read only when ``harm`` is high).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from sentinel_runtime.pipeline.understand.judge import features

SHIPPED = "judge.npz"


@dataclass(frozen=True)
class Thresholds:
    """Probabilities of the ``harm`` head: refuse from ``refuse``, restrict from ``ambiguous``."""

    refuse: float
    ambiguous: float
    injection: float


@dataclass(frozen=True)
class Scores:
    harm: float
    injection: float
    category: str  # the most probable risk category ("none" when the harm head is low)
    category_probability: float


class LinearJudge:
    def __init__(
        self,
        idf: np.ndarray,
        weights: np.ndarray,
        bias: np.ndarray,
        meta: dict[str, Any],
    ) -> None:
        heads: list[str] = list(meta["heads"])
        if weights.shape != (features.DIMENSIONS, len(heads)) or bias.shape != (len(heads),):
            raise ValueError(
                f"judge arrays do not fit: weights {weights.shape}, bias {bias.shape}, "
                f"{len(heads)} heads over {features.DIMENSIONS} features"
            )
        self.idf = idf.astype(np.float32)
        self.weights = weights.astype(np.float32)
        self.bias = bias.astype(np.float32)
        self.meta = meta
        self.heads = heads
        self._harm = heads.index("harm")
        self._injection = heads.index("injection")
        self._categories = [(i, h.split(":", 1)[1]) for i, h in enumerate(heads) if ":" in h]
        thresholds = meta["thresholds"]
        self.thresholds = Thresholds(
            refuse=float(thresholds["refuse"]),
            ambiguous=float(thresholds["ambiguous"]),
            injection=float(thresholds["injection"]),
        )

    @classmethod
    def load(cls, path: str | Path) -> LinearJudge:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            return cls(data["idf"], data["weights"], data["bias"], meta)

    def logits(self, text: str) -> np.ndarray:
        indices, values = features.vectorise(text, self.idf)
        if indices.size == 0:
            return self.bias.copy()
        return values @ self.weights[indices] + self.bias

    def score(self, text: str) -> Scores:
        logits = self.logits(text)
        harm = _sigmoid(float(logits[self._harm]))
        injection = _sigmoid(float(logits[self._injection]))
        category, probability = "none", 0.0
        if self._categories:
            values = np.array([logits[i] for i, _ in self._categories], dtype=np.float64)
            exp = np.exp(values - values.max())
            probs = exp / exp.sum()
            best = int(probs.argmax())
            category, probability = self._categories[best][1], float(probs[best])
        return Scores(harm, injection, category, probability)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))


def shipped_path() -> Path:
    """Where the package's model lives (``sentinel judge train`` writes it there)."""
    return Path(
        str(resources.files("sentinel_runtime.pipeline.understand.judge") / "data" / SHIPPED)
    )


@cache
def shipped() -> LinearJudge:
    """The model shipped in the package."""
    return LinearJudge.load(shipped_path())
