"""The built-in judge's second stage: a fine-tuned MiniLM read only where the linear model
is unsure.

``data/encoder/`` holds the int8 ONNX graph (``harm.int8.onnx``: word-piece ids and
attention mask in, one harm logit per text out), the ``tokenizer.json`` it was trained
with, and ``meta.json``: the band of the linear model's harm probability inside which the
encoder decides, its own refusal and restriction thresholds (both chosen on the training
sources' validation rows, ``training/encoder_band.py``), and how it was trained
(``sentinel judge train-encoder``). ``assess.assess_request`` asks :meth:`in_band` and,
inside it, :meth:`probability`.

No torch: onnxruntime and the ``tokenizers`` package. The session is built on the first
prompt that reaches the band, once, under a lock (a session serves threads at once). When
the files are missing or onnxruntime cannot load them, the linear verdict stands: the
failure is logged once (``rag_introspection_fallback``, reason ``encoder_unavailable``) and
counted (``rag_introspection_fallbacks_total{reason="encoder_unavailable"}``), never raised.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from sentinel_runtime.observability import events, metrics
from sentinel_runtime.observability.logs import log_event
from sentinel_runtime.pipeline.understand.judge import graph, model

META = "meta.json"
FORMAT = 1
THREADS = 1  # one intra-op thread: faster than two on a busy 2-core machine (bench)
UNAVAILABLE = "encoder_unavailable"
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Band:
    """Linear harm probabilities ``[low, high)`` that the encoder decides."""

    low: float
    high: float

    def __contains__(self, probability: object) -> bool:
        return isinstance(probability, float | int) and self.low <= probability < self.high


class EncoderJudge:
    def __init__(self, folder: Path, meta: dict[str, Any], threads: int = THREADS) -> None:
        if meta.get("format") != FORMAT:
            raise ValueError(f"encoder meta format {meta.get('format')!r}, expected {FORMAT}")
        self.folder = folder
        self.meta = meta
        self.threads = threads
        self.band = Band(float(meta["band"]["low"]), float(meta["band"]["high"]))
        self.thresholds = model.Thresholds(
            refuse=float(meta["thresholds"]["refuse"]),
            ambiguous=float(meta["thresholds"]["ambiguous"]),
            injection=1.0,  # the encoder has no injection head
        )
        self.max_length = int(meta["max_length"])
        self.graph = graph.TextGraph(
            folder / meta["model"], folder / meta["tokenizer"], self.max_length, threads
        )
        self._lock = threading.Lock()
        self._failed = False

    @classmethod
    def load(cls, folder: Path, threads: int = THREADS) -> EncoderJudge:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
        return cls(folder, meta, threads)

    def in_band(self, linear_probability: float) -> bool:
        return linear_probability in self.band

    def probabilities(self, texts: Sequence[str], batch: int = 1) -> np.ndarray:
        """P(harmful) per text (raises if unavailable); ``graph.TextGraph.run`` on batches."""
        logits = self.graph.run(texts, batch)
        return np.array([_sigmoid(float(x)) for x in logits], dtype=np.float64)

    def warm(self) -> bool:
        """Build the session now (a server's startup) rather than on the first prompt in the
        band; False, logged once, when it cannot be built."""
        return self.probability("hello") is not None

    def probability(self, text: str) -> float | None:
        """P(harmful) of one text; ``None`` (logged once) when the model cannot run."""
        if self._failed:
            return None
        try:
            return float(self.probabilities([text])[0])
        except Exception as exc:  # a broken install must not take the judge down
            with self._lock:
                first, self._failed = not self._failed, True
            if first:
                unavailable(f"{type(exc).__name__}: {exc}"[:300])
            return None


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))


def unavailable(detail: str) -> None:
    metrics.INTROSPECTION_FALLBACKS.labels(UNAVAILABLE).inc()
    log_event(
        logger, events.INTROSPECTION_FALLBACK, logging.WARNING, reason=UNAVAILABLE, detail=detail
    )


def shipped_dir() -> Path:
    """Where the package's encoder lives (``sentinel judge train-encoder`` writes it)."""
    return Path(str(resources.files("sentinel_runtime.pipeline.understand.judge") / "data")) / (
        "encoder"
    )


def load_or_none(folder: Path, threads: int = THREADS) -> EncoderJudge | None:
    """The encoder in ``folder``, or ``None`` (logged) when its files are missing or bad."""
    try:
        return EncoderJudge.load(folder, threads)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        unavailable(f"{type(exc).__name__}: {exc}"[:300])
        return None


@cache
def shipped() -> EncoderJudge | None:
    """The encoder shipped in the package (read once; ``None`` when it is missing)."""
    return load_or_none(shipped_dir())
